package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestSecondInterruptMarksRuns checks what a second Ctrl-C does to the
// store before it exits at once: the experiment's running run becomes
// interrupted (it stayed "running" before), a finished one keeps its
// status, and another experiment's running run is left alone.
func TestSecondInterruptMarksRuns(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var exps [2]store.Experiment
	for i := range exps {
		exps[i] = store.Experiment{Name: "e", Base: "a", Spec: "", Targets: []string{"a"}}
		if err := st.CreateExperiment(ctx, &exps[i]); err != nil {
			t.Fatal(err)
		}
	}
	runs := []store.Run{
		{ExperimentID: exps[0].ID, Target: "a", Engine: "sqlite", Repeat: 1, Started: time.Now()},
		{ExperimentID: exps[0].ID, Target: "a", Engine: "sqlite", Repeat: 2, Started: time.Now()},
		{ExperimentID: exps[1].ID, Target: "a", Engine: "sqlite", Repeat: 1, Started: time.Now()},
	}
	for i := range runs {
		if err := st.CreateRun(ctx, &runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	runs[0].Status, runs[0].Ended = store.StatusOK, time.Now()
	if err := st.FinishRun(ctx, &runs[0]); err != nil {
		t.Fatal(err)
	}
	markInterrupted(st, exps[0].ID)
	want := map[int64]string{runs[0].ID: store.StatusOK, runs[1].ID: store.StatusInterrupted, runs[2].ID: store.StatusRunning}
	got, err := st.Runs(ctx, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("runs %v, %v", got, err)
	}
	for _, r := range got {
		if r.Status != want[r.ID] {
			t.Errorf("run %d (experiment %d, repeat %d) is %s, want %s", r.ID, r.ExperimentID, r.Repeat, r.Status, want[r.ID])
		}
	}
}
