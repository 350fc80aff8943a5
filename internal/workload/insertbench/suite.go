// Package insertbench is the Insert Benchmark (docs/method.md 1): one table per
// client loaded in primary key order (l.i0), three secondary indexes built
// (l.x), insert+delete churn with big and small transactions (l.i1, l.i2), a
// cleanup, then range and point queries while an inserter and a deleter per
// client write at a fixed rate (qr100 ... qp1000), whose SLA the report
// checks.
package insertbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Suite is the Insert Benchmark.
type Suite struct{}

// Name returns "insert".
func (Suite) Name() string { return "insert" }

// PreparesStatements says the workers prepare on the server unless
// workload.prepared is false.
func (Suite) PreparesStatements() {}

// Summary describes the suite for `benchlab list`.
// Needs says the suite runs on SQL engines.
func (Suite) Needs() engine.Kind { return engine.KindSQL }

func (Suite) Summary() string {
	return "Insert Benchmark: load, create index, insert+delete, queries with rate-limited background writes and an SLA"
}

// IPS is the Insert Benchmark's rate of rows changed per second: inserts/s
// (ips) of the load steps and background writers, deletes/s of the deleters
// (docs/method.md 1.11).
var IPS = metric.Register(metric.Metric{
	Name: "ips", Unit: "rows/s", Legend: "rows inserted (or deleted) per second", Direction: analysis.HigherIsBetter,
	Value:  func(c metric.Counts) float64 { return metric.PerSecond(c.Rows, c.Seconds) },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Rows, c.Seconds) }, SeriesUnit: "rows",
	PerRow: true,
})

// Report groups.
const (
	GroupLoad      = "load"
	GroupReadWrite = "read-write"
)

// Rows per commit of the steps (docs/method.md 1.8).
const (
	rpcLoad  = 100
	rpcBig   = 50
	rpcSmall = 5
	// SLA is the share of the target insert rate a query step must sustain
	// (docs/method.md 1.13).
	SLA = 0.95
	// maxDurationFactor bounds a query step that cannot sustain its rate:
	// it ends after this many times query_time and fails its SLA.
	maxDurationFactor = 2
)

// Tests lists the steps in run order.
func (Suite) Tests() []workload.Test {
	t := []workload.Test{
		{Name: "l.i0", Family: "l.i0", Group: GroupLoad, Summary: "load each client's table in PK order, 100 rows per commit, no secondary indexes"},
		{Name: "l.x", Family: "l.x", Group: GroupLoad, Summary: "insert 100 rows, then create the 3 secondary indexes (rate: indexed rows/s)"},
		{Name: "l.i1", Family: "l.i1", Group: GroupLoad, Summary: "inserts as fast as possible, 50 rows per commit, a delete of the oldest rows per insert"},
		{Name: "l.i2", Family: "l.i2", Group: GroupLoad, Summary: "as l.i1 with 5 rows per commit"},
	}
	for _, r := range []int{100, 500, 1000} {
		for _, k := range []string{"qr", "qp"} {
			t = append(t, workload.Test{Name: k + strconv.Itoa(r), Family: k, Group: GroupReadWrite,
				Summary: queryKind(k) + " queries while each client inserts and deletes at the given rate (rates set the names)"})
		}
	}
	return t
}

func queryKind(k string) string {
	if k == "qp" {
		return "point"
	}
	return "range"
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	o := opts(p)
	pacing := map[string]string{
		"iibench": "iibench pacing (per-second windows; time lost to a stall is not made up)",
		"even":    "even pacing (a fixed schedule, caught up after a stall)",
		"bursty":  "bursty pacing (each second's quota at its start, caught up after a stall)",
	}[pacingName(p)]
	return fmt.Sprintf("Insert Benchmark (%s), %d client(s), %d rows loaded, %d inserts in l.i1+l.i2, "+
		"query steps of %s at %v inserts/s per client, %s",
		workload.TestsLabel(p), o.Clients, o.Rows, o.Inserts, o.QueryTime, o.Rates, pacing)
}

