package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPriorPowerHandWorked checks PriorPowerOf against figures worked by
// hand with a t table.
func TestPriorPowerHandWorked(t *testing.T) {
	// s = 2% with 1000 df, 3 repeats per side, one cell at alpha 0.01:
	// SE = 0.02·sqrt(2/3) = 0.016330, q = t(0.995, 1004) ≈ 2.5808, so
	// callable = 1 − exp(−2.5808·0.016330) = 1 − exp(−0.042145) = 4.13%,
	// and 90%: 1 − exp(−(2.5808 + 1.2816)·0.016330) = 1 − exp(−0.063073) = 6.11%.
	p := PriorPowerOf(NoisePrior{Var: 0.0004, DF: 1000, Points: 1200}, 3, 1, 0.01, Holm, 0, 0)
	if !p.Usable || p.DF != 1004 || p.Threshold != 0.01 {
		t.Fatalf("power %+v, want usable with 1004 df and threshold 0.01", p)
	}
	near(t, "SE", p.SE, 0.016330, 1e-6)
	near(t, "callable", p.Callable, 0.04127, 2e-4)
	near(t, "likely", p.Likely, 0.06113, 2e-4)

	// A single run per side, s = 5% with 10 df, no correction: q = t(0.995,
	// 10) = 3.169, SE = 0.05·sqrt(2) = 0.070711, callable = 1 − exp(−0.22408)
	// = 20.07%: a 30% change is callable from one run, 10% is not.
	p = PriorPowerOf(NoisePrior{Var: 0.0025, DF: 10, Points: 15}, 1, 1, 0.01, NoCorrection, 0, 0)
	near(t, "single-run callable", p.Callable, 0.2007, 1e-3)
	if !strings.Contains(p.String(), "20.1% can be called") {
		t.Errorf("String() = %q", p.String())
	}

	// The same history on a host that disturbed 2 of 100 runs, by 0.5 and
	// 0.3 on the log scale (rate 2%, above the threshold 0.01): a change
	// is callable only when at most one shift explains it (p + 0.01 < 0.01
	// never holds, so none may): |d| − 2·SE > 0.5, d > 0.5 + 0.141 = 0.641,
	// a slowdown of 1 − exp(−0.641) = 47.3%; 3 repeats are not touched.
	dist := NoisePrior{Var: 0.0025, DF: 10, Points: 98, AsidePoints: 2, Shifts: []float64{0.5, 0.3}}
	p = PriorPowerOf(dist, 1, 1, 0.01, NoCorrection, 0, 0)
	near(t, "disturbed single-run callable", p.Callable, 1-math.Exp(-(0.5+2*0.070711)), 2e-3)
	if !p.Disturbed || !strings.Contains(p.String(), "raised by the 2 of 100 history runs this host disturbed") {
		t.Errorf("disturbed host: %+v %q", p, p.String())
	}
	if p3 := PriorPowerOf(dist, 3, 1, 0.01, NoCorrection, 0, 0); p3.Disturbed {
		t.Errorf("3 repeats on a disturbed host: %+v, want untouched", p3)
	}

	// Under BH over 7 cells a lone change needs p < 0.01/7.
	p = PriorPowerOf(NoisePrior{Var: 0.0004, DF: 1000}, 3, 7, 0.01, BH, 0, 0)
	near(t, "threshold", p.Threshold, 0.01/7, 1e-12)
	if p.Callable <= 0.0413 {
		t.Errorf("7 cells: callable %.4f, want larger than one cell's 4.13%%", p.Callable)
	}

	// A tiny noise is floored at the minimum effect (2%).
	p = PriorPowerOf(NoisePrior{Var: 1e-8, DF: 100}, 3, 1, 0.01, Holm, 0, 0)
	if p.Callable != DefaultMinEffect || p.Likely != DefaultMinEffect {
		t.Errorf("tiny noise: callable %v likely %v, want the 2%% minimum effect", p.Callable, p.Likely)
	}

	// Too little history: not usable, and the text says why.
	p = PriorPowerOf(NoisePrior{Var: 0.0004, DF: 9, Points: 12}, 3, 1, 0.01, Holm, 0, 0)
	if p.Usable || p.Callable != 0 || !strings.Contains(p.String(), "9 degrees of freedom, 10 needed") {
		t.Errorf("9 df: %+v %q, want not usable", p, p.String())
	}
	if p := PriorPowerOf(NoisePrior{}, 3, 1, 0.01, Holm, 0, 0); p.Usable || !strings.Contains(p.String(), "no noise history") {
		t.Errorf("no history: %q", p.String())
	}
	if math.IsNaN(p.SE) {
		t.Error("SE NaN")
	}
}

