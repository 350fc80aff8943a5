package tpccdoc

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Every keyed document's _id is its TPC-C key as a string ("w:d:c" for a
// customer), and every lookup by key is a filter on _id alone: FerretDB v1
// over SQLite sends as SQL only a filter that is exactly {_id: string or
// ObjectId} (a table scan, unless the target sets id_index) and reads and
// decodes the whole collection for any other (a numeric _id, $in, any
// other field). py-tpcc keys by secondary
// indexes and reads items and stock with $in; docs/suites/tpcc-documents.md
// says what differs.

func itemID(i int) string { return strconv.Itoa(i) }

func warehouseID(w int) string { return strconv.Itoa(w) }

func districtID(w, d int) string { return strconv.Itoa(w) + ":" + strconv.Itoa(d) }

func customerID(w, d, c int) string { return districtID(w, d) + ":" + strconv.Itoa(c) }

func stockID(w, i int) string { return strconv.Itoa(w) + ":" + strconv.Itoa(i) }

func orderID(w, d, o int) string { return districtID(w, d) + ":" + strconv.Itoa(o) }

func lineID(w, d, o, n int) string { return orderID(w, d, o) + ":" + strconv.Itoa(n) }

// byID is the filter {_id: id}.
func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }
