package insertbench

import (
	"fmt"
	"strconv"
	"strings"

	"benchlab/internal/engine"
)

// TableName is client n's table (1-based), as iq.sh names them.
func TableName(n int) string { return "pi" + strconv.Itoa(n) }

// createTable spells docs/method.md 1.2's CREATE TABLE per dialect for table t.
// MySQL's names the dialect's storage engine (InnoDB, or ROCKSDB on a MyRocks
// target).
var createTable = map[string]func(d engine.Dialect, t, cols string) []string{
	"mysql": func(d engine.Dialect, t, cols string) []string {
		return []string{fmt.Sprintf("create table %s ( transactionid bigint not null auto_increment, "+cols+
			", primary key (transactionid) ) engine=%s", t, "datetime", d.StorageEngine())}
	},
	"postgres": func(_ engine.Dialect, t, cols string) []string {
		return []string{
			fmt.Sprintf("create table %s ( transactionid bigserial primary key, "+cols+" )", t, "timestamp without time zone"),
			fmt.Sprintf("alter sequence %s_transactionid_seq cache 1000", t),
		}
	},
	// SQLite: an INTEGER PRIMARY KEY is the rowid, assigned ascending.
	"sqlite": func(_ engine.Dialect, t, cols string) []string {
		return []string{fmt.Sprintf("create table %s ( transactionid integer primary key, "+cols+" )", t, "datetime")}
	},
}

// CreateTable is docs/method.md 1.2's CREATE TABLE for a dialect, without
// secondary indexes; PostgreSQL also gets the sequence cache statement. A
// dialect the suite does not spell is an error.
func CreateTable(d engine.Dialect, t string) ([]string, error) {
	cols := "dateandtime %s, cashregisterid int not null, customerid int not null, productid int not null, " +
		"price int not null, data varchar(4000)"
	f, err := engine.Spell("insert CREATE TABLE", d, createTable)
	if err != nil {
		return nil, err
	}
	return f(d, t, cols), nil
}

// index is one of docs/method.md 1.2's secondary indexes.
type index struct{ suffix, cols string }

var indexes = []index{
	{"marketsegment", "productid, customerid, price"},
	{"registersegment", "cashregisterid, customerid, price"},
	{"pdc", "price, dateandtime, customerid"},
}

// CreateIndexes builds the three secondary indexes: one ALTER TABLE where
// the dialect adds several indexes in one (MySQL's InnoDB), one CREATE
// INDEX per index elsewhere (MyRocks too: one statement per index, as
// docs/method.md 1.2 says).
func CreateIndexes(d engine.Dialect, t string) []string {
	if d.AlterAddIndex {
		parts := make([]string, len(indexes))
		for i, x := range indexes {
			parts[i] = fmt.Sprintf("add index %s_%s (%s)", t, x.suffix, x.cols)
		}
		return []string{fmt.Sprintf("alter table %s %s", t, strings.Join(parts, ", "))}
	}
	out := make([]string, len(indexes))
	for i, x := range indexes {
		out[i] = fmt.Sprintf("create index %s_%s on %s (%s)", t, x.suffix, t, x.cols)
	}
	return out
}

// InsertPrefix starts the multi-row INSERT; rows follow in this column order.
func InsertPrefix(t string) string {
	return "insert into " + t + " (dateandtime,cashregisterid,customerid,productid,price,data) values "
}

// DeleteSQL removes the oldest rows from transactionid ? on, rpc of them
// (docs/method.md 1.6): ORDER BY ... LIMIT where the dialect takes it (MySQL),
// a subquery elsewhere (SQLite has no DELETE ... LIMIT in its default build).
func DeleteSQL(d engine.Dialect, t string, rpc int) string {
	if d.DeleteLimit {
		return fmt.Sprintf("delete from %s where transactionid >= ? order by transactionid asc limit %d", t, rpc)
	}
	return d.Bind(fmt.Sprintf("delete from %s where transactionid in (select transactionid from %s "+
		"where transactionid >= ? order by transactionid asc limit %d)", t, t, rpc))
}

// rowsPerQuery is iibench.py's rows_per_query default, which np.sh keeps.
const rowsPerQuery = 10

// rangeQuery is one of docs/method.md 1.7's covering index range queries; its
// parameter is uniform in [0, max).
type rangeQuery struct {
	index string
	max   int64
	sql   func(d engine.Dialect, t string) string
}

var rangeQueries = []rangeQuery{
	{"marketsegment", products, func(d engine.Dialect, t string) string {
		return fmt.Sprintf("SELECT productid, customerid, price FROM %s%s WHERE (productid >= ?) "+
			"ORDER BY productid, customerid, price LIMIT %d", t, force(d, t, "marketsegment"), rowsPerQuery)
	}},
	{"registersegment", cashRegisters, func(d engine.Dialect, t string) string {
		return fmt.Sprintf("SELECT cashregisterid,customerid,price FROM %s%s WHERE (cashregisterid > ?) "+
			"ORDER BY cashregisterid, customerid, price LIMIT %d", t, force(d, t, "registersegment"), rowsPerQuery)
	}},
	{"pdc", maxPrice, func(d engine.Dialect, t string) string {
		return fmt.Sprintf("SELECT price,dateandtime,customerid FROM %s%s WHERE (price >= ?) "+
			"ORDER BY price, dateandtime, customerid LIMIT %d", t, force(d, t, "pdc"), rowsPerQuery)
	}},
}

// force is the index hint of docs/method.md 1.7 (MySQL's FORCE INDEX); dialects
// without hints get none.
func force(d engine.Dialect, t, suffix string) string {
	return d.ForceIndex(t + "_" + suffix)
}

// PointSQL is the point query of docs/method.md 1.7: rows_per_query ids.
func PointSQL(d engine.Dialect, t string) string {
	marks := strings.TrimSuffix(strings.Repeat("?,", rowsPerQuery), ",")
	return d.Bind(fmt.Sprintf("SELECT transactionid, productid, data FROM %s WHERE transactionid in (%s)", t, marks))
}

// MinSQL and MaxSQL read the delete frontier and the newest id.
func MinSQL(t string) string { return "select min(transactionid) from " + t }

// MaxSQL reads the newest id, the point queries' upper bound.
func MaxSQL(t string) string { return "select max(transactionid) from " + t }