// TestFirstSignificantStepNoise: with a noise prior a sequence step is
// found from a single run per version, or from 3 repeats, where the
// Mann-Whitney floor of the repeats alone (1 for 1 vs 1, 0.1 for 3 vs 3)
// finds nothing. Worked by hand:
//
//	single runs 100, 100, 80 with s² = 0.0004 (1000 df): step 2 has
//	d = ln 0.8 = −0.22314, SE = sqrt(2·0.0004) = 0.028284, t = −7.89;
//
//	3 repeats 100, 101, 99 then 90, 91, 89 with s² = 0.0004 (10 df):
//	d = −0.105368, SS = 0.00020002 + 0.00024695 = 0.00044697 (4 df),
//	pooled s² = (10·0.0004 + 0.00044697)/14 = 0.00031764,
//	SE = sqrt(s²·2/3) = 0.014552, t = −7.241 with 14 df: p ≈ 4e-6.
func TestFirstSignificantStepNoise(t *testing.T) {
	one := func(vs ...float64) []Run { return runs(vs...) }
	prior := NoisePrior{Var: 0.0004, DF: 1000, Points: 1100}
	groups := [][]Run{one(100), one(100), one(80)}
	st := FirstSignificantStepNoise(groups, HigherIsBetter, []NoisePrior{prior, prior}, NoiseOptions{})
	if !st.Found || st.Index != 2 || st.Verdict.Outcome != Slower {
		t.Fatalf("single runs with a prior: %+v, want slower at step 2", st)
	}
	near(t, "ratio", st.Verdict.Ratio, 0.8, 1e-12)
	if z := -math.Log(0.8) / math.Sqrt(2*0.0004); math.Abs(z-7.889) > 1e-3 {
		t.Fatalf("hand figure t = %.4f", z)
	}
	if st.Verdict.P > 1e-12 || st.Verdict.PAdjusted != math.Min(1, 2*st.Verdict.P) {
		t.Errorf("p %v, Holm %v: want tiny p, Holm over 2 steps doubling it", st.Verdict.P, st.Verdict.PAdjusted)
	}
	if e := st.Evidence[1]; e.Basis != BasisPrior || !e.SingleRun() || !st.Beyond() {
		t.Errorf("evidence %+v, want the prior from single runs", e)
	}
	// The same single runs without history: no step, repeats only, and the
	// power says why.
	old := FirstSignificantStep([][]float64{{100}, {100}, {80}}, HigherIsBetter, CompareOptions{})
	if old.Found || old.Beyond() || old.Power.Callable {
		t.Errorf("without history: %+v, want nothing found on repeats alone", old)
	}

	base, down := one(100, 101, 99), one(90, 91, 89)
	st = FirstSignificantStepNoise([][]Run{base, down}, HigherIsBetter, []NoisePrior{{Var: 0.0004, DF: 10, Points: 15}}, NoiseOptions{})
	if !st.Found || st.Index != 1 || st.Evidence[0].DF != 14 {
		t.Fatalf("3 repeats with a prior: %+v, want a step at 1 with 14 df", st)
	}
	near(t, "ratio 3 repeats", st.Verdict.Ratio, 0.9, 1e-4)
	if p := st.Verdict.P; p < 1e-6 || p > 1e-5 {
		t.Errorf("p = %v, want about 4e-6 (t = -7.24, 14 df)", p)
	}
	// Without history, 3 against 3 are judged by Welch's t-test on log
	// values (t = -12.2 with 4 df), which the ranks' floor of 0.1 does not
	// bind.
	if rep := FirstSignificantStep([][]float64{{100, 101, 99}, {90, 91, 89}}, HigherIsBetter, CompareOptions{}); !rep.Found ||
		rep.Evidence[0].Basis != BasisRepeatsWelch || rep.Verdict.P > 0.001 {
		t.Errorf("3 vs 3 on repeats alone: %+v, want the step found by Welch's test", rep)
	}
}

