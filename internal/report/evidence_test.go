package report

import (
	"math"
	"strings"
	"testing"

	"benchlab/internal/analysis"
	"benchlab/internal/noise"
	"benchlab/internal/store"
)

// TestEvidenceNotesSetAside: the notes under a verdict table count the
// cells whose verdict set a disturbed run aside and those judged on the
// repeats' own variance, with the reason of the latter, from what
// analysis.CompareNoise says of real cells (one stalled base run; repeats
// spread evenly).
func TestEvidenceNotesSetAside(t *testing.T) {
	prior := analysis.NoisePrior{Var: 0.0001, DF: 100, Points: 150}
	run := func(logs ...float64) []analysis.Run {
		out := make([]analysis.Run, len(logs))
		for i, l := range logs {
			out[i] = analysis.Run{Value: 100 * math.Exp(l), RelVar: math.NaN()}
		}
		return out
	}
	var cs []Comparison
	for _, c := range [][2][]analysis.Run{
		{run(0, 0.005, -0.2), run(-0.1, -0.095, -0.105)},
		{run(0, 0.03, 0.06), run(-0.15, -0.12, -0.09)},
	} {
		v, ev := analysis.CompareNoise(c[0], c[1], analysis.HigherIsBetter, prior, analysis.NoiseOptions{})
		cs = append(cs, Comparison{Target: "t", Test: "x", Threads: 1, Verdict: v, Noise: ev})
	}
	notes := strings.Join(evidenceNotes(cs, nil), "\n")
	for _, want := range []string{
		"evidence of the 2 verdicts (noise model of this host): ",
		"1 noise prior + repeats, a disturbed run set aside",
		"1 repeats, t-test on their own variance",
		"fallback to repeats in 1 cells: the repeats vary far more than the host's noise history",
		"runs set aside as disturbed (without them the cell's repeats agree with the host's noise history): x @1: base run 3 of 3 (-18.3% from its others)",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if cs[0].Verdict.Outcome != analysis.Slower || !strings.Contains(string(cs[0].Verdict.Evidence), "base run 3 of 3") {
		t.Errorf("stalled base: %v %q, want slower with base run 3 set aside", cs[0].Verdict.Outcome, cs[0].Verdict.Evidence)
	}
	// The verdicts table counts the runs set aside and gives no reasons:
	// the notes above do, and the column stays narrow.
	tb := ComparisonTable(cs, "base")
	want := []string{"noise prior (150 history points) + repeats 2/3, 1 run set aside as disturbed", "repeats 3/3, t-test on their own variance"}
	for i, w := range want {
		if got := tb.Rows[i].Cells[len(tb.Rows[i].Cells)-1].Text; got != w {
			t.Errorf("row %d evidence %q, want %q", i, got, w)
		}
	}
}

// TestEvidenceNotesDisturbedHost: a single-run cell on a host whose history
// shows disturbed runs is unknown at a 30% difference, and the notes and
// the evidence say why.
func TestEvidenceNotesDisturbedHost(t *testing.T) {
	prior := analysis.NoisePrior{Var: 0.0004, DF: 100, Points: 97, AsidePoints: 3, Shifts: []float64{0.69}, SetAside: 1}
	one := func(v float64) []analysis.Run { return []analysis.Run{{Value: v, RelVar: math.NaN()}} }
	v, ev := analysis.CompareNoise(one(100), one(70), analysis.HigherIsBetter, prior, analysis.NoiseOptions{})
	if v.Outcome != analysis.Unknown || math.Abs(ev.PDisturbed-0.01) > 1e-12 {
		t.Fatalf("30%% single run on a disturbed host: %v, PDisturbed %v; want unknown, 0.01", v.Outcome, ev.PDisturbed)
	}
	cs := []Comparison{{Target: "t", Test: "x", Threads: 1, Verdict: v, Noise: ev}}
	notes := strings.Join(evidenceNotes(cs, nil), "\n")
	if !strings.Contains(notes, "1 verdicts allow for this host's disturbed runs") || !strings.Contains(notes, "1 of them are unknown") {
		t.Errorf("notes do not explain the disturbed host:\n%s", notes)
	}
	if !strings.Contains(string(v.Evidence), "host disturbed 1 of 100 history runs (p+0.01)") {
		t.Errorf("evidence %q does not name the disturbances", v.Evidence)
	}
}

// TestHostSlowRuns: a run whose memory canary after it ran at half the
// host's median is set aside by its cell's verdict, left out of its side's
// median, and named in the notes; the other runs are judged as before.
func TestHostSlowRuns(t *testing.T) {
	run := func(id int64, target string, repeat int, memAfter float64) store.Run {
		var m store.Manifest
		m.Host = store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
		m.Canary = &store.Canary{CPULoopsPerSec: 1000, FsyncsPerSec: 100, MemLoadsPerSec: 4e6}
		m.CanaryAfter = &store.Canary{CPULoopsPerSec: 1000, MemLoadsPerSec: memAfter}
		return store.Run{ID: id, Target: target, Repeat: repeat, Engine: "sqlite", Status: store.StatusOK, Manifest: m.JSON()}
	}
	d := &Data{Experiment: store.Experiment{Base: "a", Targets: []string{"a", "b"}}, Results: map[int64][]store.Result{}}
	for i, qps := range []int64{100, 101, 99, 60, 100, 101, 99} {
		target, repeat, mem := "a", i+1, 4e6
		if i >= 3 {
			target, repeat = "b", i-2
		}
		if i == 3 {
			mem = 2e6 // b's first repeat: the host ran its walk at half speed
		}
		r := run(int64(i+1), target, repeat, mem)
		d.Runs = append(d.Runs, r)
		d.Results[r.ID] = []store.Result{{RunID: r.ID, Test: "x", Threads: 1, Metric: "qps", Status: store.StatusOK,
			Seconds: 1, Statements: qps, Events: qps}}
	}
	d.Noise = &noise.Model{Host: "h1/cpu/2 cores", Canaries: noise.Baseline("h1/cpu/2 cores", d.Runs)}
	cs := Compare(d, VerdictOptions{})
	if len(cs) != 1 {
		t.Fatalf("%d comparisons, want 1", len(cs))
	}
	c := cs[0]
	if c.Noise.NOther != 3 || len(c.Noise.HostSlow) != 1 || c.Other.N != 3 || c.Other.Median != 100 ||
		!strings.Contains(string(c.Verdict.Evidence), "other run 1 of 4 (host slow during run: memory canary (32 MiB) x2.00 after the run") {
		t.Errorf("comparison %+v, evidence %q; want b's run 1 set aside, median 100 of 3", c.Noise, c.Verdict.Evidence)
	}
	notes := strings.Join(canaryNotes(d), "\n")
	if !strings.Contains(notes, "runs on a slow host") || !strings.Contains(notes, "b repeat 1 (memory canary (32 MiB) x2.00 after the run") ||
		strings.Contains(notes, "repeat 2 (") {
		t.Errorf("notes do not name b repeat 1 alone:\n%s", notes)
	}
}

// TestDisturbedRuns: a run whose CPU speed probes averaged x0.70 of the
// cell's median is set aside by its verdict when it came out worse; a run
// on a busy machine that came out as well as its side's others is kept;
// the notes name both, each with what was measured.
func TestDisturbedRuns(t *testing.T) {
	d := &Data{Experiment: store.Experiment{Base: "a", Targets: []string{"a", "b"}}, Results: map[int64][]store.Result{}}
	for i, qps := range []int64{100, 101, 99, 60, 100, 101, 99} {
		target, repeat := "a", i+1
		if i >= 3 {
			target, repeat = "b", i-2
		}
		r := store.Run{ID: int64(i + 1), Target: target, Repeat: repeat, Engine: "sqlite", Status: store.StatusOK}
		d.Runs = append(d.Runs, r)
		res := store.Result{RunID: r.ID, Test: "x", Threads: 1, Metric: "qps", Status: store.StatusOK,
			Seconds: 1, Statements: qps, Events: qps,
			Facts: map[string]float64{store.FactCPUSpeed: 100, store.FactCPUSpeedSamples: 20}}
		switch i {
		case 3: // b's first repeat ran on CPUs at 70% of their usual speed
			res.Facts[store.FactCPUSpeed] = 70
		case 4: // b's second: other processes took 40% of all CPU, its thread waited 30%
			res.Eff = &store.Efficiency{Seconds: 1, MachineCPU: 2, MachineBusy: 1.8, ClientCPU: 1, ServerCPU: store.NotMeasured}
			res.Facts[store.SchedRunFact("client")] = 1
			res.Facts[store.SchedWaitFact("client")] = 0.3
		}
		d.Results[r.ID] = []store.Result{res}
	}
	cs := Compare(d, VerdictOptions{})
	if len(cs) != 1 {
		t.Fatalf("%d comparisons, want 1", len(cs))
	}
	c := cs[0]
	ev := string(c.Verdict.Evidence)
	if c.Noise.NOther != 3 || len(c.Noise.HostSlow) != 1 || c.Other.Median != 100 ||
		!strings.Contains(ev, "other run 1 of 4 (CPUs slow during run: speed probes x0.70") {
		t.Errorf("comparison %+v, evidence %q; want b's run 1 alone set aside, median 100 of 3", c.Noise, ev)
	}
	notes := strings.Join(disturbedNotes(d), "\n")
	for _, want := range []string{
		"runs on slow CPUs", "x @1 on b repeat 1 (speed probes x0.70",
		"runs on a busy machine", "x @1 on b repeat 2 (other processes used 40% of all CPU and the step's threads waited for a CPU 30%",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
