package docbench_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/server/servertest"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/docbench"
)

func TestMain(m *testing.M) {
	ferretdb.ServeIfAsked()
	os.Exit(m.Run())
}

// TestFerretDB runs every test on FerretDB over SQLite: each measured step
// did operations without errors, and the server's CPU was measured apart
// from the client's.
func TestFerretDB(t *testing.T) {
	work := t.TempDir()
	s := spec.Default()
	s.Name, s.WorkDir, s.Seed = "docbench", work, 42
	s.Targets = []spec.Target{{Name: "sqlite", Engine: "ferretdb"}}
	s.Getenv, _ = servertest.Env(t)
	w := &s.Workload
	w.Suite, w.TableSize, w.Threads = "docbench", 1000, []int{2}
	w.ReadTime, w.WriteTime = spec.Duration{Duration: time.Second}, spec.Duration{Duration: time.Second}
	w.Warmup = spec.Duration{Duration: 200 * time.Millisecond}
	w.ReportInterval = spec.Duration{}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
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
