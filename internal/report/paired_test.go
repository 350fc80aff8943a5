package report

import (
	"math"
	"testing"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// pairedData is an experiment of two targets, 3 repeats, whose
// point-query results are interleaved (turn) or not (turn 0): the base
// ran 100, 80 and 120 queries a second in repeats 1-3, the other target
// 0.9 of that in each, as a machine that slows both alike gives.
func pairedData(turn float64) (*Data, []store.Result, []store.Result) {
	d := &Data{Experiment: store.Experiment{ID: 1, Base: "base"}, Results: map[int64][]store.Result{}}
	var base, other []store.Result
	for i, v := range []float64{100, 80, 120} {
		for j, t := range []string{"base", "other"} {
			run := store.Run{ID: int64(10*i + j + 1), ExperimentID: 1, Target: t, Repeat: i + 1, Status: store.StatusOK}
			q := v
			if t == "other" {
				q = 0.9 * v
			}
			r := store.Result{RunID: run.ID, Test: "point-query", Threads: 1, Metric: "qps", Status: store.StatusOK,
				Statements: int64(q * 1000), Seconds: 1000, Facts: map[string]float64{store.FactInterleave: turn}}
			d.Runs = append(d.Runs, run)
			d.Results[run.ID] = []store.Result{r}
			if t == "base" {
				base = append(base, r)
			} else {
				other = append(other, r)
			}
		}
	}
	return d, base, other
}

// TestPairedRuns works the pairs of an interleaved cell by hand: the base's
// runs all become the geometric mean of 100, 80 and 120 (98.65), the
// other's 0.9 of it, so with a prior of 1% per run (Var 1e-4, 20 degrees
// of freedom) the verdict is slower at exactly 0.9, its interval tight,
// the evidence naming the pairs and the medians the measured ones (100
// and 90). The same values measured one target after the other are not
// pairs: ok is false, and judged as independent repeats (the base's spread
// of 20% swamping the 10%) they are not called.
func TestPairedRuns(t *testing.T) {
	d, base, other := pairedData(0.02)
	b, o, ok := d.pairedRuns(base, other)
	if !ok || len(b) != 3 || len(o) != 3 {
		t.Fatalf("pairs: ok %v, %d and %d runs", ok, len(b), len(o))
	}
	g := math.Cbrt(100 * 80 * 120)
	for i := range b {
		if math.Abs(b[i].Value-g) > 1e-9 || math.Abs(o[i].Value-0.9*g) > 1e-9 {
			t.Errorf("pair %d: %.4f and %.4f, want %.4f and %.4f", i, b[i].Value, o[i].Value, g, 0.9*g)
		}
	}
	d.Noise = nil
	prior := analysis.NoisePrior{Var: 1e-4, DF: 20, Points: 40}
	v, ev := analysis.CompareNoise(b, o, analysis.HigherIsBetter, prior,
		analysis.NoiseOptions{CompareOptions: analysis.CompareOptions{Alpha: 0.01}, Paired: true})
	if v.Outcome != analysis.Slower || math.Abs(v.Ratio-0.9) > 1e-9 || v.RatioLo < 0.87 || v.RatioHi > 0.93 {
		t.Errorf("verdict %s ratio %.4f [%.4f-%.4f] p %.3g, want slower at 0.9", v.Outcome, v.Ratio, v.RatioLo, v.RatioHi, v.P)
	}
	if got := ev.String(); got[:18] != "interleaved pairs," {
		t.Errorf("evidence %q, want it to name the interleaved pairs", got)
	}
	jv, _ := d.judge(base, other, "base", "other", cellKey{test: "point-query", threads: 1}, VerdictOptions{Alpha: 0.01})
	if jv.MedianBase != 100 || jv.MedianOther != 90 {
		t.Errorf("medians %.1f and %.1f, want the measured 100 and 90", jv.MedianBase, jv.MedianOther)
	}

	d0, base0, other0 := pairedData(0)
	if _, _, ok := d0.pairedRuns(base0, other0); ok {
		t.Error("results measured one target after the other taken as pairs")
	}
	u, _ := analysis.CompareNoise(d0.runValues(base0, 0), d0.runValues(other0, 0), analysis.HigherIsBetter, prior,
		analysis.NoiseOptions{CompareOptions: analysis.CompareOptions{Alpha: 0.01}})
	if u.Outcome == analysis.Slower {
		t.Errorf("unpaired verdict %s (p %.3g): the base's own spread should keep 10%% from being called", u.Outcome, u.P)
	}
}

// TestPairedWithoutHistory works a paired t-test by hand: with no history,
// pairs whose ratios are 0.9, 0.91 and 0.89 have log ratios of mean
// -0.10540 and standard deviation 0.01111, so t = 0.10540/(0.01111/sqrt 3)
// = 16.4 with 2 degrees of freedom, p = 0.0037: slower at alpha 0.01,
// which 3 against 3 repeats judged as independent could not be (the
// Mann-Whitney floor is 0.1).
func TestPairedWithoutHistory(t *testing.T) {
	g := 100.0
	b := []analysis.Run{{Value: g, RelVar: math.NaN()}, {Value: g, RelVar: math.NaN()}, {Value: g, RelVar: math.NaN()}}
	o := []analysis.Run{{Value: 0.9 * g, RelVar: math.NaN()}, {Value: 0.91 * g, RelVar: math.NaN()}, {Value: 0.89 * g, RelVar: math.NaN()}}
	v, ev := analysis.CompareNoise(b, o, analysis.HigherIsBetter, analysis.NoisePrior{},
		analysis.NoiseOptions{CompareOptions: analysis.CompareOptions{Alpha: 0.01}, Paired: true})
	if v.Outcome != analysis.Slower || ev.DF != 2 || math.Abs(v.P-0.0037) > 0.0003 {
		t.Errorf("verdict %s p %.4g df %d, want slower, p 0.0037, 2 df", v.Outcome, v.P, ev.DF)
	}
	if got := ev.String(); got != "interleaved pairs, repeats 3/3, t-test on their own variance" {
		t.Errorf("evidence %q", got)
	}
}
