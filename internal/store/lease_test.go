package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// TestLeases checks a queued job's lease on SQLite and on a real
// PostgreSQL store: an attempt that takes the lease marks every run of the
// job stored so far superseded, with the reason, and leaves other jobs'
// runs alone; the earlier attempt can then neither finish a run as ok nor
// create one that counts (both stored superseded, ErrSuperseded); the
// holder's runs finish as usual.
func TestLeases(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	db := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres",
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	for name, path := range map[string]string{
		"sqlite":   filepath.Join(t.TempDir(), "r.db"),
		"postgres": fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port),
	} {
		t.Run(name, func(t *testing.T) { checkLeases(t, path) })
	}
}

func checkLeases(t *testing.T, path string) {
	ctx := context.Background()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := store.Experiment{Name: "leased", Spec: "name = \"leased\"\n", Targets: []string{"a"}}
	if err := st.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	newRun := func(job int64, lease string) (store.Run, error) {
		r := store.Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Repeat: 1, Started: time.Now(), Job: job, Lease: lease}
		err := st.CreateRun(ctx, &r)
		return r, err
	}
	if n, err := st.TakeLease(ctx, 7, "first", "w1 attempt 1", "superseded by w1"); err != nil || n != 0 {
		t.Fatalf("first lease: %d, %v; want 0 runs superseded", n, err)
	}
	early, err := newRun(7, "first")
	if err != nil {
		t.Fatal(err)
	}
	other, err := newRun(8, "x") // another job, no lease taken: held
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.TakeLease(ctx, 7, "second", "w2 attempt 2", "superseded by w2"); err != nil || n != 1 {
		t.Fatalf("second lease: %d, %v; want the first attempt's run superseded", n, err)
	}
	early.Status, early.Error, early.Ended = store.StatusOK, "", time.Now()
	if err := st.FinishRun(ctx, &early); !errors.Is(err, store.ErrSuperseded) || early.Status != store.StatusSuperseded {
		t.Errorf("late finish of a superseded run: %v, status %s; want ErrSuperseded", err, early.Status)
	}
	late, err := newRun(7, "first")
	if !errors.Is(err, store.ErrSuperseded) || late.Status != store.StatusSuperseded {
		t.Errorf("run created under a lost lease: %v, status %s; want it stored superseded", err, late.Status)
	}
	held, err := newRun(7, "second")
	if err != nil {
		t.Fatal(err)
	}
	held.Status, held.Ended = store.StatusOK, time.Now()
	if err := st.FinishRun(ctx, &held); err != nil {
		t.Fatal(err)
	}
	other.Status = store.StatusOK
	if err := st.FinishRun(ctx, &other); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{early.ID: store.StatusSuperseded, late.ID: store.StatusSuperseded, held.ID: store.StatusOK, other.ID: store.StatusOK}
	for _, r := range runs {
		if r.Status != want[r.ID] {
			t.Errorf("run %d (job %d, lease %q): status %s, want %s", r.ID, r.Job, r.Lease, r.Status, want[r.ID])
		}
		if r.ID == early.ID && r.Error != "superseded by w2" {
			t.Errorf("superseded run's error %q; want the reason TakeLease gave", r.Error)
		}
	}
}
