package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/postgres" // starts the real server the shared store lives on
	"benchlab/internal/metrics"
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// sample stores one experiment, run and three results (an action, a
// measured step with efficiency, 1-second load and a histogram, and a
// secondary role with facts and service times) and returns what it stored.
func sample(t *testing.T, s *store.Store) (store.Run, []store.Result) {
	t.Helper()
	ctx := context.Background()
	e := store.Experiment{Name: "lab", Base: "a", Preset: "smoke", Spec: "name = \"lab\"\n", Targets: []string{"a", "b"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := store.Run{ExperimentID: e.ID, Target: "b", Engine: "postgres", Repeat: 2, Started: time.Now(), Manifest: `{"seed":7}`}
	if err := s.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Truncate(time.Microsecond)
	eff := &store.Efficiency{Seconds: 10.02, ServerCPU: 1.0000001, ClientCPU: 3.25,
		ServerReadBytes: 1 << 41, ServerWriteBytes: store.NotMeasured, ServerReadCalls: 3, ServerWriteCalls: 4,
		ClientWriteBytes: 8192, ClientReadCalls: 12345, ClientWriteCalls: 7,
		Device: "vda", DevReads: store.NotReadable, DevWrites: 3, DevWriteBytes: 1 << 40,
		ServerCS: 5, ClientCS: 99, ServerPeakRSS: 3 << 30, ClientPeakRSS: 50 << 20,
		MachineCPU: 20.04, MachineBusy: 7.5, MachineSteal: 0.1}
	results := []store.Result{
		{RunID: r.ID, Seq: 1, Test: "prepare", Action: true, Warm: true, Metric: "qps", Status: store.StatusOK,
			Started: started, Seconds: 0.25, Statements: 103, Rows: 5000, DBBytes: 123456789},
		{RunID: r.ID, Seq: 2, Test: "random-points_range=10", Family: "random-points", Group: "point queries",
			Threads: 4, Metric: "qps", RowsPerOp: 10, Status: store.StatusOK, Started: started,
			Seconds: 1.5, Events: 300, Statements: 300, Errors: 2, Rows: 2990,
			Latency:      store.Latency{Mean: 5e3, P50: 4e3, P95: 9e3, P99: 12e3, P999: 20e3, Max: 30e9},
			Histogram:    []byte{0, 1, 2, 255},
			ErrorSamples: []string{"deadlock detected", "it's 'quoted'"},
			Eff:          eff,
			Intervals: []store.Interval{{Sec: -1, Seconds: 1, Events: 10},
				{Sec: 0, Seconds: 0.999, Events: 200, Statements: 200, P95: 8e3, Max: 30e3,
					Load: &store.IntervalLoad{ServerCPU: store.NotMeasured, ClientCPU: 0.31, StealPct: 2.5, ForeignPct: store.NotReadable,
						CPUSpeed: 98.5}}},
			Facts:   map[string]float64{"client_gomaxprocs": 5, "client_polled_io": 0},
			Profile: &store.Profile{Hz: 99, Samples: 125250, Folded: folded(500)}},
		{RunID: r.ID, Seq: 3, Test: "qr100", Threads: 1, Metric: "rows/s", Status: store.StatusInterrupted, Started: started,
			Seconds: 60, Events: 6000, Statements: 6000, Rows: 600000,
			Role: store.RoleInfo{Name: "insert", Secondary: true, TargetRate: 100,
				Service: store.Latency{Mean: 1e6, P50: 2e6, P95: 3e6, P99: 4e6, Max: 5e6}},
			Profile: &store.Profile{Hz: 49, Note: "profile: perf is not installed (no perf on PATH)"}},
	}
	for i := range results {
		if i == 1 {
			// Streamed as a running step is: begun, its first second
			// appended, then completed (the second is not stored twice).
			if err := s.BeginResult(ctx, &results[i]); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendIntervals(ctx, results[i].ID, results[i].Test, results[i].Intervals[:1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveResult(ctx, &results[i]); err != nil {
			t.Fatal(err)
		}
	}
	r.Status, r.Version, r.Ended, r.Manifest = store.StatusOK, "15.10", time.Now(), `{"seed":8}`
	if err := s.FinishRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	return r, results
}

// folded makes n lines of folded stacks, 1+2+...+n samples.
func folded(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "postgres;main;PostgresMain;exec_simple_query;func_%03d %d\n", i, i)
	}
	return []byte(b.String())
}

// readBack returns the results of the most recent experiment's only run.
func readBack(t *testing.T, s *store.Store) (store.Run, []store.Result) {
	t.Helper()
	ctx := context.Background()
	e, err := s.Experiment(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "lab" || !reflect.DeepEqual(e.Targets, []string{"a", "b"}) {
		t.Errorf("experiment %+v", e)
	}
	runs, err := s.Runs(ctx, e.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	rs, err := s.Results(ctx, runs[0].ID, true)
	if err != nil {
		t.Fatal(err)
	}
	return runs[0], rs
}

// checkBatch reads the most recent experiment with ReadBatch and wants
// what Experiment, Runs and Results give, less what a batch leaves out (the
// sample's action, histograms, error samples, facts and efficiency).
func checkBatch(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	e, err := s.Experiment(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadBatch(ctx, []int64{e.ID, e.ID + 1000}) // the second does not exist
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Runs(ctx, e.ID)
	if !reflect.DeepEqual(b.Experiments, []store.Experiment{e}) || !reflect.DeepEqual(b.Runs, map[int64][]store.Run{e.ID: runs}) {
		t.Fatalf("batch of experiment %d: %+v %+v, want %+v %+v", e.ID, b.Experiments, b.Runs, e, runs)
	}
	want := map[int64][]store.Result{}
	for _, r := range runs {
		rs, err := s.Results(ctx, r.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range rs {
			if !x.Warm && !x.Action {
				x.Histogram, x.ErrorSamples, x.Facts, x.Eff, x.DBBytes, x.Profile = nil, nil, nil, nil, 0, nil
				want[r.ID] = append(want[r.ID], x)
			}
		}
	}
	if n := len(want[runs[0].ID]); n != 2 {
		t.Fatalf("%d measured results in the sample, want 2", n)
	}
	if !reflect.DeepEqual(b.Results, want) {
		t.Errorf("batch results:\n got %+v\nwant %+v", b.Results, want)
	}
}

// TestPostgresStore keeps results in a database on a real PostgreSQL
// server, as a lab shares them: everything written reads back as written
// and as the SQLite file gives it back (64-bit counters, doubles, booleans,
// NULLs for what was not measured, bytes, facts), the schema is created
// once, and the password never shows in the store's name or its errors.
func TestPostgresStore(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres",
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port)

	pg, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if p := pg.Path(); strings.Contains(p, in.Password()) || !strings.HasPrefix(p, "postgres://postgres:") {
		t.Errorf("Path() = %q, want the URL with its password hidden", p)
	}
	wantRun, want := sample(t, pg)
	pg.Close()
	lite, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	sample(t, lite)

	// Reopened: the schema is there already, the data intact.
	pg, err = store.Open(dsn)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer pg.Close()
	run, got := readBack(t, pg)
	if run.Status != wantRun.Status || run.Version != "15.10" || run.Manifest != `{"seed":8}` || run.Repeat != 2 {
		t.Errorf("run %+v", run)
	}
	_, fromLite := readBack(t, lite)
	checkBatch(t, pg)
	checkBatch(t, lite)
	if len(got) != len(want) || len(fromLite) != len(want) {
		t.Fatalf("%d results from PostgreSQL, %d from SQLite, want %d", len(got), len(fromLite), len(want))
	}
	for i := range want {
		// Each store got its own sample, written a few milliseconds apart.
		fromLite[i].Started = got[i].Started
		for _, r := range []*store.Result{&got[i], &fromLite[i]} {
			r.ID, r.RunID = 0, 0
		}
		w := want[i]
		w.ID, w.RunID = 0, 0
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("result %d from PostgreSQL:\n got %+v\nwant %+v", i, got[i], w)
		}
		if !reflect.DeepEqual(got[i], fromLite[i]) {
			t.Errorf("result %d differs between the backends:\npostgres %+v\n  sqlite %+v", i, got[i], fromLite[i])
		}
	}

	// Copy the SQLite file's experiment into the shared store: the copy
	// reads back as the original, under new ids.
	c, err := pg.CopyExperiment(ctx, lite, 0)
	if err != nil || c.Existing || c.Runs != 1 || c.Results != len(want) {
		t.Fatalf("copy: %+v, %v", c, err)
	}
	nid := c.Experiment
	// A second copy into PostgreSQL finds the first (times as PostgreSQL
	// keeps them) and writes nothing.
	if again, err := pg.CopyExperiment(ctx, lite, 0); err != nil || !again.Existing || again.Experiment != nid ||
		again.Runs != 0 || again.Results != 0 || again.KeptResults != len(want) {
		t.Fatalf("second copy: %+v, %v; want the first copy found and nothing written", again, err)
	}
	copied, err := pg.Experiment(ctx, nid)
	if err != nil || copied.Name != "lab" || copied.Spec != "name = \"lab\"\n" {
		t.Fatalf("copied experiment %+v %v", copied, err)
	}
	copiedRun, fromCopy := readBack(t, pg)
	if copiedRun.Version != "15.10" || copiedRun.Manifest != `{"seed":8}` || copiedRun.Repeat != 2 || copiedRun.Status != store.StatusOK {
		t.Errorf("copied run %+v", copiedRun)
	}
	_, original := readBack(t, lite)
	for i := range original {
		fromCopy[i].ID, fromCopy[i].RunID, original[i].ID, original[i].RunID = 0, 0, 0, 0
		if !reflect.DeepEqual(fromCopy[i], original[i]) {
			t.Errorf("copied result %d:\n got %+v\nwant %+v", i, fromCopy[i], original[i])
		}
	}

	bad := fmt.Sprintf("postgres://postgres:s3cret@127.0.0.1:%d/sbtest?sslmode=disable&connect_timeout=2", in.Port+1)
	if _, err := store.Open(bad); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a store on a closed port: error %v, want one without the password", err)
	}
}

// TestPostgresStoreHangs stops (SIGSTOP) the server of a shared store
// while a run writes a result: the write gives up after the journal's
// timeout and the result is kept in the journal; once the server goes on
// (SIGCONT), the next Open stores it.
func TestPostgresStoreHangs(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	logs := filepath.Join(t.TempDir(), "logs")
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres",
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port)
	pg, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pg.Journal(2 * time.Second)
	e := store.Experiment{Name: "hang", Targets: []string{"a"}}
	if err := pg.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	run := store.Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := pg.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	// The server and its backends, the store's connections' included.
	pids := metrics.ProcessTree(db.(engine.Server).PIDs())
	signal := func(sig syscall.Signal) {
		for _, pid := range pids {
			syscall.Kill(pid, sig)
		}
	}
	signal(syscall.SIGSTOP)
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	res := store.Result{RunID: run.ID, Seq: 1, Test: "point-query", Metric: "qps", Status: store.StatusOK, Seconds: 10, Events: 1000}
	var pe *store.PendingError
	if err := pg.SaveResult(ctx, &res); !errors.As(err, &pe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SaveResult on a stopped server: %v, want it kept in the journal after the timeout", err)
	}
	signal(syscall.SIGCONT)
	pg.Close()
	pg, err = store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if r := pg.Replayed(); len(r) != 1 || r[0].Path != pe.Path || r[0].Entries != 1 {
		t.Errorf("replayed %+v, want 1 entry from %s", r, pe.Path)
	}
	if rs, err := pg.Results(ctx, run.ID, false); err != nil || len(rs) != 1 || rs[0].Events != 1000 {
		t.Errorf("results after the replay: %+v %v, want the one kept", rs, err)
	}
}
