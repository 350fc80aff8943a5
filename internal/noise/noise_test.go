package noise

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	_ "benchlab/internal/engine/sqlite" // the targets' engine
	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/custom"   // the custom suite's options
	_ "benchlab/internal/workload/sysbench" // the stored specs' suite
)

// saveRun stores a run of target with the given settings and one
// point-query result of the given QPS (statements over 1 s).
func saveRun(t *testing.T, st *store.Store, exp int64, target, sync string, repeat int, qps int64, canaryCPU float64) {
	t.Helper()
	ctx := context.Background()
	var m store.Manifest
	m.Host = store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
	m.Target.Name, m.Target.Engine, m.Target.Settings = target, "sqlite", map[string]string{"synchronous": sync}
	m.Engine.Version = "3.x"
	m.Canary = &store.Canary{CPULoopsPerSec: canaryCPU, FsyncsPerSec: 100}
	r := store.Run{ExperimentID: exp, Target: target, Engine: "sqlite", Repeat: repeat, Status: store.StatusOK, Manifest: m.JSON()}
	if err := st.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	res := store.Result{RunID: r.ID, Test: "point-query", Threads: 1, Metric: "qps", Status: store.StatusOK,
		Seconds: 1, Statements: qps, Events: qps}
	if err := st.SaveResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
}