// Check validates the sizes, naming the spec field at fault.
func (Suite) Check(p workload.Params) error {
	o := opts(p)
	if o.Clients < 1 || o.Clients > 1024 {
		return workload.Bad("insert.clients", o.Clients, "%d is not allowed; want 1 to 1024", o.Clients)
	}
	if o.Rows/int64(o.Clients) < rpcLoad {
		return workload.Bad("insert.rows", o.Rows, "%d is too few for %d clients; want at least %d per client (one l.i0 batch)",
			o.Rows, o.Clients, rpcLoad)
	}
	if o.Inserts/int64(o.Clients) < 250 {
		return workload.Bad("insert.inserts", o.Inserts, "%d is too few for %d clients; want at least 250 per client "+
			"(l.i1 does 4/5 in batches of 50, l.i2 1/5 in batches of 5)", o.Inserts, o.Clients)
	}
	if o.QueryTime.Duration <= 0 {
		return workload.Bad("insert.query_time", o.QueryTime, "%s is not allowed; want a duration > 0", o.QueryTime)
	}
	if len(o.Rates) == 0 {
		return workload.Bad("insert.rates", o.Rates, "empty; want background insert rates per client, e.g. [100, 500, 1000]")
	}
	for _, r := range o.Rates {
		if r < 1 || r > 1_000_000 {
			return workload.Bad("insert.rates", r, "%d is not allowed; want inserts per second per client from 1 to 1000000", r)
		}
	}
	if o.Bursty && o.Pacing != "" && o.Pacing != "iibench" && o.Pacing != "bursty" {
		return workload.Bad("insert.bursty", o.Bursty, "true conflicts with pacing = %q; bursty = true is the older spelling of pacing = \"bursty\", drop one", o.Pacing)
	}
	if _, ok := workload.Pacings[pacingName(p)]; !ok {
		return workload.Bad("insert.pacing", o.Pacing, "%q is not allowed; want \"iibench\" (the original client's limiter, "+
			"no catch-up), \"even\" or \"bursty\" (fixed schedules that catch up after a stall)", o.Pacing)
	}
	if _, err := selection(p); err != nil {
		return err
	}
	return nil
}

// pacingName is p's pacing, "iibench" when unset.
func pacingName(p workload.Params) string { return opts(p).EffectivePacing() }

// stepNames lists the measured steps for p's rates, in order.
func stepNames(p workload.Params) []string {
	names := []string{"l.i0", "l.x", "l.i1", "l.i2"}
	for _, r := range opts(p).Rates {
		names = append(names, "qr"+strconv.Itoa(r), "qp"+strconv.Itoa(r))
	}
	return names
}

// selection returns the selected steps; l.i0 and l.x always run, since every
// later step needs their table and indexes. Nil means all.
func selection(p workload.Params) (map[string]bool, error) {
	if len(p.Tests) == 0 {
		return nil, nil
	}
	known := stepNames(p)
	sel := map[string]bool{"l.i0": true, "l.x": true}
	for _, t := range p.Tests {
		if !slices.Contains(known, t) {
			return nil, workload.Bad("tests", t, "unknown step %q; the insert suite's steps for these rates are %s",
				t, strings.Join(known, ", "))
		}
		sel[t] = true
	}
	return sel, nil
}

// Plan returns docs/method.md 1.8's sequence: setup, l.i0, l.x, l.i1, l.i2, the
// cleanup of 1.9, then a range and a point query step per rate.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	sel, _ := selection(p)
	want := func(n string) bool { return sel == nil || sel[n] }
	o := opts(p)
	n := o.Clients
	var tables []string
	for i := 1; i <= n; i++ {
		tables = append(tables, TableName(i))
	}
	perClient := o.Rows / int64(n) / rpcLoad * rpcLoad
	steps := []workload.Step{setupStep(tables), loadStep(p, perClient), indexStep(p, perClient)}
	wrote := false
	for _, c := range []struct {
		name  string
		share float64
		rpc   int
	}{{"l.i1", 0.8, rpcBig}, {"l.i2", 0.2, rpcSmall}} {
		if !want(c.name) {
			continue
		}
		inserts := int64(math.Round(float64(o.Inserts)*c.share)) / int64(n)
		steps = append(steps, churnStep(p, c.name, c.rpc, inserts/int64(c.rpc)))
		wrote = true
	}
	target := p.PostwriteWait
	if target < 0 {
		target = workload.PostwriteTarget(o.Rows)
	}
	cleaned := false
	for _, r := range o.Rates {
		for _, k := range []string{"qr", "qp"} {
			name := k + strconv.Itoa(r)
			if !want(name) {
				continue
			}
			if wrote && !cleaned {
				steps = append(steps, workload.CleanupStep("cleanup", tables, target))
				cleaned = true
			}
			steps = append(steps, queryStep(p, name, k == "qp", r))
		}
	}
	return steps, nil
}

