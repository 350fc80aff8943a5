package custom

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

func TestParseArg(t *testing.T) {
	r := randgen.NewRand(1)
	for _, c := range []struct {
		spec   string
		lo, hi int64
	}{{"uniform(5, 9)", 5, 9}, {"uniform(-3,-3)", -3, -3}, {"zipf(50)", 1, 50}, {"worker", 7, 7}, {"42", 42, 42}} {
		a, err := parseArg(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		seen := map[int64]bool{}
		for range 2000 {
			v, _ := a.draw(r, 7, nil)
			n, ok := v.(int64)
			if !ok || n < c.lo || n > c.hi {
				t.Fatalf("%s drew %v, want an int64 in [%d, %d]", c.spec, v, c.lo, c.hi)
			}
			seen[n] = true
		}
		if want := min(c.hi-c.lo+1, 5); int64(len(seen)) < want {
			t.Errorf("%s drew %d distinct values in 2000, want at least %d", c.spec, len(seen), want)
		}
	}
	a, _ := parseArg("seq(10)")
	for want := int64(10); want < 13; want++ {
		if v, _ := a.draw(r, 0, nil); v != want {
			t.Fatalf("seq(10) drew %v, want %d", v, want)
		}
	}
	a.reset()
	if v, _ := a.draw(r, 0, nil); v != int64(10) {
		t.Fatalf("seq(10) after reset drew %v, want 10", v)
	}
	a, _ = parseArg("string(12)")
	v1, buf := a.draw(r, 0, nil)
	v2, _ := a.draw(r, 0, buf)
	if s, ok := v1.(string); !ok || len(s) != 12 || v1 == v2 {
		t.Fatalf("string(12) drew %q then %q, want two different 12-character strings", v1, v2)
	}
	a, _ = parseArg("'it''s'")
	if v, _ := a.draw(r, 0, nil); v != "it's" {
		t.Fatalf("'it''s' drew %q", v)
	}
	for _, bad := range []string{"uniform(9, 5)", "uniform(1)", "zipf(0)", "seq()", "string(-1)", "gauss(1, 2)", "hello", "uniform(a, b)"} {
		if _, err := parseArg(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// accounts is a small custom workload: a load of n rows, a point read, a
// transactional transfer and an insert, then a read again.
func accounts(n int64) workload.Params {
	return workload.Params{Seed: 3, Threads: []int{1}, PostwriteWait: 0, Options: &Options{
		Setup: []string{
			"DROP TABLE IF EXISTS accounts",
			"CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(32) NOT NULL, balance BIGINT NOT NULL)",
		},
		// Another dialect's setup, which SQLite must not run.
		SetupFor: map[string][]string{"postgres": {"THIS IS NOT SQL"}},
		Tables:   []string{"accounts"},
		Load: Load{SQL: "INSERT INTO accounts (id, owner, balance) VALUES (?, ?, ?)", Rows: n,
			Args: []string{"seq(1)", "string(8)", "100"}, Batch: 300},
		Tests: []Test{
			{Name: "balance", Statements: []string{"SELECT balance FROM accounts WHERE id = ?"}, Args: []string{"uniform(1, " + itoa(n) + ")"}},
			{Name: "transfer", Transaction: true, Write: true, Statements: []string{
				"UPDATE accounts SET balance = balance - 1 WHERE id = ?",
				"UPDATE accounts SET balance = balance + 1 WHERE id = ?"},
				Args: []string{"zipf(" + itoa(n) + ")", "uniform(1, " + itoa(n) + ")"}},
			{Name: "open", Write: true, Statements: []string{"INSERT INTO accounts (id, owner, balance) VALUES (?, ?, 0)"},
				Args: []string{"seq(" + itoa(n+1) + ")", "worker"}},
			{Name: "total", Statements: []string{"SELECT sum(balance), count(*) FROM accounts"}, Long: true,
				// SQLite's own form returns a second row, so the test sees which ran.
				StatementsFor: map[string][]string{"sqlite": {"SELECT sum(balance), count(*) FROM accounts UNION ALL SELECT 0, 0"}}},
		},
	}}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestPlanShape(t *testing.T) {
	steps, err := Suite{}.Plan(accounts(1000))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	// total is a read after writes: the postwrite cleanup comes before it.
	if got, want := strings.Join(names, " "), "prepare balance transfer open postwrite total"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
	if !steps[2].Write || steps[1].Write || steps[1].Group != Group {
		t.Fatalf("write flags or group wrong: %+v", steps[1:3])
	}
	p := accounts(1000)
	p.ReadTime, p.WriteTime = time.Minute, 2*time.Minute
	opts(p).Tests[0].Threads, opts(p).Tests[0].Time = []int{4, 8}, "5s"
	steps, err = Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if st := steps[1]; st.Duration != 5*time.Second || !slices.Equal(st.Threads, []int{4, 8}) {
		t.Errorf("balance with its own time and threads: %v %v", st.Duration, st.Threads)
	}
	if st := steps[2]; st.Duration != 2*time.Minute || st.Threads != nil {
		t.Errorf("transfer takes write_time and the experiment's threads: %v %v", st.Duration, st.Threads)
	}
	p.Tests = []string{"total", "balance"}
	steps, err = Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[1].Name != "balance" || steps[2].Name != "total" {
		t.Fatalf("selection kept the spec's order? got %d steps starting %q", len(steps), steps[1].Name)
	}
}

func TestCheckNamesTheField(t *testing.T) {
	for _, c := range []struct {
		edit  func(p *workload.Params)
		field string
	}{
		{func(p *workload.Params) { opts(*p).Tests = nil }, "workload.custom.test:"},
		{func(p *workload.Params) { opts(*p).Tests[0].Args = nil }, "workload.custom.test[0].args:"},
		{func(p *workload.Params) { opts(*p).Tests[1].Args[1] = "pick(1)" }, "workload.custom.test[1].args[1]:"},
		{func(p *workload.Params) { opts(*p).Tests[2].Name = "balance" }, "workload.custom.test[2].name:"},
		{func(p *workload.Params) { opts(*p).Tests[2].Name = "a b" }, "workload.custom.test[2].name:"},
		{func(p *workload.Params) { opts(*p).Tests[2].Name = "postload" }, "workload.custom.test[2].name:"},
		{func(p *workload.Params) { opts(*p).Tests[3].Statements = []string{" "} }, "workload.custom.test[3].statements[0]:"},
		{func(p *workload.Params) { opts(*p).Load.SQL = "" }, "workload.custom.load.sql:"},
		{func(p *workload.Params) { opts(*p).Load.Args = opts(*p).Load.Args[:2] }, "workload.custom.load.args:"},
		{func(p *workload.Params) { opts(*p).Load.Batch = -1 }, "workload.custom.load.batch:"},
		{func(p *workload.Params) { opts(*p).Setup = []string{""} }, "workload.custom.setup[0]:"},
		{func(p *workload.Params) { opts(*p).Tables = []string{"a;b"} }, "workload.custom.tables[0]:"},
		{func(p *workload.Params) { p.Tests = []string{"nope"} }, "workload.tests:"},
		{func(p *workload.Params) { opts(*p).Tests[1].Threads = []int{0} }, "workload.custom.test[1].threads:"},
		{func(p *workload.Params) { opts(*p).Tests[1].Time = "soon" }, "workload.custom.test[1].time:"},
		{func(p *workload.Params) { opts(*p).SetupFor = map[string][]string{"oracle": {"x"}} }, "workload.custom.setup_for:"},
		{func(p *workload.Params) { opts(*p).SetupFor = map[string][]string{"mysql": {}} }, "workload.custom.setup_for.mysql:"},
		{func(p *workload.Params) {
			opts(*p).Tests[0].StatementsFor = map[string][]string{"postgres": {"SELECT 1"}}
		}, "workload.custom.test[0].statements_for.postgres:"},
	} {
		p := accounts(100)
		c.edit(&p)
		err := Suite{}.Check(p)
		if err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("want an error starting %q, got %v", c.field, err)
		}
	}
}

// TestRunsOnSQLite runs the plan's steps on a real SQLite database: the load
// inserts its rows with seq() ids, a second prepare (the next cell) loads the
// same ids again, and each test's operation runs its statements with the
// tallies sysbench would count.
func TestRunsOnSQLite(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
	const rows = 1000
	steps, err := Suite{}.Plan(accounts(rows))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for pass := 1; pass <= 2; pass++ {
		tally, err := steps[0].Action(ctx, db, io.Discard)
		if err != nil {
			t.Fatalf("prepare %d: %v", pass, err)
		}
		if tally.Rows != rows {
			t.Fatalf("prepare %d: %d rows, want %d", pass, tally.Rows, rows)
		}
		v, err := admin.Values(ctx, "SELECT count(*), min(id), max(id), sum(balance) FROM accounts")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(v[0], " "); got != "1000 1 1000 100000" {
			t.Fatalf("prepare %d: count, min, max, sum = %s, want 1000 1 1000 100000", pass, got)
		}
		// The insert test draws ids after the load's: each pass starts over.
		if pass == 1 {
			w := worker0(t, steps[3], db, 0)
			for range 5 {
				if _, err := w.Op(ctx); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
		}
	}
	op := func(step workload.Step, id int) workload.Tally {
		w := worker0(t, step, db, id)
		defer w.Close()
		tl, err := w.Op(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step.Name, err)
		}
		return tl
	}
	if tl := op(steps[1], 0); tl.Statements != 1 || tl.Rows != 1 {
		t.Errorf("balance: %+v, want 1 statement and 1 row", tl)
	}
	if tl := op(steps[2], 0); tl.Statements != 4 || tl.Rows != 2 {
		t.Errorf("transfer: %+v, want 4 statements (BEGIN, 2 updates, COMMIT) and 2 rows", tl)
	}
	if tl := op(steps[3], 5); tl.Statements != 1 || tl.Rows != 1 {
		t.Errorf("open: %+v, want 1 statement and 1 row", tl)
	}
	if tl := op(steps[5], 0); tl.Statements != 1 || tl.Rows != 2 {
		t.Errorf("total: %+v, want 1 statement and the 2 rows of its SQLite form", tl)
	}
	v, err := admin.Values(ctx, "SELECT id, owner, sum(balance) OVER () FROM accounts WHERE id > 1000")
	if err != nil {
		t.Fatal(err)
	}
	// Second pass: the insert's seq restarted at 1001, and worker 5 wrote its id.
	if len(v) != 1 || v[0][0] != "1001" || v[0][1] != "5" {
		t.Fatalf("rows after the load: %v, want one row with id 1001 by worker 5", v)
	}
	// A transfer moves a unit between accounts: the total is unchanged.
	if tot, _ := admin.Values(ctx, "SELECT sum(balance) FROM accounts"); tot[0][0] != "100000" {
		t.Fatalf("total balance %s after a transfer, want 100000", tot[0][0])
	}
}

// TestPostloadSettles plans the postload cleanup between the load and the
// first test by default (as the sysbench suite settles its load)
// and none with postload = false, and runs it on SQLite: after the load the
// table has no statistics, after postload ANALYZE has made them.
func TestPostloadSettles(t *testing.T) {
	ctx := context.Background()
	if !defaults().Postload {
		t.Fatal("postload is off by default")
	}
	p := accounts(1000)
	opts(p).Postload = true
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 3 || steps[1].Name != "postload" || steps[1].Action == nil || steps[2].Name != "balance" {
		t.Fatalf("plan starts %q %q; want prepare, postload, balance", steps[0].Name, steps[1].Name)
	}
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
	admin, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	stats := func() string {
		v, err := admin.Values(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
		if err != nil {
			t.Fatal(err)
		}
		if v[0][0] == "0" {
			return "none"
		}
		v, err = admin.Values(ctx, "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'accounts'")
		if err != nil {
			t.Fatal(err)
		}
		return v[0][0]
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := stats(); s != "none" && s != "0" {
		t.Fatalf("statistics of accounts right after the load: %s rows; want none", s)
	}
	if _, err := steps[1].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := stats(); s == "none" || s == "0" {
		t.Errorf("statistics of accounts after postload: %s; want ANALYZE's rows", s)
	}
	opts(p).Postload = false
	steps, err = Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if steps[1].Name != "balance" {
		t.Errorf("postload = false: second step %q, want the first test", steps[1].Name)
	}
}

func worker0(t *testing.T, st workload.Step, db engine.DB, id int) workload.Worker {
	t.Helper()
	w, err := st.NewWorker(context.Background(), db, id, id+1, 9)
	if err != nil {
		t.Fatalf("%s: %v", st.Name, err)
	}
	return w
}

// TestMix runs a mix of a read and an insert on SQLite: each operation runs
// one of them, drawn by weight (3:1), on one connection, and the mix is a
// write test because one of its tests writes.
func TestMix(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
	p := accounts(1000)
	opts(p).Tests = append(opts(p).Tests, Test{Name: "oltp", Mix: map[string]float64{"balance": 3, "open": 1}})
	p.Tests = []string{"oltp"}
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1].Name != "oltp" || !steps[1].Write {
		t.Fatalf("plan: %d steps, second %q write %v; want prepare and the oltp write test", len(steps), steps[1].Name, steps[1].Write)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	w := worker0(t, steps[1], db, 0)
	defer w.Close()
	const ops = 800
	for range ops {
		tl, err := w.Op(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Statements != 1 || tl.Rows != 1 {
			t.Fatalf("an operation of the mix: %+v, want 1 statement and 1 row", tl)
		}
	}
	admin, _ := db.(engine.SQL).Connect(ctx)
	defer admin.Close()
	v, err := admin.Values(ctx, "SELECT count(*) FROM accounts WHERE id > 1000")
	if err != nil {
		t.Fatal(err)
	}
	// 800 draws at 1/4: 200 inserts expected, standard deviation 12.
	n, _ := strconv.Atoi(v[0][0])
	if n < 150 || n > 250 {
		t.Fatalf("%d of %d operations were inserts, want about 200 (weights 3:1)", n, ops)
	}
}

func TestMixErrors(t *testing.T) {
	for _, c := range []struct {
		mix  Test
		want string
	}{
		{Test{Name: "m", Mix: map[string]float64{"nope": 1}}, `no test named "nope"`},
		{Test{Name: "m", Mix: map[string]float64{"balance": 0}}, "want a number > 0"},
		{Test{Name: "m", Mix: map[string]float64{"balance": 1}, Statements: []string{"SELECT 1"}}, "takes no statements"},
	} {
		p := accounts(100)
		opts(p).Tests = append(opts(p).Tests, c.mix)
		err := Suite{}.Check(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "workload.custom.test[4].mix") {
			t.Errorf("%+v: error %v, want workload.custom.test[4].mix ... %s", c.mix, err, c.want)
		}
	}
	p := accounts(100)
	opts(p).Tests = append(opts(p).Tests, Test{Name: "m", Mix: map[string]float64{"balance": 1}},
		Test{Name: "mm", Mix: map[string]float64{"m": 1}})
	if err := (Suite{}).Check(p); err == nil || !strings.Contains(err.Error(), "is a mix itself") {
		t.Errorf("nested mix: %v", err)
	}
}