// TestPoolHistory: ten entries of s² = 0.0004 with 2 df each (20 df) and
// one of 0.01 (a loaded hour, 25 times the rest): P(F(2, 20) ≥ 25) =
// (20/70)^10 = 3.6e-6 (I_x(a, 1) = x^a), below 0.001, so it is set aside
// and the prior stays 0.0004 with 20 df instead of (0.008 + 0.02)/22 =
// 0.00127. An entry of 4 times the rest, P = (20/28)^10 = 0.035, stays:
// (0.008 + 0.0032)/22 = 0.000509.
func TestPoolHistory(t *testing.T) {
	near(t, "F(2,2) tail at 3", fUpper(3, 2, 2), 0.25, 1e-12)
	near(t, "F(2,20) tail at 25", fUpper(25, 2, 20), math.Pow(20.0/70, 10), 1e-12)
	var es []NoisePrior
	for range 10 {
		es = append(es, NoisePrior{Var: 0.0004, DF: 2, Points: 3})
	}
	p, n := PoolHistory(append(slices.Clone(es), NoisePrior{Var: 0.01, DF: 2, Points: 3}))
	if n != 1 || p.DF != 20 || p.Points != 30 || p.SetAside != 1 {
		t.Errorf("loaded entry: %+v, %d set aside; want it set aside", p, n)
	}
	near(t, "var without the loaded entry", p.Var, 0.0004, 1e-15)
	// One run of 3 moved by δ gives the entry a variance of δ²/3: 0.01 is a
	// shift of sqrt(0.03), and the host disturbed 1 of its 33 runs.
	if len(p.Shifts) != 1 || p.AsidePoints != 3 {
		t.Fatalf("loaded entry: shifts %v, %d runs aside; want one shift of 3 runs", p.Shifts, p.AsidePoints)
	}
	near(t, "shift", p.Shifts[0], math.Sqrt(0.03), 1e-12)
	near(t, "disturbed rate", p.DisturbedRate(), 1.0/33, 1e-12)
	if c := CombinePrior(p, p); len(c.Shifts) != 2 || c.AsidePoints != 6 || c.DisturbedRate() != 1.0/33 {
		t.Errorf("combined: %+v, want both shifts and the same rate", c)
	}
	plain := CombinePrior(NoisePrior{Var: 0.0004, DF: 20}, NoisePrior{Var: 0.01, DF: 2})
	near(t, "old pooled var", plain.Var, 0.028/22, 1e-12)

	p, n = PoolHistory(append(slices.Clone(es), NoisePrior{Var: 0.0016, DF: 2, Points: 3}))
	if n != 0 || p.DF != 22 {
		t.Errorf("4x entry: %+v, %d set aside; want kept", p, n)
	}
	near(t, "var with the 4x entry", p.Var, 0.0112/22, 1e-12)
	if p, n := PoolHistory(nil); n != 0 || p.DF != 0 {
		t.Errorf("empty: %+v", p)
	}
	ev := NoiseEvidence{Basis: BasisPrior, NBase: 3, NOther: 3, Prior: NoisePrior{Var: 0.0004, DF: 20, Points: 30, SetAside: 1}}
	if !strings.Contains(ev.String(), "1 noisy entries set aside") {
		t.Errorf("evidence %q does not say an entry was set aside", ev)
	}
}