// setupStep drops and creates every client's table without secondary
// indexes (iibench.py --setup), and confirms their storage engine where the
// target asks for one, before any step measures.
func setupStep(tables []string) workload.Step {
	return workload.Step{
		Name: "setup", Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			s, err := sqlOf(db)
			if err != nil {
				return workload.Tally{}, err
			}
			c, err := s.Connect(ctx)
			if err != nil {
				return workload.Tally{}, fmt.Errorf("setup: connect: %w", err)
			}
			defer c.Close()
			var t workload.Tally
			for _, tbl := range tables {
				ddl, err := CreateTable(s.Dialect(), tbl)
				if err != nil {
					return t, fmt.Errorf("setup: %w", err)
				}
				stmts := append([]string{"drop table if exists " + tbl}, ddl...)
				for _, q := range stmts {
					t.Statements++
					if _, err := c.Exec(ctx, q); err != nil {
						return t, fmt.Errorf("setup: %s: %w", q, err)
					}
				}
			}
			return t, workload.CheckTableEngines(ctx, db, "setup", tables)
		},
	}
}

// familyGroup is a step's family and report group.
func familyGroup(name string) (family, group string) {
	if strings.HasPrefix(name, "l.") {
		return name, GroupLoad
	}
	return name[:2], GroupReadWrite
}

func measuredStep(p workload.Params, name string, m metric.Metric, roles ...workload.Role) workload.Step {
	family, group := familyGroup(name)
	return workload.Step{Name: name, Family: family, Group: group, Write: true, Threads: []int{opts(p).Clients},
		Metric: m, Roles: roles, SizeAfter: true}
}

// loadStep is l.i0: each client inserts its rows in batches of 100.
func loadStep(p workload.Params, perClient int64) workload.Step {
	return measuredStep(p, "l.i0", IPS, workload.Role{
		Name: "insert", Threads: opts(p).Clients, Ops: perClient / rpcLoad * int64(opts(p).Clients),
		NewWorker: newInserter(rpcLoad, nil, false, nil, 0),
	})
}

// indexStep is l.x: each client inserts 100 more rows, then builds the three
// indexes; its rate is indexed rows per second (docs/method.md 1.11).
func indexStep(p workload.Params, perClient int64) workload.Step {
	return measuredStep(p, "l.x", IPS, workload.Role{
		Name: "index", Threads: opts(p).Clients, Ops: int64(opts(p).Clients),
		NewWorker: newInserter(rpcLoad, nil, false, CreateIndexes, perClient+rpcLoad),
	})
}

// churnStep is l.i1 or l.i2: inserts as fast as possible with a matching
// delete per insert, batches inserts per client.
func churnStep(p workload.Params, name string, rpc int, batches int64) workload.Step {
	cs := &clients{}
	n := opts(p).Clients
	ops := max(1, batches) * int64(n)
	return measuredStep(p, name, IPS,
		workload.Role{Name: "insert", Threads: n, Ops: ops, NewWorker: newInserter(rpc, cs, true, nil, 0)},
		workload.Role{Name: "delete", Threads: n, Ops: ops, NewWorker: newDeleter(p, rpc, cs)},
	)
}

