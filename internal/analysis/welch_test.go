package analysis

import (
	"math"
	"strings"
	"testing"
)

// TestWelchTest: base logs {0, 0.1, 0.2} (variance 0.01) against other
// {1, 1.3, 1.6, 1.9} (variance 0.15): SE² = 0.01/3 + 0.15/4 = 0.040833,
// t = 1.35/0.20207 = 6.681, Welch-Satterthwaite df = 0.040833² /
// ((0.01/3)²/2 + (0.15/4)²/3) = 3.515, two-sided p = 0.00408 (numerical
// integration of Student's density at that df).
func TestWelchTest(t *testing.T) {
	w := WelchTest([]float64{0, 0.1, 0.2}, []float64{1, 1.3, 1.6, 1.9})
	near(t, "D", w.D, 1.35, 1e-12)
	near(t, "SE", w.SE, 0.2020726, 1e-6)
	near(t, "DF", w.DF, 3.515373, 1e-5)
	near(t, "P", w.P, 0.0040838, 2e-6)
	// The interval at the level whose tail is P just touches 0 on the log
	// scale: exp(D - q·SE) = 1.
	lo, hi := w.Interval(1 - w.P)
	near(t, "lo at 1-P", lo, 1, 1e-6)
	near(t, "hi at 1-P", hi, math.Exp(2*1.35), 1e-4)
	// Equal samples: no difference, p 1; a difference with no spread, p 0.
	if w := WelchTest([]float64{1, 1, 1}, []float64{1, 1, 1}); w.P != 1 {
		t.Errorf("equal constant samples: p %v, want 1", w.P)
	}
	if w := WelchTest([]float64{1, 1, 1}, []float64{2, 2, 2}); w.P != 0 {
		t.Errorf("different constant samples: p %v, want 0", w.P)
	}
}

// TestDixonOutlier: Q is the lone value's gap over the range, compared
// with Rorabacher's 95% critical value (0.710 at 5 values, 0.970 at 3).
func TestDixonOutlier(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		i    int
		q    float64
		flag bool
	}{
		{[]float64{10, 10.2, 10.1, 10.3, 13}, 4, 2.7 / 3, true},     // Q 0.900 > 0.710
		{[]float64{10, 10.2, 10.4, 10.6, 12.2}, 4, 1.6 / 2.2, true}, // Q 0.727 > 0.710
		{[]float64{10, 10.2, 10.4, 10.6, 12}, -1, 1.4 / 2, false},   // Q 0.700 < 0.710
		{[]float64{7, 10.2, 10.1, 10.3, 10}, 0, 3 / 3.3, true},      // the low end
		{[]float64{10, 10.1, 13}, -1, 2.9 / 3, false},               // Q 0.967 < 0.970
		{[]float64{10, 10.05, 13}, 2, 2.95 / 3, true},               // Q 0.983
		{[]float64{10, 13}, -1, 0, false},                           // too few
		{[]float64{5, 5, 5}, -1, 0, false},                          // no range
		{make([]float64, 11), -1, 0, false},                         // too many for the table
	} {
		i, q, ok := DixonOutlier(c.xs)
		if ok != c.flag || i != c.i || math.Abs(q-c.q) > 1e-9 {
			t.Errorf("%v: index %d Q %.4f flagged %v; want %d %.4f %v", c.xs, i, q, ok, c.i, c.q, c.flag)
		}
	}
}

