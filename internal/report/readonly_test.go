package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"benchlab/internal/report"
	"benchlab/internal/store"
)

// storeUnlearned stores, through the store's API and not through the
// runner (which teaches the noise model), an experiment of two targets with
// two repeats each: one the noise model has not learned, so a report that
// learned would have to write.
func storeUnlearned(t *testing.T, path string) int64 {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	exp := &store.Experiment{Name: "ro", Base: "a", Targets: []string{"a", "b"},
		Spec:    "name = \"ro\"\n[workload]\nsuite = \"sysbench\"\ntests = [\"point-query\"]\nthreads = [1]\nrepeats = 2\n",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := st.CreateExperiment(ctx, exp); err != nil {
		t.Fatal(err)
	}
	qps := map[string][]int64{"a": {1000, 1010}, "b": {800, 790}}
	for _, target := range exp.Targets {
		for rep, q := range qps[target] {
			m := store.Manifest{Host: store.Host{Hostname: "h", CPUModel: "cpu", Cores: 2}}
			run := &store.Run{ExperimentID: exp.ID, Target: target, Engine: "sqlite", Repeat: rep + 1,
				Status: store.StatusOK, Started: exp.Created, Ended: exp.Created.Add(time.Second), Manifest: m.JSON()}
			if err := st.CreateRun(ctx, run); err != nil {
				t.Fatal(err)
			}
			res := &store.Result{RunID: run.ID, Test: "point-query", Family: "point-query", Threads: 1, Metric: "qps",
				Status: store.StatusOK, Started: exp.Created, Seconds: 1, Events: q, Statements: q,
				Latency: store.Latency{P50: time.Millisecond, P99: 3 * time.Millisecond}}
			if err := st.SaveResult(ctx, res); err != nil {
				t.Fatal(err)
			}
		}
	}
	return exp.ID
}

// TestReportWritesNothing builds and renders the report of an experiment
// the noise model has not learned from a store whose file and directory
// are read-only: report.Load takes a store.Reader-shaped view with no
// method that writes, and the store afterwards still lists the experiment
// as unlearned and its file is byte for byte what it was. (Load used to
// learn the experiment and backfill the history while building the view.)
func TestReportWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "r.db")
	id := storeUnlearned(t, path)
	before := fileSum(t, path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })

	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var rd report.Reader = st
	d, err := report.Load(ctx, rd, id, true)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.WriteText(&buf, report.Build(d), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("point-query")) {
		t.Errorf("report lacks its test:\n%s", buf.String())
	}
	unlearned, err := st.Unlearned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(unlearned, id) {
		t.Errorf("building the report learned experiment %d (unlearned now %v): it wrote to the store", id, unlearned)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileSum(t, path); after != before {
		t.Errorf("the store's file changed while a report was built")
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
