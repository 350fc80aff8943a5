package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestCopyIdempotent copies an experiment whose run is still going, copies
// it again once the run has more results and has ended, and a third time:
// the destination ends with one experiment, one run in its final state
// and each result once.
func TestCopyIdempotent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := Open(filepath.Join(dir, "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := Open(filepath.Join(dir, "dst.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	e := Experiment{Name: "exp", Base: "a", Spec: "name = \"exp\"\n", Targets: []string{"a"}}
	if err := src.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Repeat: 1, Status: StatusRunning, Started: time.Now()}
	if err := src.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	save := func(seq int) {
		res := Result{RunID: r.ID, Seq: seq, Test: "point-query", Threads: 1, Metric: "qps", Status: StatusOK,
			Started: time.Now(), Seconds: 1, Events: 100,
			Intervals: []Interval{{Sec: 0, Seconds: 1, Events: 100}}}
		if err := src.SaveResult(ctx, &res); err != nil {
			t.Fatal(err)
		}
	}
	save(1)

	first, err := dst.CopyExperiment(ctx, src, e.ID)
	if err != nil || first.Existing || first.Runs != 1 || first.Results != 1 {
		t.Fatalf("first copy %+v, %v; want 1 run and 1 result written", first, err)
	}
	save(2)
	r.Status, r.Ended, r.Version, r.Manifest = StatusOK, time.Now(), "3.46", `{"seed":1}`
	if err := src.FinishRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	second, err := dst.CopyExperiment(ctx, src, e.ID)
	if err != nil || !second.Existing || second.Experiment != first.Experiment || second.Runs != 0 ||
		second.KeptRuns != 1 || second.Results != 1 || second.KeptResults != 1 {
		t.Fatalf("second copy %+v, %v; want the run completed with its new result", second, err)
	}
	third, err := dst.CopyExperiment(ctx, src, e.ID)
	if err != nil || third.Runs != 0 || third.Results != 0 || third.KeptResults != 2 {
		t.Fatalf("third copy %+v, %v; want nothing written", third, err)
	}

	exps, err := dst.Experiments(ctx)
	if err != nil || len(exps) != 1 {
		t.Fatalf("destination experiments %d, %v; want 1", len(exps), err)
	}
	runs, err := dst.Runs(ctx, exps[0].ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("destination runs %d, %v; want 1", len(runs), err)
	}
	if runs[0].Status != StatusOK || runs[0].Version != "3.46" || runs[0].Manifest != `{"seed":1}` {
		t.Errorf("copied run %+v, want the source's final state", runs[0])
	}
	res, err := dst.Results(ctx, runs[0].ID, true)
	if err != nil || len(res) != 2 || len(res[1].Intervals) != 1 {
		t.Fatalf("destination results %d (%v), want 2 with their series", len(res), err)
	}

	// Another experiment of the same name (a later run of the same spec)
	// is a different experiment.
	e2 := Experiment{Name: "exp", Base: "a", Spec: e.Spec, Targets: []string{"a"}, Created: e.Created.Add(time.Second)}
	if err := src.CreateExperiment(ctx, &e2); err != nil {
		t.Fatal(err)
	}
	if c, err := dst.CopyExperiment(ctx, src, e2.ID); err != nil || c.Existing {
		t.Fatalf("copy of a later experiment of the same name: %+v, %v; want a new experiment", c, err)
	}
}