func TestLearnPoolsIdenticalTargets(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp := store.Experiment{Name: "aa", Base: "a", Spec: "[workload]\nsuite = \"sysbench\"\n", Targets: []string{"a", "b", "c"}}
	if err := st.CreateExperiment(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	// a and b are the same configuration (an A/A pair): 100, 110 | 100, 90
	// pool into one group of 4 runs, 3 df. c (synchronous=full) has one run
	// and teaches nothing.
	saveRun(t, st, exp.ID, "a", "off", 1, 100, 1000)
	saveRun(t, st, exp.ID, "b", "off", 1, 110, 1000)
	saveRun(t, st, exp.ID, "a", "off", 2, 100, 1000)
	saveRun(t, st, exp.ID, "b", "off", 2, 90, 500)
	saveRun(t, st, exp.ID, "c", "full", 1, 10, 1000)
	// Stored without the runner: not learned yet, until Backfill.
	if ids, err := st.Unlearned(ctx); err != nil || len(ids) != 1 || ids[0] != exp.ID {
		t.Fatalf("unlearned %v (err %v), want [%d]", ids, err, exp.ID)
	}
	if err := Backfill(ctx, st); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.Unlearned(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("unlearned after backfill: %v (err %v)", ids, err)
	}
	if err := LearnStored(ctx, st, exp.ID); err != nil { // learning twice counts once
		t.Fatal(err)
	}
	test := TestKey(exp, "point-query")
	if !strings.HasPrefix(test, "sysbench@") || !strings.HasSuffix(test, "/point-query") {
		t.Fatalf("test key %q", test)
	}
	key := store.NoiseKey{Host: "h1/cpu/2 cores", Engine: "sqlite", Test: test, Threads: 1}
	hist, err := st.NoiseHistory(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	ys := []float64{math.Log(100), math.Log(110), math.Log(100), math.Log(90)}
	m := (ys[0] + ys[1] + ys[2] + ys[3]) / 4
	var ss float64
	for _, y := range ys {
		ss += (y - m) * (y - m)
	}
	if len(hist) != 1 || hist[0].Runs != 4 || hist[0].DF != 3 || math.Abs(hist[0].LogVar-ss/3) > 1e-12 {
		t.Fatalf("history %+v, want one group of 4 runs, 3 df, variance %.6g", hist, ss/3)
	}
	if !strings.Contains(hist[0].Config, "synchronous=off") {
		t.Errorf("config %q does not name the settings", hist[0].Config)
	}
	// The experiment is not its own prior.
	if own, _ := st.NoiseHistory(ctx, key, exp.ID); len(own) != 0 {
		t.Errorf("history excluding the experiment: %+v", own)
	}

	// Canaries: 5 runs, CPU median 1000; b's second repeat ran at 50%.
	runs, _ := st.Runs(ctx, exp.ID)
	b := Baseline("h1/cpu/2 cores", runs)
	if b.Runs != 5 || b.CPU != 1000 || b.Fsync != 100 {
		t.Fatalf("baseline %+v", b)
	}
	var flagged []string
	for _, r := range runs {
		if s, slow := b.Check(r); slow {
			flagged = append(flagged, s)
		}
	}
	if len(flagged) != 1 || !strings.Contains(flagged[0], "before b repeat 2: CPU loop 50% of the host's median") {
		t.Errorf("flagged %q, want b repeat 2 only", flagged)
	}
	if Baseline("other host", runs).Runs != 0 {
		t.Error("another host's canaries counted")
	}
}

// TestWorkloadShape: the test key changes with a suite option or a
// duration, not with the tests chosen, the threads or the repeats.
func TestWorkloadShape(t *testing.T) {
	mk := func(extra, custom string) store.Experiment {
		src := "name = \"x\"\nbase = \"a\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"custom\"\n" + extra +
			"[workload.custom]\nsetup = [\"CREATE TABLE t (id INTEGER)\"]\n[[workload.custom.test]]\nname = \"q\"\nstatements = [\"" + custom + "\"]\n"
		sp, err := spec.Parse([]byte(src), "t.toml", "")
		if err != nil {
			t.Fatal(err)
		}
		return store.Experiment{Spec: sp.TOML()}
	}
	base := TestKey(mk("", "SELECT 1"), "q")
	if base == "" || !strings.HasPrefix(base, "custom@") {
		t.Fatalf("key %q", base)
	}
	if k := TestKey(mk("repeats = 7\nthreads = [1, 2]\n", "SELECT 1"), "q"); k != base {
		t.Errorf("repeats and threads changed the key: %q vs %q", k, base)
	}
	if k := TestKey(mk("read_time = \"7s\"\n", "SELECT 1"), "q"); k == base {
		t.Error("a different read time kept the key")
	}
	if k := TestKey(mk("", "SELECT 2"), "q"); k == base {
		t.Error("a different custom statement kept the key")
	}
}

// TestLoadAcrossExcludesJudgedExperiments: a comparison across experiments
// (an experiment of its own, ID 0, holding runs of two stored experiments)
// draws its prior from the host's other experiments only, never from the
// runs it judges.
func TestLoadAcrossExcludesJudgedExperiments(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := "[workload]\nsuite = \"sysbench\"\n"
	var ids []int64
	for i, qps := range [][2]int64{{100, 110}, {100, 90}, {100, 101}} {
		exp := store.Experiment{Name: "e", Base: "a", Spec: spec, Targets: []string{"a"}}
		if err := st.CreateExperiment(ctx, &exp); err != nil {
			t.Fatal(err)
		}
		saveRun(t, st, exp.ID, "a", "off", 1, qps[0], 1000)
		saveRun(t, st, exp.ID, "a", "off", 2, qps[1], 1000)
		if err := LearnStored(ctx, st, exp.ID); err != nil {
			t.Fatalf("learn experiment %d: %v", i, err)
		}
		ids = append(ids, exp.ID)
	}
	var runs []store.Run
	results := map[int64][]store.Result{}
	for _, id := range ids[:2] {
		rs, err := st.Runs(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if results[r.ID], err = st.Results(ctx, r.ID, false); err != nil {
				t.Fatal(err)
			}
		}
		runs = append(runs, rs...)
	}
	across := store.Experiment{Spec: spec} // ID 0, as compare --base/--vs makes it
	m, err := Load(ctx, st, across, runs, results)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Prior([]string{"sqlite"}, "point-query", 1)
	want := math.Pow(math.Log(100)-math.Log(101), 2) / 2 // the third experiment's variance, 1 df
	if p.DF != 1 || math.Abs(p.Var-want) > 1e-12 {
		t.Errorf("prior %+v, want only the third experiment's (1 df, variance %.6g)", p, want)
	}
}
