package sysbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/golden"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

// TestGoldenSQL records every statement of every test per dialect, so any
// change to the SQL shows up in review.
func TestGoldenSQL(t *testing.T) {
	for _, d := range []engine.Dialect{engine.SQLite, engine.Postgres, engine.MySQL} {
		t.Run(d.Name, func(t *testing.T) {
			var b strings.Builder
			ddl, err := CreateTable(d, 1)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "-- schema\n%s;\n%s;\n%s ...;\n", ddl, CreateIndex(1), LoadInsertPrefix(1))
			for _, def := range defs() {
				fmt.Fprintf(&b, "\n-- %s (range %d, group %q)\n", def.name, def.rng, def.group)
				for _, q := range def.stmts(d, 1, def.rng) {
					fmt.Fprintf(&b, "%s;\n", d.Bind(q))
				}
			}
			golden.Check(t, filepath.Join("testdata", d.Name+".sql.golden"), b.String())
		})
	}
}

// TestSuiteShape checks the suite has docs/method.md 2.4's 32 reported tests in
// the four report groups, and the run order references only known tests.
func TestSuiteShape(t *testing.T) {
	tests := Suite{}.Tests()
	if len(tests) != 32 {
		t.Fatalf("%d reported tests, want 32", len(tests))
	}
	count := map[string]int{}
	for _, x := range tests {
		count[x.Group]++
	}
	want := map[string]int{GroupPoint: 9, GroupRange: 5, GroupAggregation: 8, GroupWrites: 10}
	for g, n := range want {
		if count[g] != n {
			t.Errorf("group %q has %d tests, want %d", g, count[g], n)
		}
	}
	names := map[string]bool{}
	for _, d := range defs() {
		names[d.name] = true
	}
	for _, e := range runOrder() {
		if !e.postwrite && !names[e.name] {
			t.Errorf("run order names unknown test %q", e.name)
		}
	}
}

func TestPlanSelection(t *testing.T) {
	p := workload.Params{Tables: 2, TableSize: 10000, Threads: []int{1, 4}, ReadTime: time.Second,
		WriteTime: 2 * time.Second, WarmTime: 3 * time.Second, PostwriteWait: 0}
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	full := strings.Join(names, " ")
	for _, w := range []string{"prepare point-query.warm postwrite scan.warmpre", "read-write_range=100 postwrite scan.warm scan",
		"points-covered-si.warm points-covered-si", "delete insert"} {
		if !strings.Contains(full, w) {
			t.Errorf("run order lacks %q:\n%s", w, full)
		}
	}
	if len(steps) != 1+2+6+32 {
		t.Errorf("%d steps, want 41 (load, 2 cleanups, 6 warm-ups, 32 tests)", len(steps))
	}
	for _, s := range steps {
		switch s.Name {
		case "update-index":
			if s.Duration != 2*time.Second || s.Threads != nil {
				t.Errorf("update-index: duration %s threads %v", s.Duration, s.Threads)
			}
		case "write-only":
			if s.Duration != time.Second {
				t.Errorf("write-only uses the read time (docs/method.md 2.5), got %s", s.Duration)
			}
		}
	}
	// Warm-ups as all_small.sh runs them: the scans for 60 s (warm_time),
	// the others for readsecs; all at every thread count but
	// point-query.warm, which runs one thread per table.
	warm := map[string]struct {
		dur     time.Duration
		threads []int
	}{
		"point-query.warm": {time.Second, []int{2}}, "scan.warmpre": {3 * time.Second, nil},
		"point-query.pre": {time.Second, nil}, "range-notcovered-si.pre": {time.Second, nil},
		"scan.warm": {3 * time.Second, nil}, "points-covered-si.warm": {time.Second, nil},
	}
	seen := 0
	for _, s := range steps {
		if !s.Warm || s.Action != nil {
			continue
		}
		w, ok := warm[s.Name]
		if !ok {
			t.Errorf("unexpected warm-up %s", s.Name)
			continue
		}
		seen++
		if s.Duration != w.dur || !slices.Equal(s.Threads, w.threads) {
			t.Errorf("%s: %s at threads %v, want %s at %v (nil: every thread count)", s.Name, s.Duration, s.Threads, w.dur, w.threads)
		}
	}
	if seen != len(warm) {
		t.Errorf("%d warm-ups, want %d", seen, len(warm))
	}
	p.Tests = []string{"random-points", "update-one", "point-query"}
	steps, err = Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, s := range steps {
		names = append(names, s.Name)
	}
	got := strings.Join(names, " ")
	want := "prepare postload update-one postwrite point-query random-points_range=10 random-points_range=100 random-points_range=1000"
	if got != want {
		t.Errorf("selected plan\n got %s\nwant %s", got, want)
	}
	p.Tests = []string{"nope"}
	if _, err := (Suite{}).Plan(p); err == nil || !strings.Contains(err.Error(), "workload.tests") {
		t.Errorf("unknown test: err = %v", err)
	}
}

