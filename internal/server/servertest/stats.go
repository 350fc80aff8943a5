package servertest

import (
	"context"
	"sort"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/runner"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Range bounds an engine counter's growth per operation.
type Range struct{ Min, Max float64 }

// inserter is a worker whose every operation inserts one row in its own
// autocommit transaction.
type inserter struct {
	c      engine.Conn
	sql    string
	id     int64
	worker int64
}

func (w *inserter) Op(ctx context.Context) (workload.Tally, error) {
	w.id++
	_, err := w.c.Exec(ctx, w.sql, w.worker<<32|w.id)
	return workload.Tally{Statements: 1, Rows: 1}, err
}

func (w *inserter) Close() error { return w.c.Close() }

// insertStep is a measured step of one-row autocommit inserts into table
// stats_ins, without warm-up; steps with another first worker number
// insert other keys.
func insertStep(name string, d time.Duration, firstWorker int) workload.Step {
	return workload.Step{Name: name, Duration: d, NewWorker: newInserter(firstWorker)}
}

// countedInsertStep is insertStep ended by its count of inserts rather
// than the clock, so that every insert is measured and counted however
// slowly a loaded machine runs them (a step of fixed length counted the
// insert under way at its end in the counters but not among the
// operations, a few percent of a short step's; none at all when the
// worker got no CPU before the end).
func countedInsertStep(name string, inserts int64, firstWorker int) workload.Step {
	return workload.Step{Name: name, Roles: []workload.Role{{Name: "insert", Ops: inserts, NewWorker: newInserter(firstWorker)}}}
}

func newInserter(firstWorker int) func(ctx context.Context, db engine.DB, i, _ int, _ uint64) (workload.Worker, error) {
	return func(ctx context.Context, db engine.DB, i, _ int, _ uint64) (workload.Worker, error) {
		sqldb := db.(engine.SQL)
		c, err := sqldb.Connect(ctx)
		if err != nil {
			return nil, err
		}
		return &inserter{c: c, sql: sqldb.Dialect().Bind("INSERT INTO stats_ins (id, v) VALUES (?, 1)"),
			worker: int64(firstWorker + i)}, nil
	}
}

// statsInserts is how many inserts EngineStats measures.
const statsInserts = 500

// EngineStats measures a step of 500 one-row autocommit inserts on one
// worker against a fresh server of the engine (runner.Measure) and checks
// that the engine's counters (engine.StatsReader) are in its facts
// (store.EngineStatFact) with the growth per operation, counted as the
// report counts it (Efficiency.PerOp), that want gives. Then breakStats
// takes away the engine's means of reading them (its administrative
// session, killed from c) and the same step runs again: it succeeds, with
// store.FactEngineStatsUnread and no engine counters. Two reads back to
// back must leave the counters named in quiet as they were (the engine
// takes its reads' own cost off them).
func EngineStats(t *testing.T, eng string, want map[string]Range, quiet []string, breakStats func(t *testing.T, c engine.Conn)) {
	t.Helper()
	getenv, _ := Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "stats", Engine: eng, Getenv: getenv})
	if _, ok := db.(engine.StatsReader); !ok {
		t.Fatalf("engine %s does not read its counters (engine.StatsReader)", eng)
	}
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "CREATE TABLE stats_ins (id BIGINT PRIMARY KEY, v INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	// What a read itself adds: the growth between two reads back to back.
	a, err := db.(engine.StatsReader).ReadStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.(engine.StatsReader).ReadStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range b {
		if d := v - a[name]; d != 0 {
			t.Logf("a read adds %v to %s", d, name)
		}
	}
	for _, name := range quiet {
		if _, ok := b[name]; !ok || b[name] != a[name] {
			t.Errorf("%s: %v then %v (present: %v) in two reads back to back; want the same", name, a[name], b[name], ok)
		}
	}
	res, err := runner.Measure(ctx, db, countedInsertStep("insert", statsInserts, 0), 1, 1, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Eff == nil || res.Statements != statsInserts || res.Errors > 0 {
		t.Fatalf("insert step: %d statements, %d errors %v, efficiency %v", res.Statements, res.Errors, res.ErrorSamples, res.Eff)
	}
	var names []string
	for f, v := range res.Facts {
		if name, ok := store.EngineStatName(f); ok {
			names = append(names, name)
			if v < 0 {
				t.Errorf("%s grew by %v, want >= 0", name, v)
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Logf("%s: %v (%.3f per op)", name, res.Facts[store.EngineStatFact(name)],
			res.Eff.PerOp(res.Facts[store.EngineStatFact(name)], res.QPS(), res.Seconds))
	}
	for name, r := range want {
		v, ok := res.Facts[store.EngineStatFact(name)]
		if !ok {
			t.Errorf("no fact %s in %d engine counters %v", store.EngineStatFact(name), len(names), names)
			continue
		}
		if perOp := res.Eff.PerOp(v, res.QPS(), res.Seconds); perOp < r.Min || perOp > r.Max {
			t.Errorf("%s: %.3f per operation (%v over %d inserts in %.2f s); want %g to %g",
				name, perOp, v, res.Statements, res.Eff.Seconds, r.Min, r.Max)
		}
	}
	if _, ok := res.Facts[store.FactEngineStatsUnread]; ok {
		t.Errorf("%s set although the counters were read", store.FactEngineStatsUnread)
	}

	breakStats(t, c)
	if _, err := db.(engine.StatsReader).ReadStats(ctx); err == nil {
		t.Fatal("the counters can still be read after breakStats")
	}
	res, err = runner.Measure(ctx, db, countedInsertStep("insert-unread", 50, 1000), 1, 1, runner.Options{})
	if err != nil || res.Status != store.StatusOK || res.Statements == 0 || res.Errors > 0 {
		t.Fatalf("step without counters: status %s, %d statements, %d errors %q, error %v; want it to succeed", res.Status, res.Statements, res.Errors, res.ErrorSamples, err)
	}
	if res.Facts[store.FactEngineStatsUnread] != 1 {
		t.Errorf("%s = %v, want 1", store.FactEngineStatsUnread, res.Facts[store.FactEngineStatsUnread])
	}
	for f := range res.Facts {
		if _, ok := store.EngineStatName(f); ok {
			t.Errorf("engine counter %s stored although the counters could not be read", f)
		}
	}
}

// Internals measures a 3-second step of one-row autocommit inserts on one
// worker against a fresh server of the engine (started with settings) and
// checks its per-second series (engine.InternalsReader, store.Result's
// Internals): every name of gauges is a gauge and every name of rates a
// counter's rate, each with a point for at least two seconds, every point
// in a second of the measured part; the rates named in busy are above 0 in
// every second the inserts went on in (and the seconds either side), and
// in one second at least. It returns the result.
func Internals(t *testing.T, eng string, settings map[string]string, gauges, rates, busy []string) *store.Result {
	t.Helper()
	getenv, _ := Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "internals", Engine: eng, Getenv: getenv, Settings: settings})
	if _, ok := db.(engine.InternalsReader); !ok {
		t.Fatalf("engine %s does not read its internals (engine.InternalsReader)", eng)
	}
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "CREATE TABLE stats_ins (id BIGINT PRIMARY KEY, v INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	res, err := runner.Measure(ctx, db, insertStep("insert", 3*time.Second, 0), 1, 1, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Statements == 0 || res.Errors > 0 {
		t.Fatalf("insert step: %d statements, %d errors %v", res.Statements, res.Errors, res.ErrorSamples)
	}
	byName := map[string]store.EngineSeries{}
	for _, s := range res.Internals {
		byName[s.Name] = s
		t.Logf("%s (gauge %v): %v", s.Name, s.Gauge, s.Points)
		for _, p := range s.Points {
			if p.Sec < 0 || float64(p.Sec) >= res.Seconds {
				t.Errorf("%s: a point in second %d of a %.2f s measured part", s.Name, p.Sec, res.Seconds)
			}
		}
	}
	check := func(names []string, gauge bool) {
		for _, name := range names {
			s, ok := byName[name]
			switch {
			case !ok:
				t.Errorf("no series %s among %d", name, len(res.Internals))
			case s.Gauge != gauge:
				t.Errorf("%s: gauge %v, want %v", name, s.Gauge, gauge)
			case len(s.Points) < 2:
				t.Errorf("%s: %d points over %.2f s, want 2 or more", name, len(s.Points), res.Seconds)
			}
		}
	}
	check(gauges, true)
	check(rates, false)
	// A loaded machine may keep the worker (or the server) off the CPU for
	// a second: a busy rate must be above 0 in every second the worker did
	// inserts in, and in the seconds either side (a boundary's read may be
	// taken late), and in at least one second in any case.
	events := map[int]int64{}
	for _, iv := range res.Intervals {
		events[iv.Sec] = iv.Events
	}
	steady := func(sec int) bool {
		for _, k := range []int{sec - 1, sec, sec + 1} {
			if n, ok := events[k]; ok && n == 0 {
				return false
			}
		}
		return events[sec] > 0
	}
	for _, name := range busy {
		some := false
		for _, p := range byName[name].Points {
			some = some || p.Value > 0
			if p.Value <= 0 && steady(p.Sec) {
				t.Errorf("%s: %v in second %d of steady inserts (%d), want > 0", name, p.Value, p.Sec, events[p.Sec])
			}
		}
		if !some {
			t.Errorf("%s: no second above 0 over %d inserts", name, res.Statements)
		}
	}
	return res
}
