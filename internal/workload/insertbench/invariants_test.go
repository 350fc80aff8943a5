package insertbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	_ "benchlab/internal/engine/mysql"
	_ "benchlab/internal/engine/postgres"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/report/section"
	"benchlab/internal/runner"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

func params() workload.Params {
	return workload.Params{PostwriteWait: 0, Seed: 11, Options: &Options{Clients: 2, Rows: 4000, Inserts: 2000,
		QueryTime: workload.Duration{Duration: 5 * time.Second}, Rates: []int{100},
		// The invariants include the background rate within 5%: the "even"
		// schedule catches up after a stall of a loaded machine, where
		// iibench pacing (tested with a stalling worker) would fall short.
		Pacing: "even"}}
}

// TestCheckNamesTheField rejects each kind of bad size with the spec field.
func TestCheckNamesTheField(t *testing.T) {
	for field, mod := range map[string]func(*workload.Params){
		"workload.insert.clients":    func(p *workload.Params) { opts(*p).Clients = 0 },
		"workload.insert.rows":       func(p *workload.Params) { opts(*p).Rows = 199 },
		"workload.insert.inserts":    func(p *workload.Params) { opts(*p).Inserts = 499 },
		"workload.insert.query_time": func(p *workload.Params) { opts(*p).QueryTime = workload.Duration{} },
		"workload.insert.rates":      func(p *workload.Params) { opts(*p).Rates = []int{100, -5} },
		"workload.tests":             func(p *workload.Params) { p.Tests = []string{"qp777"} },
	} {
		p := params()
		mod(&p)
		err := Suite{}.Check(p)
		var fe *workload.FieldError
		if !errors.As(err, &fe) || "workload."+fe.Field != field || !strings.HasPrefix(err.Error(), field+": ") {
			t.Errorf("%s: got %v, want a field error starting with the field", field, err)
		}
	}
	p := params()
	opts(p).Rates = nil
	if err := (Suite{}).Check(p); err == nil || !strings.HasPrefix(err.Error(), "workload.insert.rates: ") {
		t.Errorf("empty rates: %v", err)
	}
	if err := (Suite{}).Check(params()); err != nil {
		t.Errorf("good params rejected: %v", err)
	}
}

// TestPlanOrder checks docs/method.md 1.8's order and sizes, and a selection.
func TestPlanOrder(t *testing.T) {
	p := params()
	opts(p).Rates = []int{100, 500, 1000}
	opts(p).Inserts = 2003 // rounding: l.i1 round(1602.4) = 1602, l.i2 round(400.6) = 401
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	want := "setup l.i0 l.x l.i1 l.i2 cleanup qr100 qp100 qr500 qp500 qr1000 qp1000"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("plan %q, want %q", got, want)
	}
	// Per client: l.i1 1602/2 = 801 rows in batches of 50 = 16; l.i2 401/2 = 200 in batches of 5 = 40.
	if ops := steps[3].Roles[0].Ops; ops != 2*16 {
		t.Errorf("l.i1 insert ops %d, want 32", ops)
	}
	if ops := steps[4].Roles[0].Ops; ops != 2*40 {
		t.Errorf("l.i2 insert ops %d, want 80", ops)
	}
	q := steps[10] // qr1000: 5 s x 1000 rows/s / 50 rows per commit = 100 batches per client
	if q.Roles[1].Ops != 200 || q.Roles[1].TargetRate != 2000 || q.Roles[1].Rate != 40 || q.MaxDuration != 10*time.Second {
		t.Errorf("qr1000 insert role %+v, max %s", q.Roles[1], q.MaxDuration)
	}
	p.Tests = []string{"qp100"}
	steps, _ = Suite{}.Plan(p)
	names = nil
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "setup l.i0 l.x qp100" {
		t.Errorf("selection plan %q, want setup l.i0 l.x qp100 (no churn, so no cleanup)", got)
	}
}

var rowRE = regexp.MustCompile(`\('(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)',(\d+),(\d+),(\d+),(\d+)\.00,'([A-Za-z0-9+/]*)'\)`)