// expectation checks one event's tally.
type expectation func(p workload.Params, tl workload.Tally) error

func exact(stmts int, rows int64) expectation {
	return func(_ workload.Params, tl workload.Tally) error {
		if tl.Statements != stmts || tl.Rows != rows {
			return fmt.Errorf("statements %d rows %d, want %d and %d", tl.Statements, tl.Rows, stmts, rows)
		}
		return nil
	}
}

func between(stmts int, lo, hi int64) expectation {
	return func(_ workload.Params, tl workload.Tally) error {
		if tl.Statements != stmts || tl.Rows < lo || tl.Rows > hi {
			return fmt.Errorf("statements %d rows %d, want %d and rows in [%d, %d]", tl.Statements, tl.Rows, stmts, lo, hi)
		}
		return nil
	}
}

// TestEveryTestRuns loads a tiny database and runs every test's events on
// real SQLite, checking statements counted and rows returned or changed.
func TestEveryTestRuns(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite", Settings: map[string]string{}})
	p := workload.Params{Tables: 2, TableSize: 2000, Threads: []int{1}, Seed: 42}
	if _, err := loadStep(p).Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	// sum of a range of 10 returns one row, the others up to 10 each.
	ro := func(rng int64, ranges int) expectation {
		return func(_ workload.Params, tl workload.Tally) error {
			if tl.Statements != 2+10+ranges {
				return fmt.Errorf("statements %d, want %d", tl.Statements, 2+10+ranges)
			}
			if tl.Rows < 10 || tl.Rows > 10+int64(ranges)*rng {
				return fmt.Errorf("rows %d out of range", tl.Rows)
			}
			return nil
		}
	}
	want := map[string]expectation{
		"point-query":              exact(1, 1),
		"random-points_range=10":   between(1, 8, 10),
		"random-points_range=100":  between(1, 90, 100),
		"random-points_range=1000": between(1, 500, 1000),
		"hot-points":               exact(1, 100),
		"points-covered-pk":        between(1, 90, 100),
		"points-notcovered-pk":     between(1, 90, 100),
		"points-covered-si":        between(1, 0, 2000),
		"points-notcovered-si":     between(1, 0, 2000),
		"range-covered-pk":         between(1, 1, 101),
		"range-notcovered-pk":      between(1, 1, 101),
		"range-covered-si":         between(1, 0, 2000),
		"range-notcovered-si":      between(1, 0, 2000),
		"scan":                     exact(1, 0),
		"read-only_range=10":       ro(10, 4),
		"read-only_range=100":      ro(100, 4),
		"read-only_range=10000":    ro(2000, 4),
		"read-only-simple":         ro(1000, 1),
		"read-only-sum":            ro(1, 1),
		"read-only-order":          ro(1000, 1),
		"read-only-distinct":       ro(1000, 1),
		"read-only-count":          exact(1, 1),
		"update-inlist":            between(1, 8, 10),
		"update-index":             exact(1, 1),
		"update-nonindex":          exact(1, 1),
		"update-one":               exact(1, 1),
		"update-zipf":              exact(1, 1),
		"write-only":               exact(6, 4),
		"read-write_range=10":      between(20, 10+4+4, 10+4*10+4),
		"read-write_range=100":     between(20, 10+4+4, 10+4*100+4),
		"delete":                   between(1, 0, 1),
		"insert":                   exact(1, 1),
	}
	for _, d := range defs() {
		check, ok := want[d.name]
		if !ok {
			t.Errorf("no expectation for %s", d.name)
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			w, err := newWorker(ctx, &d, p, db, 0, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			bad := 0
			total := int64(0)
			for i := 0; i < 30; i++ {
				tl, err := w.Op(ctx)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				total += tl.Rows
				if err := check(p, tl); err != nil {
					bad++
					if bad <= 3 {
						t.Errorf("event %d: %v", i, err)
					}
				}
			}
			if strings.HasSuffix(d.name, "-si") && total == 0 {
				t.Errorf("30 events over the secondary index returned no rows")
			}
		})
	}
	// update-one always changes id 1, and delete removed rows for good.
	conn, _ := db.(engine.SQL).Connect(ctx)
	defer conn.Close()
	for n := 1; n <= 2; n++ {
		rows, err := conn.Query(ctx, fmt.Sprintf("SELECT id FROM sbtest%d", n))
		if err != nil {
			t.Fatal(err)
		}
		if rows < 2000-30 || rows > 2000+30 {
			t.Errorf("sbtest%d has %d rows after 30 deletes and 30 inserts over 2 tables", n, rows)
		}
	}
}

