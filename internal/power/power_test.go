package power

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/engine/sqlite"
	_ "benchlab/internal/workload/sysbench"

	"benchlab/internal/analysis"
	"benchlab/internal/spec"
)

// specWith is two SQLite targets running five sysbench tests at one thread
// count with the given repeats and [gate] lines.
func specWith(t *testing.T, repeats int, gate string) spec.Spec {
	t.Helper()
	src := fmt.Sprintf(`name = "sync"
[[target]]
name = "off"
engine = "sqlite"
[[target]]
name = "full"
engine = "sqlite"
[workload]
tests = ["point-query", "read-only_range=10", "update-index", "update-nonindex", "write-only"]
threads = [1]
repeats = %d
%s`, repeats, gate)
	s, err := spec.Parse([]byte(src), "sync.toml", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlanRefusesGateThatCannotFire is the calibration's gate case: five cells under
// Holm at alpha 0.01 need p < 0.002; the ranks reach 2/252 = 0.0079 at 5
// repeats, 0.0022 at 6, 0.00058 at 7. 3 repeats or more a side are judged
// by Welch's t-test, which has no floor (on a fresh store the ranks could
// not call even a tenfold slowdown), so the gate is refused only below 3
// (2 repeats reach 1/3 at best), naming repeats = 3 and the 7 the ranks
// alone would need; 3, 5 and 7 pass.
func TestPlanRefusesGateThatCannotFire(t *testing.T) {
	for _, tc := range []struct {
		repeats int
		ok      bool
	}{{1, false}, {2, false}, {3, true}, {5, true}, {7, true}} {
		p, err := Of(specWith(t, tc.repeats, "[gate]\nfail_on_regression = true\n"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Cells != 5 || p.Tests != 5 {
			t.Fatalf("cells %d tests %d, want 5 and 5", p.Cells, p.Tests)
		}
		if p.Welch != (tc.repeats >= 3) {
			t.Errorf("%d repeats: Welch %v", tc.repeats, p.Welch)
		}
		err = p.Check()
		if tc.ok {
			if err != nil {
				t.Errorf("%d repeats: %v, want the gate accepted", tc.repeats, err)
			}
			continue
		}
		if err == nil || !spec.IsInvalid(err) || !strings.Contains(err.Error(), "workload.repeats") ||
			!strings.Contains(err.Error(), "want repeats = 3 or more (the ranks alone need 7)") {
			t.Errorf("%d repeats: %v, want a validation error naming workload.repeats, 3 and 7 repeats", tc.repeats, err)
		}
	}
	// Without the gate nothing is refused, and BH's gate at 5 repeats can
	// fire when four or five of the cells move together.
	if err := mustPlan(t, specWith(t, 5, "")).Check(); err != nil {
		t.Errorf("no gate: %v", err)
	}
	if err := mustPlan(t, specWith(t, 5, "[gate]\nfail_on_regression = true\ncorrection = \"bh\"\n")).Check(); err != nil {
		t.Errorf("bh gate at 5 repeats: %v, want accepted", err)
	}
	if err := mustPlan(t, specWith(t, 2, "[gate]\nfail_on_regression = true\ncorrection = \"bh\"\n")).Check(); err == nil {
		t.Error("bh gate at 2 repeats (smallest p 1/3): no error")
	}
	// Steps of 8 s or more give every run a within-run variance (8 batch
	// means), so 3 repeats can fire through the t-test; 1 repeat cannot.
	long := "read_time = \"8s\"\nwrite_time = \"10s\"\n[gate]\nfail_on_regression = true\n"
	p := mustPlan(t, specWith(t, 3, long))
	if !p.WithinRun || p.ShortestStep != 8*time.Second || p.Check() != nil {
		t.Errorf("3 repeats of 8-10 s steps: within-run %v, shortest %s, check %v; want accepted on within-run evidence",
			p.WithinRun, p.ShortestStep, p.Check())
	}
	if p := mustPlan(t, specWith(t, 1, long)); p.WithinRun || p.Check() == nil {
		t.Errorf("1 repeat: within-run %v, check %v; want refused", p.WithinRun, p.Check())
	}
	if p := mustPlan(t, specWith(t, 2, long)); !p.WithinRun || p.Check() != nil {
		t.Errorf("2 repeats of 8-10 s steps: within-run %v, check %v; want accepted", p.WithinRun, p.Check())
	}
	if p := mustPlan(t, specWith(t, 2, strings.Replace(long, "\"8s\"", "\"7s\"", 1))); p.WithinRun || p.Check() == nil {
		t.Errorf("2 repeats with a 7 s step: within-run %v, check %v; want refused", p.WithinRun, p.Check())
	}
	// Interleaved targets are judged by a paired t-test over their
	// repeats' ratios: 3 repeats can fire, 2 cannot (the smoke preset's
	// tests are short enough for 20 ms turns).
	ilv := "interleave = \"20ms\"\n[gate]\nfail_on_regression = true\n"
	if p := mustPlan(t, specWith(t, 3, ilv)); !p.Paired || p.Check() != nil {
		t.Errorf("3 interleaved repeats: paired %v, check %v; want accepted", p.Paired, p.Check())
	} else {
		var b strings.Builder
		if err := p.Write(&b); err != nil || !strings.Contains(b.String(), "pairs judged by a paired t-test") {
			t.Errorf("plan of 3 interleaved repeats (%v) does not say they are judged as pairs:\n%s", err, b.String())
		}
	}
	if p := mustPlan(t, specWith(t, 2, ilv)); p.Paired || p.Check() == nil {
		t.Errorf("2 interleaved repeats: paired %v, check %v; want refused", p.Paired, p.Check())
	}
}

func mustPlan(t *testing.T, s spec.Spec) Plan {
	t.Helper()
	p, err := Of(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanOneTargetGate(t *testing.T) {
	s := specWith(t, 7, "[gate]\nfail_on_regression = true\n")
	s.Targets = s.Targets[:1]
	p := mustPlan(t, s)
	if p.Cells != 0 {
		t.Errorf("one target: %d cells, want 0", p.Cells)
	}
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "gate.fail_on_regression") {
		t.Errorf("one target with a gate: %v, want an error naming gate.fail_on_regression", err)
	}
}

func TestPlanWrite(t *testing.T) {
	var b strings.Builder
	if err := mustPlan(t, specWith(t, 5, "[gate]\nfail_on_regression = true\n")).Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"cells            5", "repeats          5 per target", "alpha            0.01",
		"Holm (family-wise error)", "smallest p       0.0079", "needed p         0.002", "callable         no",
		"repeats needed   7 per target", "Benjamini-Hochberg", "judged by Welch's t-test on log throughput"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
}

// TestPlanHistory: with a noise history of s = 2% (100 df) for every test,
// a gate at 2 repeats over 5 cells, which the Mann-Whitney floor refuses
// (2 vs 2 reach 1/3) and which are too few for Welch's t-test, can fire.
// Worked by hand for the marks (BH over 5 cells: p < 0.002, t(0.999, 102)
// ≈ 3.17, SE = 0.02·sqrt(2/2) = 0.02): callable = 1 − exp(−3.17·0.02) ≈
// 6.1%. One test without history keeps the refusal, naming it.
func TestPlanHistory(t *testing.T) {
	p := mustPlan(t, specWith(t, 2, "[gate]\nfail_on_regression = true\n"))
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "no noise history") {
		t.Fatalf("no history read: %v, want refused naming the missing history", err)
	}
	if len(p.Compared) != 5 || p.Compared[0].Threads != 1 {
		t.Fatalf("compared rows %+v, want 5 at 1 thread", p.Compared)
	}
	good := analysis.NoisePrior{Var: 0.0004, DF: 100, Points: 120}
	if err := p.AddHistory("h.db", func(int, string, int) (analysis.NoisePrior, error) { return good, nil }); err != nil {
		t.Fatal(err)
	}
	if !p.HistoryFires() || p.Check() != nil {
		t.Fatalf("history for every test: fires %v, check %v", p.HistoryFires(), p.Check())
	}
	if c := p.History[0].Marks.Callable; math.Abs(c-0.061) > 0.002 {
		t.Errorf("marks callable %.4f, want about 6.1%%", c)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the gate can fire with this history on every compared test") {
		t.Errorf("plan text:\n%s", b.String())
	}
	missing := p.Compared[2].Test
	if err := p.AddHistory("h.db", func(_ int, test string, _ int) (analysis.NoisePrior, error) {
		if test == missing {
			return analysis.NoisePrior{Var: 0.0004, DF: 4, Points: 6}, nil
		}
		return good, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); p.HistoryFires() || err == nil || !strings.Contains(err.Error(), "1 of the 5 compared tests have too little noise history") {
		t.Errorf("one test short of history: %v", err)
	}
}

// TestPlanNoHistoryOneLine: a store without any history of the spec's
// tests gives one line, not one per test.
func TestPlanNoHistoryOneLine(t *testing.T) {
	p := mustPlan(t, specWith(t, 3, ""))
	if err := p.AddHistory("h.db", func(int, string, int) (analysis.NoisePrior, error) { return analysis.NoisePrior{}, nil }); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "none of the 5 compared tests has history on this host") || strings.Contains(out, "no usable noise history") {
		t.Errorf("plan text:\n%s", out)
	}
}