// TestRowGeneration checks docs/method.md 1.3's value ranges, the data column's
// shape and one timestamp per batch.
func TestRowGeneration(t *testing.T) {
	g := newRowGen(3)
	sql := g.insert(InsertPrefix("pi1"), 500, time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local))
	if !strings.HasPrefix(sql, "insert into pi1 (dateandtime,cashregisterid,customerid,productid,price,data) values (") {
		t.Fatalf("prefix: %.120s", sql)
	}
	rows := rowRE.FindAllStringSubmatch(sql, -1)
	if len(rows) != 500 {
		t.Fatalf("%d rows parsed, want 500", len(rows))
	}
	limits := []int64{cashRegisters, customers, products, maxPrice}
	lengths := map[int]int{}
	for _, r := range rows {
		if r[1] != "2026-01-02 03:04:05" {
			t.Fatalf("timestamp %q", r[1])
		}
		for i, lim := range limits {
			if v, _ := strconv.ParseInt(r[2+i], 10, 64); v < 0 || v >= lim {
				t.Fatalf("column %d value %d out of [0, %d)", i, v, lim)
			}
		}
		data := r[6]
		n := len(data)
		rnd := int(float64(n) * 0.75 * dataRandomPct / 100)
		if n < 10 || n > 20 || strings.Trim(data[:n-rnd], "a") != "" {
			t.Fatalf("data %q: want 10-20 characters, the first %d of them 'a'", data, n-rnd)
		}
		lengths[n]++
	}
	if len(lengths) != 11 {
		t.Errorf("500 rows used %d data lengths, want all 11 of 10-20", len(lengths))
	}
}

// runStep runs one planned step on db: an action, or a measured step at the
// experiment's client count.
func runStep(t *testing.T, ctx context.Context, db engine.DB, st workload.Step, p workload.Params) []*store.Result {
	t.Helper()
	if st.Action != nil {
		if _, err := st.Action(ctx, db, io.Discard); err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		return nil
	}
	rs, err := runner.MeasureRoles(ctx, db, st, opts(p).Clients, p.Seed, runner.Options{})
	if err != nil {
		t.Fatalf("%s: %v", st.Name, err)
	}
	for _, r := range rs {
		if r.Errors > 0 {
			t.Errorf("%s/%s: %d errors, first %v", st.Name, r.Role.Name, r.Errors, r.ErrorSamples)
		}
	}
	return rs
}

func roleOf(rs []*store.Result, name string) *store.Result {
	for _, r := range rs {
		if r.Role.Name == name {
			return r
		}
	}
	return nil
}

func count(t *testing.T, ctx context.Context, c engine.Conn, table string) int64 {
	t.Helper()
	v, err := readID(ctx, c, "select count(*) from "+table)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func indexNames(t *testing.T, ctx context.Context, c engine.Conn, d engine.Dialect, table string) string {
	t.Helper()
	q := map[string]string{
		"sqlite":   "select name from sqlite_master where type = 'index' and tbl_name = '" + table + "'",
		"postgres": "select indexname from pg_indexes where tablename = '" + table + "'",
		"mysql":    "select distinct index_name from information_schema.statistics where table_schema = database() and table_name = '" + table + "'",
	}[d.Name]
	rows, err := c.Values(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, strings.ToLower(r[0]))
	}
	return strings.Join(names, " ")
}

// less compares two result rows column by column, numerically where both
// values are numbers.
func less(a, b []string) int {
	for i := range a {
		x, ex := strconv.ParseFloat(a[i], 64)
		y, ey := strconv.ParseFloat(b[i], 64)
		switch {
		case ex == nil && ey == nil && x != y:
			if x < y {
				return -1
			}
			return 1
		case (ex != nil || ey != nil) && a[i] != b[i]:
			return strings.Compare(a[i], b[i])
		}
	}
	return 0
}

