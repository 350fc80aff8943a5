package report_test

import (
	"slices"
	"strings"
	"testing"

	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/insertbench"
)

// noteData is an experiment of two targets, three repeats each, whose
// runs give every note kind a cause: b's first run had a slow memory
// canary after it (canary note), b's second ran on CPUs at x0.70
// (disturbed note), a's repeats spread by 10% (spread note), and two
// targets make verdicts (evidence note). suite names the stored spec's
// suite.
func noteData(suite string) *report.Data {
	sp := spec.Default()
	sp.Name = "notes"
	sp.Workload.Suite = suite
	d := &report.Data{Experiment: store.Experiment{ID: 1, Name: "notes", Base: "a", Targets: []string{"a", "b"}, Spec: sp.TOML()},
		Results: map[int64][]store.Result{}}
	for i, qps := range []int64{90, 100, 110, 60, 100, 101} {
		target, repeat, mem := "a", i+1, 4e6
		if i >= 3 {
			target, repeat = "b", i-2
		}
		if i == 3 {
			mem = 2e6
		}
		var m store.Manifest
		m.Host = store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
		m.Canary = &store.Canary{CPULoopsPerSec: 1000, FsyncsPerSec: 100, MemLoadsPerSec: 4e6}
		m.CanaryAfter = &store.Canary{CPULoopsPerSec: 1000, MemLoadsPerSec: mem}
		run := store.Run{ID: int64(i + 1), Target: target, Repeat: repeat, Engine: "sqlite", Status: store.StatusOK, Manifest: m.JSON()}
		d.Runs = append(d.Runs, run)
		res := store.Result{RunID: run.ID, Seq: 2, Test: "l.i0", Threads: 1, Metric: "ips", Status: store.StatusOK,
			Seconds: 1, Statements: qps, Events: qps, Rows: 100 * qps, Role: store.RoleInfo{Name: "insert"},
			Facts: map[string]float64{store.FactCPUSpeed: 100, store.FactCPUSpeedSamples: 20}}
		if i == 4 {
			res.Facts[store.FactCPUSpeed] = 70
		}
		d.Results[run.ID] = []store.Result{res}
	}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	d.Noise = &noise.Model{Host: "h1/cpu/2 cores", Canaries: noise.Baseline("h1/cpu/2 cores", d.Runs)}
	return d
}

// TestSuiteLayoutKeepsEveryNote builds the same results once under a suite
// without sections (sysbench: the generic layout) and once under the
// Insert Benchmark, whose sections replace the generic tables: the Insert
// Benchmark's report shows the evidence, canary, disturbed and spread notes
// the generic one shows, and every other generic note but the generic
// tables' own. (Its layout used to drop five note kinds.)
func TestSuiteLayoutKeepsEveryNote(t *testing.T) {
	generic := report.Build(noteData("sysbench"))
	insert := report.Build(noteData("insert"))
	if slices.ContainsFunc(generic.Tables, func(t report.Table) bool { return strings.HasPrefix(t.Title, "Insert Benchmark") }) {
		t.Fatal("the generic layout has the Insert Benchmark's tables")
	}
	if !slices.ContainsFunc(insert.Tables, func(t report.Table) bool { return strings.Contains(t.Title, "Insert Benchmark") }) {
		t.Fatalf("the insert layout lacks its own tables: %v", titles(insert.Tables))
	}
	for _, kind := range []string{"evidence of the", "runs on a slow host", "runs on slow CPUs", "largest run-to-run spread"} {
		if !slices.ContainsFunc(generic.Notes, func(n string) bool { return strings.HasPrefix(n, kind) }) {
			t.Errorf("the generic layout lacks the %q note, so the data does not test it: %q", kind, generic.Notes)
		}
	}
	for _, n := range generic.Notes {
		// A table's own multiple-comparison note goes with the table.
		if slices.ContainsFunc(generic.Tables, func(t report.Table) bool {
			name, _, _ := strings.Cut(t.Title, ":")
			return strings.HasPrefix(n, name+": ")
		}) {
			continue
		}
		if !slices.Contains(insert.Notes, n) {
			t.Errorf("the Insert Benchmark's layout drops the generic note %q", n)
		}
	}
}

func titles(ts []report.Table) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Title)
	}
	return out
}
