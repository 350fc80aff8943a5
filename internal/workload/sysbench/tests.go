package sysbench

import (
	"context"
	"fmt"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

// KRPS is the scan test's headline: thousands of rows scanned per second,
// derived from the mean latency of one full scan (docs/method.md 2.6).
var KRPS = metric.Register(metric.Metric{
	Name: "krps", Unit: "krows/s", Legend: "thousand rows scanned per second", Direction: analysis.HigherIsBetter,
	Value: func(c metric.Counts) float64 {
		if c.Mean <= 0 {
			return 0
		}
		return float64(c.RowsPerOp) / 1000 / c.Mean.Seconds()
	},
	NoSeries: true,
})

// Report groups of docs/method.md 2.7.
const (
	GroupPoint       = "point queries"
	GroupRange       = "range queries without aggregation"
	GroupAggregation = "range queries with aggregation"
	GroupWrites      = "writes"
)

// timing says which configured duration a test runs for (docs/method.md 2.5).
type timing int

const (
	readTime timing = iota
	writeTime
	warmTime
)

// def is one test of the suite: its name, its report group, how long it runs
// and how its workers prepare statements and run one event.
type def struct {
	name    string // unique test name
	family  string // script-level name shared by range variants
	rng     int64  // sysbench --range-size (or points) for this test
	group   string
	write   bool
	timing  timing
	metric  metric.Metric
	summary string
	// stmts returns the SQL the test prepares for table n, in the order the
	// worker uses them; golden files record it per dialect.
	stmts func(d engine.Dialect, n int, rng int64) []string
	// event runs one sysbench event with the statements of table tbl.
	event func(w *worker, ctx context.Context) (workload.Tally, error)
	// unprepared tests build their SQL per event (oltp_insert).
	unprepared bool
}

// pointsIn is the IN-list length of the points-* tests (--random-points=100).
const pointsIn = 100

// hotPoints is the IN-list length of hot-points.
const hotPoints = 100

// inListUpdatePoints is oltp_inlist_update's default --random-points (docs/method.md 2.4).
const inListUpdatePoints = 10

// pointSelects is the number of point selects in a read-only transaction.
const pointSelects = 10

func defs() []def {
	var all []def
	add := func(d def) {
		if d.family == "" {
			d.family = d.name
		}
		all = append(all, d)
	}
	add(def{name: "point-query", rng: 100, group: GroupPoint, summary: "SELECT c ... WHERE id=?",
		stmts: func(d engine.Dialect, n int, _ int64) []string { return []string{pointSelect(n)} },
		event: (*worker).pointQuery})
	for _, r := range []int64{10, 100, 1000} {
		add(def{name: fmt.Sprintf("random-points_range=%d", r), family: "random-points", rng: r, group: GroupPoint,
			summary: fmt.Sprintf("SELECT c ... WHERE id IN (%d random ids)", r),
			stmts: func(d engine.Dialect, n int, r int64) []string {
				return []string{inListSelect(n, "c", "id", int(r))}
			},
			event: (*worker).randomPoints})
	}
	add(def{name: "hot-points", rng: hotPoints, group: GroupPoint, summary: "SELECT c ... WHERE id IN (100 fixed ids)",
		stmts: func(d engine.Dialect, n int, r int64) []string { return []string{inListSelect(n, "c", "id", int(r))} },
		event: (*worker).hotPoints})
	for _, v := range []struct{ name, cols, key string }{
		{"points-covered-pk", "id", "id"}, {"points-notcovered-pk", "id, c", "id"},
		{"points-covered-si", "k", "k"}, {"points-notcovered-si", "k, c", "k"},
	} {
		cols, key := v.cols, v.key
		add(def{name: v.name, rng: pointsIn, group: GroupPoint,
			summary: fmt.Sprintf("SELECT %s ... WHERE %s IN (100 values)", cols, key),
			stmts: func(d engine.Dialect, n int, r int64) []string {
				return []string{inListSelect(n, cols, key, int(r))}
			},
			event: (*worker).randomPoints})
	}
	for _, v := range []struct{ name, cols, key string }{
		{"range-covered-pk", "id", "id"}, {"range-notcovered-pk", "id, c", "id"},
		{"range-covered-si", "k", "k"}, {"range-notcovered-si", "k, c", "k"},
	} {
		cols, key := v.cols, v.key
		add(def{name: v.name, rng: 100, group: GroupRange,
			summary: fmt.Sprintf("SELECT %s ... WHERE %s BETWEEN ? AND ?+100", cols, key),
			stmts: func(d engine.Dialect, n int, r int64) []string {
				return []string{rangeSelect(n, cols, key)}
			},
			event: (*worker).coveredRange})
	}
	add(def{name: "scan", rng: 100, group: GroupRange, metric: KRPS,
		summary: "SELECT * ... WHERE LENGTH(c) < 0 (full scan; reported as thousand rows/s)",
		stmts:   func(d engine.Dialect, n int, _ int64) []string { return []string{scanSelect(n)} },
		event:   (*worker).scan})
	for _, r := range []int64{10, 100, 10000} {
		add(def{name: fmt.Sprintf("read-only_range=%d", r), family: "read-only", rng: r, group: GroupAggregation,
			summary: fmt.Sprintf("transaction: 10 point selects and 4 range queries of %d rows", r),
			stmts:   readOnlyStmts(true, true, true, true), event: (*worker).readOnly})
	}
	for _, v := range []struct {
		name                         string
		simple, sum, order, distinct bool
	}{
		{"read-only-simple", true, false, false, false}, {"read-only-sum", false, true, false, false},
		{"read-only-order", false, false, true, false}, {"read-only-distinct", false, false, false, true},
	} {
		add(def{name: v.name, rng: 1000, group: GroupAggregation,
			summary: "transaction: 10 point selects and one range query of 1000 rows",
			stmts:   readOnlyStmts(v.simple, v.sum, v.order, v.distinct), event: (*worker).readOnly})
	}
	add(def{name: "read-only-count", rng: 1000, group: GroupAggregation, summary: "SELECT count(c) ... WHERE id BETWEEN (1000 rows)",
		stmts: func(d engine.Dialect, n int, _ int64) []string { return []string{countRange(n)} },
		event: (*worker).countRange})
	add(def{name: "update-inlist", rng: 100, group: GroupWrites, write: true, timing: writeTime,
		summary: "UPDATE ... set c=? WHERE id IN (10 ids)",
		stmts: func(d engine.Dialect, n int, _ int64) []string {
			return []string{inListUpdate(n, inListUpdatePoints)}
		},
		event: (*worker).updateInList})
	add(def{name: "update-index", rng: 100, group: GroupWrites, write: true, timing: writeTime,
		summary: "UPDATE ... SET k=k+1 WHERE id=?",
		stmts:   func(d engine.Dialect, n int, _ int64) []string { return []string{indexUpdate(n)} },
		event:   (*worker).updateIndex})
	for _, name := range []string{"update-nonindex", "update-one", "update-zipf"} {
		add(def{name: name, rng: 100, group: GroupWrites, write: true, timing: writeTime,
			summary: "UPDATE ... SET c=? WHERE id=? (" + map[string]string{
				"update-nonindex": "uniform ids", "update-one": "always id 1", "update-zipf": "zipfian ids"}[name] + ")",
			stmts: func(d engine.Dialect, n int, _ int64) []string { return []string{nonIndexUpdate(n)} },
			event: (*worker).updateNonIndex})
	}
	add(def{name: "write-only", rng: 10000, group: GroupWrites, write: true, timing: readTime,
		summary: "transaction: index update, non-index update, delete and re-insert of one id",
		stmts:   writeOnlyStmts, event: (*worker).writeOnly})
	for _, r := range []int64{10, 100} {
		add(def{name: fmt.Sprintf("read-write_range=%d", r), family: "read-write", rng: r, group: GroupWrites,
			write: true, timing: writeTime,
			summary: fmt.Sprintf("transaction: the read-only body (ranges of %d rows) plus the write-only body", r),
			stmts: func(d engine.Dialect, n int, r int64) []string {
				return append(readOnlyStmts(true, true, true, true)(d, n, r), writeOnlyStmts(d, n, r)...)
			},
			event: (*worker).readWrite})
	}
	add(def{name: "delete", rng: 100, group: GroupWrites, write: true, timing: writeTime,
		summary: "DELETE ... WHERE id=? (ids are not re-inserted)",
		stmts:   func(d engine.Dialect, n int, _ int64) []string { return []string{deleteRow(n)} },
		event:   (*worker).deleteRow})
	add(def{name: "insert", rng: 100, group: GroupWrites, write: true, timing: writeTime, unprepared: true,
		summary: "INSERT ... VALUES (k, 'c', 'pad'), not prepared, id from the engine",
		stmts: func(d engine.Dialect, n int, _ int64) []string {
			return []string{insertLiteral(d, n, 4242, "<c>", "<pad>")}
		},
		event: (*worker).insert})
	return all
}

func readOnlyStmts(simple, sum, order, distinct bool) func(d engine.Dialect, n int, r int64) []string {
	return func(d engine.Dialect, n int, _ int64) []string {
		s := []string{pointSelect(n)}
		if simple {
			s = append(s, simpleRange(n))
		}
		if sum {
			s = append(s, sumRange(n))
		}
		if order {
			s = append(s, orderRange(n))
		}
		if distinct {
			s = append(s, distinctRange(n))
		}
		return s
	}
}

func writeOnlyStmts(d engine.Dialect, n int, _ int64) []string {
	return []string{indexUpdate(n), nonIndexUpdate(n), deleteRow(n), insertWithID(n)}
}
