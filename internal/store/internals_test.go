package store

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestAppendInternals streams a running result's engine series as the
// runner does (points appended flush by flush, a second sent twice stored
// once), reads them back while the result is still running, as a run
// killed there would leave them, and then completes the result, whose
// series replace them.
func TestAppendInternals(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := Experiment{Name: "x", Base: "a", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := s.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	res := Result{RunID: r.ID, Seq: 1, Test: "insert", Threads: 1, Metric: "qps", Status: StatusOK, Started: time.Now()}
	if err := s.BeginResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	flushed := func(name string, gauge bool, secs ...int) EngineSeries {
		x := EngineSeries{Name: name, Gauge: gauge}
		for _, sec := range secs {
			x.Points = append(x.Points, EnginePoint{Sec: sec, Value: float64(10 * sec)})
		}
		return x
	}
	for _, batch := range [][]EngineSeries{
		{flushed("pebble.flushes", false, 0, 1, 2), flushed("pebble.l0_files", true, 0, 1)},
		{flushed("pebble.flushes", false, 2, 3, 4), flushed("pebble.l0_files", true, 2, 3)},
	} {
		if err := s.AppendInternals(ctx, res.ID, res.Test, batch); err != nil {
			t.Fatal(err)
		}
	}
	want := []EngineSeries{flushed("pebble.flushes", false, 0, 1, 2, 3, 4), flushed("pebble.l0_files", true, 0, 1, 2, 3)}
	rs, err := s.Results(ctx, r.ID, true)
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %v, %v", rs, err)
	}
	if rs[0].Status != StatusRunning || !reflect.DeepEqual(rs[0].Internals, want) {
		t.Errorf("running result %s with series %+v, want running with %+v", rs[0].Status, rs[0].Internals, want)
	}
	res.Internals = []EngineSeries{flushed("pebble.flushes", false, 0, 1, 2, 3, 4, 5)}
	if err := s.SaveResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if rs, err = s.Results(ctx, r.ID, true); err != nil || !reflect.DeepEqual(rs[0].Internals, res.Internals) {
		t.Errorf("completed result's series %+v (%v), want %+v", rs[0].Internals, err, res.Internals)
	}
}