// TestLoadDistribution checks the load fills every table with table_size
// rows of the right shape, and that k is uniform in [1, N] by default, as
// sysbench 1.1 loads it (docs/method.md 2.2): N draws leave N(1-(1-1/N)^N), about
// 0.632 N, distinct values. sysbench 1.0.20's "special" distribution, kept as
// an option, leaves far fewer, with 1% of the values holding ~3/4 of the rows.
func TestLoadDistribution(t *testing.T) {
	const n = 20000
	want := n * (1 - math.Pow(1-1.0/n, n)) // 12642
	for _, kd := range []string{"", KUniform, KSpecial} {
		t.Run("k="+kd, func(t *testing.T) {
			ctx := context.Background()
			db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
			p := workload.Params{Tables: 1, TableSize: n, Seed: 1, Options: &Options{KRandType: kd}}
			tl, err := loadStep(p).Action(ctx, db, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if tl.Rows != n {
				t.Fatalf("loaded %d rows, want %d", tl.Rows, n)
			}
			conn, _ := db.(engine.SQL).Connect(ctx)
			defer conn.Close()
			v, err := conn.Values(ctx, "SELECT count(DISTINCT k), min(k), max(k) FROM sbtest1")
			if err != nil {
				t.Fatal(err)
			}
			distinct, _ := strconv.ParseFloat(v[0][0], 64)
			lo, _ := strconv.Atoi(v[0][1])
			hi, _ := strconv.Atoi(v[0][2])
			if lo < 1 || hi > n {
				t.Errorf("k spans [%d, %d], want within [1, %d]", lo, hi, n)
			}
			// 1% of the values (the 200 most frequent) hold the rows' share.
			top, err := conn.Query(ctx, "SELECT k FROM sbtest1 WHERE k IN (SELECT k FROM sbtest1 GROUP BY k ORDER BY count(*) DESC LIMIT 200)")
			if err != nil {
				t.Fatal(err)
			}
			share := float64(top) / n
			t.Logf("k %q: %.0f distinct values of %d rows (uniform expectation %.0f), 1%% of values hold %.3f of rows",
				kd, distinct, n, want, share)
			if kd == KSpecial {
				if distinct > 0.5*want {
					t.Errorf("special: %.0f distinct k values, want far fewer than uniform's %.0f", distinct, want)
				}
				if share < 0.6 || share > 0.9 {
					t.Errorf("special: 1%% of k values hold %.2f of the rows, want about 0.75", share)
				}
			} else {
				// The count's standard deviation is about 0.24 sqrt(N) = 34.
				if math.Abs(distinct-want) > 0.01*want {
					t.Errorf("uniform: %.0f distinct k values, want %.0f within 1%%", distinct, want)
				}
				if share > 0.1 {
					t.Errorf("uniform: 1%% of k values hold %.2f of the rows, want about 0.03", share)
				}
			}
			n, err := conn.Query(ctx, "SELECT 1 FROM sbtest1 WHERE length(c) = 119 AND length(pad) = 59 AND typeof(c) = 'text'")
			if err != nil || n != 20000 {
				t.Errorf("rows with 119-char c and 59-char pad: %d (%v)", n, err)
			}
		})
	}
}

// TestKRandTypeChecked checks an unknown distribution of k is an error
// naming the field.
func TestKRandTypeChecked(t *testing.T) {
	err := Suite{}.Check(workload.Params{Tables: 1, TableSize: 1000, Options: &Options{KRandType: "gaussian"}})
	if err == nil || !strings.HasPrefix(err.Error(), "workload.sysbench.k_rand_type: ") || !strings.Contains(err.Error(), "special") {
		t.Errorf("k_rand_type gaussian: %v", err)
	}
	if d := (Suite{}).Describe(workload.Params{Tables: 1, TableSize: 1000, Options: &Options{KRandType: KSpecial}}); !strings.Contains(d, "k special") {
		t.Errorf("header %q does not name k's distribution", d)
	}
}

// TestUnprepared runs events with prepared statements turned off
// (--db-ps-mode=disable): same statements and rows, sent as text.
func TestUnprepared(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
	p := workload.Params{Tables: 1, TableSize: 2000, Threads: []int{1}, Seed: 3, Unprepared: true}
	if _, err := loadStep(p).Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs() {
		if d.name != "point-query" && d.name != "read-only_range=10" {
			continue
		}
		w, err := newWorker(ctx, &d, p, db, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := w.stmts[0][0].(engine.TextStmt); !ok {
			t.Errorf("%s: statement is %T, want engine.TextStmt", d.name, w.stmts[0][0])
		}
		tl, err := w.Op(ctx)
		w.Close()
		if err != nil || tl.Rows < 1 || (d.name == "point-query" && tl.Rows != 1) {
			t.Errorf("%s unprepared: %+v %v", d.name, tl, err)
		}
	}
}

// TestUnknownDialect refuses to spell DDL for a dialect the suite does not
// know, instead of handing it SQLite's.
func TestUnknownDialect(t *testing.T) {
	_, err := CreateTable(engine.Dialect{Name: "oracle"}, 1)
	var ue *engine.UnknownDialectError
	if !errors.As(err, &ue) || ue.Dialect != "oracle" || !strings.Contains(err.Error(), "mysql, postgres, sqlite") {
		t.Errorf("got %v, want an unknown-dialect error listing the known ones", err)
	}
}

// TestKRPS checks the scan metric the suite declares: (rows per scan / 1000)
// over the mean latency of one scan, found by its stored name.
func TestKRPS(t *testing.T) {
	m := metric.Of("krps")
	// (10000 rows / 1000) / 0.005 s = 2000 thousand rows per second.
	if got := m.Value(metric.Counts{RowsPerOp: 10000, Mean: 5 * time.Millisecond}); got < 1999.99 || got > 2000.01 {
		t.Errorf("krps = %v, want 2000", got)
	}
	if m.Name != KRPS.Name || m.Direction != analysis.HigherIsBetter {
		t.Errorf("metric %q direction %v", m.Name, m.Direction)
	}
}

// TestMyRocksDDL: the MySQL table names the dialect's storage engine in
// lower case, as sysbench's --mysql-storage-engine does.
func TestMyRocksDDL(t *testing.T) {
	rocks := engine.MySQL
	rocks.TableEngine = "ROCKSDB"
	for d, want := range map[*engine.Dialect]string{&rocks: "/*! ENGINE = rocksdb */", &engine.MySQL: "/*! ENGINE = innodb */"} {
		ddl, err := CreateTable(*d, 3)
		if err != nil || !strings.HasPrefix(ddl, "CREATE TABLE sbtest3(") || !strings.HasSuffix(ddl, want) {
			t.Errorf("%s DDL %q %v, want ending %q", d.StorageEngine(), ddl, err, want)
		}
	}
}
