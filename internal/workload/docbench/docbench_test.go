package docbench_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/runner"
	"benchlab/internal/server/servertest"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/docbench"
)

func TestMain(m *testing.M) {
	ferretdb.ServeIfAsked()
	os.Exit(m.Run())
}

// spec is a small docbench experiment on the targets given.
func testSpec(t *testing.T, work string, targets ...spec.Target) spec.Spec {
	t.Helper()
	s := spec.Default()
	s.Name, s.WorkDir, s.Seed, s.Targets = "docbench", work, 42, targets
	s.Getenv, _ = servertest.Env(t)
	w := &s.Workload
	w.Suite, w.TableSize, w.Threads = "docbench", 1000, []int{2}
	w.ReadTime, w.WriteTime = spec.Duration{Duration: time.Second}, spec.Duration{Duration: time.Second}
	w.Warmup = spec.Duration{Duration: 200 * time.Millisecond}
	w.ReportInterval = spec.Duration{}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKilled kills FerretDB once the first target's load is done: that
// target fails saying the server died, with its log's last lines, keeps
// its load's result, and leaves no process behind; the next target runs.
func TestKilled(t *testing.T) {
	work := t.TempDir()
	s := testSpec(t, work, spec.Target{Name: "victim", Engine: "ferretdb"}, spec.Target{Name: "next", Engine: "ferretdb"})
	victim := filepath.Join(work, "victim-r1")
	out := servertest.NewTrigger("documents loaded", func() {
		syscall.Kill(servertest.ServerPID(t, victim), syscall.SIGKILL)
	})
	st, runs, err := servertest.Run(context.Background(), t, s, out)
	t.Logf("log:\n%s", out.String())
	if !errors.Is(err, runner.ErrCellsFailed) {
		t.Errorf("error %v, want %v", err, runner.ErrCellsFailed)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	if r := runs[0]; r.Status != store.StatusFailed || !strings.Contains(r.Error, "exited unexpectedly") ||
		!strings.Contains(r.Error, "last lines of the server log") {
		t.Errorf("victim: status %s error %q; want failed saying FerretDB exited, with its log", r.Status, r.Error)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil || len(res) == 0 || res[0].Test != "prepare" || res[0].Status != store.StatusOK {
		t.Errorf("victim kept %d results (%v); want its load first", len(res), err)
	}
	if runs[1].Status != store.StatusOK {
		t.Errorf("next: status %s error %q, want ok", runs[1].Status, runs[1].Error)
	}
	servertest.NoProcs(t, work)
}

// TestFerretDB runs every test on FerretDB over SQLite: each measured step
// did operations without errors, and the server's CPU was measured apart
// from the client's.
func TestFerretDB(t *testing.T) {
	work := t.TempDir()
	s := testSpec(t, work, spec.Target{Name: "sqlite", Engine: "ferretdb"})
	var out bytes.Buffer
	st, runs, err := servertest.Run(context.Background(), t, s, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Logf("log:\n%s", out.String())
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, r := range res {
		if r.Action || r.Warm {
			continue
		}
		measured[r.Test] = true
		if r.Status != store.StatusOK || r.Events == 0 || r.Errors != 0 {
			t.Errorf("%s: status %s, %d operations, %d errors %v", r.Test, r.Status, r.Events, r.Errors, r.ErrorSamples)
		}
		if r.Eff == nil || r.Eff.ServerCPU <= 0 || r.Eff.ClientCPU <= 0 {
			t.Errorf("%s: efficiency %+v; want server and client CPU", r.Test, r.Eff)
		}
	}
	for _, name := range []string{"point-find", "range-index", "aggregate", "update-field", "insert"} {
		if !measured[name] {
			t.Errorf("no measured result for %s (have %v)", name, measured)
		}
	}
	servertest.NoProcs(t, work)
}