// checkInvariants runs the whole sequence on an engine and checks what the
// Insert Benchmark promises: the row count stays constant through the churn
// and query steps (deletes keep up), the indexes exist, every planned insert
// is done and matched by a delete, queries fetch the rows they should in
// index order, the background rate is met when it is far below capacity, and
// an impossible rate ends at the time cap as an SLA failure.
func checkInvariants(t *testing.T, engineName string, settings map[string]string) {
	ctx := context.Background()
	drv, ok := engine.Lookup(engineName)
	if !ok {
		t.Fatalf("engine %s not registered", engineName)
	}
	logs := t.TempDir() // the server's log is kept here, not in the user's cache dir
	db, err := drv.Open(ctx, engine.Target{Name: "t", Engine: engineName, Settings: settings,
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqldb := db.(engine.SQL)
	d := sqldb.Dialect()
	c, err := sqldb.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := params()
	// The rate check below is about the inserter and deleter keeping up.
	// The original client's pacing (the default) makes the last insert at
	// the end of query_time, so its service time and its delete's add to a
	// 5 s step (0.95 of the rate measured on PostgreSQL on a loaded machine
	// here); the even schedule ends on time. TestPacingUnderStall and the
	// runner's tests cover the default pacing.
	opts(p).Pacing = "even"
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	perTable := opts(p).Rows/int64(opts(p).Clients) + rpcLoad // l.i0 rows plus l.x's batch
	for _, st := range steps {
		rs := runStep(t, ctx, db, st, p)
		if st.Name == "l.i0" {
			// 4000 rows of about 60 bytes, as the engine counts its size.
			n, err := db.(engine.Sizer).DBSize(ctx)
			if err != nil || n < 4000*40 {
				t.Errorf("%s: database size after l.i0: %d bytes, %v", engineName, n, err)
			}
		}
		if st.Action != nil || st.Name == "l.i0" {
			continue
		}
		for n := 1; n <= opts(p).Clients; n++ {
			tbl := TableName(n)
			if got := count(t, ctx, c, tbl); got != perTable {
				t.Errorf("%s: %s has %d rows after %s, want %d (deletes must keep up with inserts)", engineName, tbl, got, st.Name, perTable)
			}
		}
		ins, del := roleOf(rs, "insert"), roleOf(rs, "delete")
		switch {
		case st.Name == "l.x":
			names := indexNames(t, ctx, c, d, "pi1")
			for _, x := range indexes {
				if !strings.Contains(names, "pi1_"+x.suffix) {
					t.Errorf("%s: index pi1_%s missing after l.x: %s", engineName, x.suffix, names)
				}
			}
			if r := rs[0]; r.Rows != perTable*int64(opts(p).Clients) {
				t.Errorf("%s: l.x reports %d indexed rows, want %d", engineName, r.Rows, perTable*int64(opts(p).Clients))
			}
		case ins != nil:
			rpc := map[string]int64{"l.i1": rpcBig, "l.i2": rpcSmall}[st.Name]
			if rpc == 0 {
				rpc = rpcBig
			}
			if ins.Rows != st.Roles[roleIndex(st, "insert")].Ops*rpc || del.Rows != ins.Rows {
				t.Errorf("%s %s: inserted %d, deleted %d rows, want %d each", engineName, st.Name, ins.Rows, del.Rows,
					st.Roles[roleIndex(st, "insert")].Ops*rpc)
			}
		}
		if q := roleOf(rs, "query"); q != nil {
			perQuery := float64(q.Rows) / float64(q.Events)
			want := 9.9
			if strings.HasPrefix(st.Name, "qp") {
				// Point queries pick ids in [frontier, max): expect the share
				// of live ids there (PostgreSQL's sequence cache of 1000
				// leaves a gap per connection, as in the original), and
				// allow 5% for the race with the deleter.
				lo, _ := readID(ctx, c, MinSQL("pi1"))
				hi, _ := readID(ctx, c, MaxSQL("pi1"))
				density := float64(count(t, ctx, c, "pi1")) / float64(hi-lo+1)
				want = 0.95 * rowsPerQuery * density
			}
			// The average is only a fair test over enough queries: a busy
			// machine can leave the querier a handful in 5 s, and one query
			// near the end of the ids then weighs too much. With fewer than
			// 100, the bounds that hold per query: some rows, at most 10 each.
			switch {
			case q.Events == 0:
				t.Errorf("%s %s: no query completed", engineName, st.Name)
			case q.Events < 100 && (q.Rows == 0 || perQuery > 10):
				t.Errorf("%s %s: %d queries fetched %.2f rows each, want some, at most 10", engineName, st.Name, q.Events, perQuery)
			case q.Events < 100:
				t.Logf("%s %s: only %d queries (a busy machine): average of %.2f rows not judged", engineName, st.Name, q.Events, perQuery)
			case perQuery < want || perQuery > 10:
				t.Errorf("%s %s: %d queries fetched %.2f rows each, want %.2f-10", engineName, st.Name, q.Events, perQuery, want)
			}
			checkBackgroundRate(t, engineName, st.Name, rs)
		}
	}
	// The range queries return rows in index order.
	for _, q := range rangeQueries {
		for _, arg := range []int64{0, q.max / 2, q.max - 1} {
			sql := strings.Replace(q.sql(d, "pi1"), "?", strconv.FormatInt(arg, 10), 1)
			rows, err := c.Values(ctx, sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if arg == 0 && len(rows) != rowsPerQuery {
				t.Errorf("%s: %d rows, want %d", sql, len(rows), rowsPerQuery)
			}
			for i := 1; i < len(rows); i++ {
				if less(rows[i-1], rows[i]) > 0 {
					t.Errorf("%s: row %d %v comes after %v: not in index order", sql, i, rows[i], rows[i-1])
				}
			}
		}
	}
	// An impossible rate: the step ends at its cap, short of its target.
	opts(p).QueryTime = workload.Duration{Duration: time.Second}
	st := queryStep(p, "qp2000000", true, 2_000_000)
	rs := runStep(t, ctx, db, st, p)
	ins := roleOf(rs, "insert")
	// The cap, not the count, ended the step: the inserts fell short of
	// their count (a step without a cap would run until they are done).
	if want := st.Roles[1].Ops; st.Roles[1].Name != "insert" || ins.Events >= want {
		t.Errorf("%s: impossible rate: %d inserts of the role's %d; want the %s cap to end the step first", engineName,
			ins.Events, want, st.MaxDuration)
	}
	if ips := ins.Throughput(); ips >= SLA*ins.Role.TargetRate || ips <= 0 {
		t.Errorf("%s: impossible rate achieved %.0f of %.0f rows/s, want an SLA failure with inserts measured", engineName, ips, ins.Role.TargetRate)
	}
	checkBackgroundRate(t, engineName, st.Name, rs)
}

func roleIndex(st workload.Step, name string) int {
	for i, r := range st.Roles {
		if r.Name == name {
			return i
		}
	}
	panic(fmt.Sprintf("step %s has no role %s", st.Name, name))
}

// checkBackgroundRate checks a query step's background inserts against
// their target rate in a way that holds at any speed of the machine: the
// pacing never runs ahead of the target (the step lasts at least
// query_time, and its inserts are query_time's worth at the target), and a
// machine too busy to keep up is told, not hidden: below the SLA, the
// report's notes say the step missed it. (A share within 5% of the target
// held only on a quiet machine: PostgreSQL managed 146 of 200 rows/s at a
// load of 10 on 2 CPUs, and the even schedule cannot catch up what the
// machine cannot do.)
func checkBackgroundRate(t *testing.T, engineName, step string, rs []*store.Result) {
	t.Helper()
	ins := roleOf(rs, "insert")
	ips, want := ins.Throughput(), ins.Role.TargetRate
	if ips <= 0 || ips > want*1.001 {
		t.Errorf("%s %s: background inserts %.1f rows/s, want some and never above the %.0f target", engineName, step, ips, want)
	}
	in := &section.Input{Runs: []store.Run{{ID: 1, Target: "t"}}, Targets: []string{"t"}, Results: map[int64][]store.Result{}}
	for i, r := range rs {
		c := *r
		c.Test, c.Seq, c.Status = step, i, store.StatusOK
		in.Results[1] = append(in.Results[1], c)
	}
	_, notes := insertTables(in)
	missed := strings.Contains(strings.Join(notes, "\n"), "SLA missed: "+step+" on t ")
	if short := ips < SLA*want; missed != short {
		t.Errorf("%s %s: background inserts %.1f of %.0f rows/s, SLA missed %v; the report says missed %v: %q",
			engineName, step, ips, want, short, missed, notes)
	}
	if ips < SLA*want {
		t.Logf("%s %s: the machine kept up with %.0f%% of the background rate; the report notes the missed SLA",
			engineName, step, 100*ips/want)
	}
}

func TestInvariantsSQLite(t *testing.T) { checkInvariants(t, "sqlite", nil) }

// The server tests start PostgreSQL 15 and MariaDB 10.11 from Debian's
// packages (.ci/run installs them).
func TestInvariantsPostgres(t *testing.T) {
	checkInvariants(t, "postgres", map[string]string{"shared_buffers": "64MB"})
}

func TestInvariantsMariaDB(t *testing.T) {
	checkInvariants(t, "mariadb", map[string]string{"innodb_buffer_pool_size": "64M"})
}