// queryStep is qr<rate> or qp<rate>: one query connection per client as
// fast as possible, while its inserter writes rate rows/s and its deleter
// follows. The step ends when the inserts of query_time at the target rate
// are done, or at twice query_time.
func queryStep(p workload.Params, name string, point bool, rate int) workload.Step {
	cs := &clients{}
	o := opts(p)
	rpc := min(rpcBig, rate) // rows per commit are capped at the rate (docs/method.md 1.4)
	perClient := max(1, int64(math.Round(o.QueryTime.Seconds()*float64(rate)/float64(rpc))))
	ops := perClient * int64(o.Clients)
	st := measuredStep(p, name, metric.QPS,
		workload.Role{Name: "query", Threads: o.Clients, NewWorker: newQuerier(p, point, cs)},
		workload.Role{Name: "insert", Threads: o.Clients, Ops: ops, Metric: IPS,
			Rate: float64(rate*o.Clients) / float64(rpc), TargetRate: float64(rate * o.Clients),
			Pacing: workload.Pacings[pacingName(p)], Queue: queueDepth,
			NewWorker: newInserter(rpc, cs, false, nil, 0)},
		workload.Role{Name: "delete", Threads: o.Clients, Ops: ops, Metric: IPS,
			NewWorker: newDeleter(p, rpc, cs)},
	)
	st.Duration = o.QueryTime.Duration
	st.MaxDuration = maxDurationFactor * o.QueryTime.Duration
	st.RowsPerOp = rowsPerQuery
	return st
}

// newInserter returns the inserter factory. With cs it shares a queue with
// the deleter of the same client, creating the client's state when it is the
// step's first role (first); with then it builds indexes after its insert
// and reports rows.
func newInserter(rpc int, cs *clients, first bool, then func(engine.Dialect, string) []string, rows int64) func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
	return func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		s, err := sqlOf(db)
		if err != nil {
			return nil, err
		}
		table := TableName(id + 1)
		w := &inserter{gen: newRowGen(seed), prefix: InsertPrefix(table), rpc: rpc, rows: rows}
		if then != nil {
			w.then = then(s.Dialect(), table)
		}
		if cs != nil && first {
			w.cl = cs.fresh(id)
		} else if cs != nil {
			if w.cl, err = cs.get(id); err != nil {
				return nil, err
			}
		}
		if w.conn, err = s.Connect(ctx); err != nil {
			return nil, fmt.Errorf("insert into %s: connect: %w", table, err)
		}
		return w, nil
	}
}

func newDeleter(p workload.Params, rpc int, cs *clients) func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
	return func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		s, err := sqlOf(db)
		if err != nil {
			return nil, err
		}
		cl, err := cs.get(id)
		if err != nil {
			return nil, err
		}
		table := TableName(id + 1)
		c, err := s.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("delete from %s: connect: %w", table, err)
		}
		del, err := engine.PrepareOrText(ctx, c, DeleteSQL(s.Dialect(), table, rpc), engine.Short, p.Unprepared)
		if err != nil {
			c.Close()
			return nil, err
		}
		return &deleter{conn: c, del: del, table: table, rpc: int64(rpc), cl: cl}, nil
	}
}

func newQuerier(p workload.Params, point bool, cs *clients) func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
	return func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		s, err := sqlOf(db)
		if err != nil {
			return nil, err
		}
		cl := cs.fresh(id)
		table := TableName(id + 1)
		c, err := s.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: connect: %w", table, err)
		}
		w := &querier{conn: c, r: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)), point: point,
			table: table, cl: cl}
		sqls := []string{PointSQL(s.Dialect(), table)}
		if !point {
			sqls = sqls[:0]
			for _, q := range rangeQueries {
				sqls = append(sqls, s.Dialect().Bind(q.sql(s.Dialect(), table)))
			}
		}
		for _, q := range sqls {
			st, err := engine.PrepareOrText(ctx, c, q, engine.Short, p.Unprepared)
			if err != nil {
				w.Close()
				return nil, err
			}
			w.stmts = append(w.stmts, st)
		}
		m, err := readID(ctx, c, MinSQL(table))
		if err != nil {
			w.Close()
			return nil, err
		}
		cl.frontier.Store(m)
		return w, nil
	}
}
