// Package tpccdoc is TPC-C over the MongoDB wire protocol as py-tpcc's
// MongoDB driver runs it: the nine tables as collections with its indexes,
// the same terminals, keying and mix as the SQL terminals (package
// tpccgen), and its options that change the work: order lines embedded in
// their orders (denormalize), multi-document transactions or none,
// findAndModify for the counters, and the read preference. The tpcc suite
// runs it on document engines (docs/suites/tpcc-documents.md).
package tpccdoc

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/workload"
	g "benchlab/internal/workload/tpcc/tpccgen"
)

// Config is what a document run of TPC-C does, from the tpcc suite's options.
type Config struct {
	Warehouses int
	// Scale is the population per warehouse at py-tpcc's scale factor
	// (tpccgen.ScaleOf(1) is the full one).
	Scale g.Scale
	// MaxTries bounds the tries of a transaction that meets a conflict.
	MaxTries int
	// Denormalize embeds each order's lines in its order document
	// (py-tpcc's denormalize); false keeps an order_line collection.
	Denormalize bool
	// Transactions runs each TPC-C transaction as a multi-document
	// transaction (py-tpcc's notransactions = false).
	Transactions bool
	// FindAndModify reads and updates the counters (d_next_o_id, the year
	// to date amounts) and takes the oldest new order in one findAndModify
	// each, as py-tpcc's findandmodify; false reads then writes.
	FindAndModify bool
	// ReadPreference is the clients' read preference ("" is primary;
	// py-tpcc's secondary_reads is nearest).
	ReadPreference string
}

// CheckReadPreference says what is wrong with a read preference name.
func CheckReadPreference(s string) error {
	if s == "" {
		return nil
	}
	if _, err := readpref.ModeFromString(s); err != nil {
		return fmt.Errorf("%q is not a read preference; want primary, primaryPreferred, secondary, secondaryPreferred or nearest", s)
	}
	return nil
}

// The collections, named as the SQL suite's tables.
const (
	cItem      = "item"
	cWarehouse = "warehouse"
	cDistrict  = "district"
	cCustomer  = "customer"
	cHistory   = "history"
	cStock     = "stock"
	cOrders    = "orders"
	cNewOrder  = "new_order"
	cOrderLine = "order_line"
)

var collections = []string{cItem, cWarehouse, cDistrict, cCustomer, cHistory, cStock, cOrders, cNewOrder, cOrderLine}

// key is an index's fields in order, ascending.
type key []string

func (k key) doc() bson.D {
	d := bson.D{}
	for _, f := range k {
		d = append(d, bson.E{Key: f, Value: 1})
	}
	return d
}

// indexes are py-tpcc's, the first of each collection unique, keyed as
// the SQL suite's primary keys and secondary indexes.
var indexes = map[string][]key{
	cItem:      {{"i_id"}},
	cWarehouse: {{"w_id"}},
	cDistrict:  {{"d_w_id", "d_id"}},
	cCustomer:  {{"c_w_id", "c_d_id", "c_id"}, {"c_w_id", "c_d_id", "c_last", "c_first"}},
	cStock:     {{"s_w_id", "s_i_id"}},
	cOrders:    {{"o_w_id", "o_d_id", "o_id"}, {"o_w_id", "o_d_id", "o_c_id", "o_id"}},
	cNewOrder:  {{"no_w_id", "no_d_id", "no_o_id"}},
	cOrderLine: {{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"}},
}

// database returns a worker's database handle with the configured read
// preference.
func database(d docdb.DB, c *mongo.Client, cfg Config) *mongo.Database {
	o := options.Database()
	if cfg.ReadPreference != "" {
		mode, _ := readpref.ModeFromString(cfg.ReadPreference)
		rp, err := readpref.New(mode)
		if err == nil {
			o.SetReadPreference(rp)
		}
	}
	return c.Database(d.Database(), o)
}

// Load drops the collections, creates the indexes, loads the population
// of clause 4.3.3.1 for cfg.Warehouses, and checks the consistency
// conditions on what it loaded.
func Load(ctx context.Context, db engine.DB, cfg Config, seed uint64, log io.Writer) (workload.Tally, error) {
	var t workload.Tally
	d, err := docdb.Of(db, "tpcc prepare")
	if err != nil {
		return t, err
	}
	client, err := d.Connect(ctx)
	if err != nil {
		return t, fmt.Errorf("tpcc prepare: connect: %w", err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	mdb := client.Database(d.Database())
	for _, name := range collections {
		if err := mdb.Collection(name).Drop(ctx); err != nil {
			return t, fmt.Errorf("prepare: drop %s: %w", name, err)
		}
		if name == cOrderLine && cfg.Denormalize {
			continue
		}
		for i, k := range indexes[name] {
			m := mongo.IndexModel{Keys: k.doc(), Options: options.Index().SetUnique(i == 0)}
			if _, err := mdb.Collection(name).Indexes().CreateOne(ctx, m); err != nil {
				return t, fmt.Errorf("prepare: index %v on %s: %w", k, name, err)
			}
			t.Statements++
		}
	}
	start := time.Now()
	l := &loader{db: mdb, r: g.NewRand(seed), now: start.UTC().Truncate(time.Millisecond), t: &t, cfg: cfg}
	if err := l.all(ctx); err != nil {
		return t, fmt.Errorf("prepare: %w", err)
	}
	el := time.Since(start)
	fmt.Fprintf(log, "prepare: %d warehouse(s) at scale factor %g (%d items, %d customers per district), %d documents loaded in %s (%.0f documents/s)\n", cfg.Warehouses,
		cfg.Scale.Factor, cfg.Scale.Items, cfg.Scale.Customers, t.Rows,
		el.Round(time.Millisecond), float64(t.Rows)/el.Seconds())
	// The backend's own indexes (a ferretdb target's id_index and
	// backend_indexes) built once over the loaded documents.
	if n, err := docdb.IndexIDs(ctx, db); err != nil {
		return t, fmt.Errorf("prepare: %w", err)
	} else if n > 0 {
		fmt.Fprintf(log, "prepare: %d backend indexes added under FerretDB (settings id_index, backend_indexes) in %s\n", n,
			time.Since(start.Add(el)).Round(time.Millisecond))
	}
	if err := Check(ctx, mdb, cfg); err != nil {
		return t, fmt.Errorf("prepare: after the load: %w", err)
	}
	fmt.Fprintf(log, "prepare: consistency conditions 1-4 of TPC-C clause 3.3.2 hold after the load\n")
	return t, nil
}

// CheckRun connects to db and checks the consistency conditions after the
// measured run.
func CheckRun(ctx context.Context, db engine.DB, cfg Config) error {
	d, err := docdb.Of(db, "tpcc consistency")
	if err != nil {
		return err
	}
	client, err := d.Connect(ctx)
	if err != nil {
		return fmt.Errorf("tpcc consistency: connect: %w", err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	return Check(ctx, client.Database(d.Database()), cfg)
}