// TestCompareNoiseWelchGuard: without history, 3 or more runs a side are
// judged by Welch's t-test unless an outlier decides its call.
func TestCompareNoiseWelchGuard(t *testing.T) {
	base := runs(100, 101, 99, 100.5, 99.5)
	// A tenfold slowdown with one run of the slower side stalled further:
	// Dixon flags it, the call is slower with it and without it, so it is
	// set aside and the t-test judges the other four.
	v, ev := CompareNoise(base, runs(10, 10.1, 9.9, 10.05, 3), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if v.Outcome != Slower || ev.Basis != BasisRepeatsWelch || ev.NOther != 4 || len(ev.Left[1]) != 1 || ev.Left[1][0] != 4 ||
		!strings.Contains(ev.String(), "other run 5 of 5 (-70.0% from its others, Dixon Q 0.98) set aside as an outlier") {
		t.Errorf("stalled run of a tenfold slowdown: %v p %.2g (%s), want slower on 5/4 with run 5 set aside", v.Outcome, v.P, ev)
	}
	if !(v.P < 1e-6) || v.RatioHi > 0.11 || v.RatioLo < 0.09 {
		t.Errorf("tenfold: p %.2g ratio [%.3f, %.3f], want p < 1e-6 and an interval around 0.1", v.P, v.RatioLo, v.RatioHi)
	}
	// A 5% slowdown that a stalled run hides from the t-test (with it t is
	// about 1.4): the outlier decides the call, so the ranks judge, and the
	// evidence says why.
	v, ev = CompareNoise(base, runs(95, 95.5, 94.5, 95.2, 70), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if ev.Basis != BasisRepeats || !strings.Contains(ev.Guard, "other run 5 of 5") || !strings.Contains(ev.Guard, "the t-test's call rests on it") ||
		!strings.HasPrefix(ev.String(), "repeats only 5/5, ranks: other run 5 of 5") || ev.Brief() != "repeats only 5/5, ranks: an outlier decides the t-test" {
		t.Errorf("outlier deciding the call: %v (%s; brief %q), want ranks with the reason", v.Outcome, ev, ev.Brief())
	}
	if mw := Compare(values5(base), []float64{95, 95.5, 94.5, 95.2, 70}, HigherIsBetter, CompareOptions{}); v.P != mw.P {
		t.Errorf("fallback p %.4g, want Mann-Whitney's %.4g", v.P, mw.P)
	}
	// A fast outlier (a disturbance slows a run, so it is no disturbance)
	// that does not change the call is kept and named.
	v, ev = CompareNoise(base, runs(50, 50.5, 49.5, 50.2, 65), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if v.Outcome != Slower || ev.Basis != BasisRepeatsWelch || ev.NOther != 5 || len(ev.Left[1]) != 0 ||
		!strings.Contains(ev.String(), "other run 5 of 5 (+29.9% from its others, Dixon Q 0.93) kept: the call is the same without it") {
		t.Errorf("fast outlier: %v (%s), want slower on 5/5 with run 5 kept", v.Outcome, ev)
	}
	// A run that completed no operation (throughput 0, a stall) has no
	// log: set aside, the other runs judged.
	v, ev = CompareNoise(runs(100, 101, 0, 99, 100.5), runs(10, 10.1, 9.9, 10.05, 10.2), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if v.Outcome != Slower || ev.Basis != BasisRepeatsWelch || ev.NBase != 4 || len(ev.Left[0]) != 1 || ev.Left[0][0] != 2 ||
		!strings.Contains(ev.String(), "base run 3 of 5 completed no operation (a stall), set aside") || v.MedianBase != 100.25 {
		t.Errorf("stalled base run: %v median %v (%s), want slower on 4/5 with run 3 set aside", v.Outcome, v.MedianBase, ev)
	}
	// A side of 3 with an outlier cannot be checked without it (2 runs
	// left): the t-test keeps it, which only widens its interval (t =
	// -3.4 with about 2 df, p 0.07: no call), and says so.
	v, ev = CompareNoise(runs(100, 101, 99), runs(50, 50.1, 80), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if ev.Basis != BasisRepeatsWelch || v.Outcome != Unknown || ev.NOther != 3 || ev.Guard != "" ||
		!strings.Contains(ev.String(), "other run 3 of 3 (+59.8% from its others, Dixon Q 1.00) kept: a side of 3 cannot be judged without it") {
		t.Errorf("outlier in a side of 3: %v p %.2g (%s), want Welch's test with the run kept, no call", v.Outcome, v.P, ev)
	}
	// A lone far run cannot make a call: other runs 0, 0, δ against a
	// quiet base give t of about 1.
	v, ev = CompareNoise(runs(100, 100.1, 99.9), runs(100, 100.05, 150), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if v.Outcome == Faster || v.Outcome == Slower || v.P < 0.2 {
		t.Errorf("lone far run: %v p %.2g (%s), want no call", v.Outcome, v.P, ev)
	}
}

func values5(rs []Run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}
