package store

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"benchlab/internal/metric"
)

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "r.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := Experiment{Name: "exp", Base: "a", Preset: "smoke", Spec: "name = \"exp\"\n", Targets: []string{"a", "b"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := Run{ExperimentID: e.ID, Target: "b", Engine: "sqlite", Repeat: 2, Started: time.Now(), Manifest: `{"seed":7}`}
	if err := s.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	res := Result{RunID: r.ID, Seq: 3, Test: "random-points_range=10", Family: "random-points", Group: "point queries",
		Threads: 2, Metric: "qps", RowsPerOp: 10, Status: StatusOK, Started: time.Now().UTC().Truncate(time.Microsecond),
		Seconds: 1.5, Events: 300, Statements: 300, Errors: 2, Rows: 2990,
		Latency:      Latency{Mean: 5e3, P50: 4e3, P95: 9e3, P99: 12e3, P999: 20e3, Max: 30e3},
		Histogram:    []byte{1, 2, 3},
		ErrorSamples: []string{"database is locked"},
		Intervals:    []Interval{{Sec: -1, Seconds: 1, Events: 10}, {Sec: 0, Seconds: 1, Events: 200, Statements: 200, P95: 8e3, Max: 30e3}},
		Internals: []EngineSeries{
			{Name: "status.Innodb_buffer_pool_pages_flushed", Points: []EnginePoint{{Sec: 0, Value: 12.5}, {Sec: 1, Value: 0}}},
			{Name: "status.Innodb_checkpoint_age", Gauge: true, Points: []EnginePoint{{Sec: 0, Value: 4.5e6}}},
		},
	}
	if err := s.SaveResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	// Saving again (a begun result completed) replaces the series.
	if err := s.SaveResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Version, r.Ended, r.Manifest = StatusInterrupted, "3.50.0", time.Now(), `{"seed":8}`
	if err := s.FinishRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopen: the migration must not run twice and the data must be intact.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Experiment(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "exp" || !reflect.DeepEqual(got.Targets, []string{"a", "b"}) || got.Preset != "smoke" {
		t.Errorf("experiment = %+v", got)
	}
	runs, err := s.Runs(ctx, e.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	if runs[0].Status != StatusInterrupted || runs[0].Version != "3.50.0" || runs[0].Manifest != `{"seed":8}` || runs[0].Repeat != 2 {
		t.Errorf("run = %+v", runs[0])
	}
	rs, err := s.Results(ctx, r.ID, true)
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %v %v", rs, err)
	}
	g := rs[0]
	g.ID = 0
	res.ID = 0
	if !g.Started.Equal(res.Started) {
		t.Errorf("started %v, want %v", g.Started, res.Started)
	}
	g.Started = res.Started
	if !reflect.DeepEqual(g, res) {
		t.Errorf("result round trip:\n got %+v\nwant %+v", g, res)
	}
	if _, err := s.Experiment(ctx, 99); err == nil {
		t.Error("missing experiment: want an error")
	}
}

func TestThroughput(t *testing.T) {
	r := Result{Metric: "qps", Statements: 500, Seconds: 2}
	if r.Throughput() != 250 {
		t.Errorf("qps = %v", r.Throughput())
	}
	// A metric a suite declares computes its results' throughput by name.
	metric.Register(metric.Metric{Name: "store_test_rows_per_min", Value: func(c metric.Counts) float64 {
		return 60 * metric.PerSecond(c.Rows, c.Seconds)
	}})
	if got := (Result{Metric: "store_test_rows_per_min", Rows: 30, Seconds: 2}).Throughput(); got != 900 {
		t.Errorf("registered metric: %v, want 900", got)
	}
	// A metric no linked suite declares falls back to statements per second.
	if got := (Result{Metric: "unknown", Statements: 10, Rows: 99, Seconds: 2}).Throughput(); got != 5 {
		t.Errorf("unknown metric: %v, want 5", got)
	}
}

// TestKindFacts reads back the kinds of operation as written.
func TestKindFacts(t *testing.T) {
	var r Result
	want := []KindStat{
		{Kind: "delivery", Ops: 4, Errors: 0, P50: 2 * time.Millisecond, P99: 5 * time.Millisecond, Max: 7 * time.Millisecond},
		{Kind: "new_order", Ops: 45, Errors: 1, P50: time.Millisecond, P99: 3 * time.Millisecond, Max: 9 * time.Millisecond},
	}
	r.SetKind(want[1])
	r.SetKind(want[0])
	r.Facts[FactClientOpsPerCall] = 1
	if got := r.Kinds(); !reflect.DeepEqual(got, want) {
		t.Errorf("kinds %+v, want %+v", got, want)
	}
	if k, ok := r.Kind("new_order"); !ok || k.Ops != 45 {
		t.Errorf("new_order: %+v %v", k, ok)
	}
}

// TestProfileCompressed: a step's folded stacks are stored compressed and
// read back as written; a result saved again keeps one profile.
func TestProfileCompressed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := Experiment{Name: "exp", Base: "a", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := s.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	var text []byte
	for i := 0; i < 2000; i++ {
		text = append(text, fmt.Sprintf("benchlab;runtime.goexit;main.work;sqlite3VdbeExec;frame%d %d\n", i%300, i)...)
	}
	off := []byte("postgres;XLogFlush;blkdev_issue_flush 4000\n")
	res := Result{RunID: r.ID, Test: "point-query", Status: StatusOK, Profile: &Profile{Hz: 99, Samples: 5, Folded: text, OffCPU: off}}
	for range 2 {
		if err := s.SaveResult(ctx, &res); err != nil {
			t.Fatal(err)
		}
	}
	var n, size int
	if err := s.db.QueryRow(`SELECT count(*), max(length(folded_gz)) FROM profiles`).Scan(&n, &size); err != nil {
		t.Fatal(err)
	}
	if n != 1 || size == 0 || size > len(text)/4 {
		t.Errorf("%d profile rows, %d bytes stored for %d bytes of stacks; want 1 row, compressed to under a quarter", n, size, len(text))
	}
	got, err := s.Results(ctx, r.ID, false)
	if err != nil || len(got) != 1 || got[0].Profile == nil {
		t.Fatalf("results %+v %v", got, err)
	}
	if p := got[0].Profile; p.Hz != 99 || p.Samples != 5 || string(p.Folded) != string(text) || p.Note != "" ||
		string(p.OffCPU) != string(off) {
		t.Errorf("profile read back: hz %d, samples %d, %d bytes, note %q, off-CPU %q", p.Hz, p.Samples, len(p.Folded), p.Note, p.OffCPU)
	}
}
