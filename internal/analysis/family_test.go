package analysis

import (
	"errors"
	"math"
	"testing"
)

// separated returns n values around mu that do not overlap another such
// sample 10% away, so each cell reaches the floor 2/C(2n, n).
func separated(n int, mu float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu * (1 + 0.002*float64(i))
	}
	return out
}

// TestCompareFamilyCorrection is the calibration's synchronous experiment in
// miniature: five cells, each 10% slower with 5 repeats per side, so every
// p is 2/252 = 0.0079. Alone each is below 0.01; under Holm the smallest
// needs 0.01/5 = 0.002 and none is called; under BH all five are, since the
// fifth bound is 5·0.01/5 = 0.01 > 0.0079. One slower cell among four
// unchanged ones is not called under BH either (q = 5·0.0079 = 0.04).
func TestCompareFamilyCorrection(t *testing.T) {
	var all []Pair
	for range 5 {
		all = append(all, Pair{Base: separated(5, 100), Other: separated(5, 90), Dir: HigherIsBetter})
	}
	count := func(f Family, o Outcome) int {
		n := 0
		for _, v := range f.Verdicts {
			if v.Outcome == o {
				n++
			}
		}
		return n
	}
	bh := CompareFamily(all, CompareOptions{Correction: BH})
	if n := count(bh, Slower); n != 5 {
		t.Errorf("BH: %d slower, want 5; %+v", n, bh.Verdicts)
	}
	if v := bh.Verdicts[0]; v.Evidence != EvidenceRepeats || v.Correction != BH || math.Abs(v.P-MinPValue(5, 5)) > 1e-12 {
		t.Errorf("BH verdict %+v: want evidence repeats, correction bh, p at the floor", v)
	}
	if bh.Power.Callable || bh.Power.MinChanged != 4 {
		t.Errorf("BH power %+v: want a lone change not callable, 4 cells together callable", bh.Power)
	}
	holm := CompareFamily(all, CompareOptions{Correction: Holm})
	if n := count(holm, Slower); n != 0 {
		t.Errorf("Holm: %d slower, want 0", n)
	}
	if n := count(holm, Unknown); n != 5 {
		t.Errorf("Holm: %d unknown, want 5", n)
	}
	if q := holm.Verdicts[0].PAdjusted; math.Abs(q-5*MinPValue(5, 5)) > 1e-12 {
		t.Errorf("Holm adjusted p %v, want 5·2/252", q)
	}
	lone := []Pair{all[0]}
	for range 4 {
		lone = append(lone, Pair{Base: separated(5, 100), Other: separated(5, 100.0001), Dir: HigherIsBetter})
	}
	if n := count(CompareFamily(lone, CompareOptions{}), Slower); n != 0 {
		t.Errorf("one slower cell among five under BH: %d called, want 0", n)
	}
}

// fixedJudge claims the cell named key with its own p-value.
type fixedJudge struct {
	key string
	p   float64
}

func (j fixedJudge) Judge(c Pair, repeats Verdict, opt CompareOptions) (Verdict, bool) {
	if c.Key != j.key {
		return Verdict{}, false
	}
	v := repeats
	v.P, v.Evidence = j.p, "test judge"
	return v, true
}

// TestCompareFamilyJudge: a judge's verdict replaces the repeats' one for
// its cell, takes part in the correction and says its evidence.
func TestCompareFamilyJudge(t *testing.T) {
	cells := []Pair{
		{Key: "a", Base: []float64{100, 101, 99}, Other: []float64{80, 81, 79}, Dir: HigherIsBetter},
		{Key: "b", Base: []float64{100, 101, 99}, Other: []float64{80, 81, 79}, Dir: HigherIsBetter},
	}
	f := CompareFamily(cells, CompareOptions{Correction: Holm, Judges: []Judge{fixedJudge{"b", 1e-6}}})
	if v := f.Verdicts[0]; v.Evidence != EvidenceRepeats || v.Outcome != Unknown {
		t.Errorf("cell a: %+v, want unknown from repeats (3 vs 3 cannot reach 0.01)", v)
	}
	if v := f.Verdicts[1]; v.Evidence != "test judge" || v.Outcome != Slower || v.PAdjusted != 2e-6 {
		t.Errorf("cell b: %+v, want slower from the judge with Holm p 2e-6", v)
	}
}

// TestGate: the five-cell family above at 5 repeats cannot fail a Holm gate
// (smallest p 2/252 against 0.01/5), fails it at 7 repeats (2/3432 <
// 0.002), and fails a BH gate at 5 repeats because all five cells move.
// A 3% slowdown is significant but below the 5% threshold.
func TestGate(t *testing.T) {
	family := func(n int, ratio float64) []Verdict {
		var vs []Verdict
		for range 5 {
			vs = append(vs, Compare(separated(n, 100), separated(n, 100*ratio), HigherIsBetter, CompareOptions{}))
		}
		return vs
	}
	for _, tc := range []struct {
		name    string
		vs      []Verdict
		opt     GateOptions
		canFire bool
		failed  int
	}{
		{"holm 5 repeats", family(5, 0.9), GateOptions{}, false, 0},
		{"holm 7 repeats", family(7, 0.9), GateOptions{}, true, 5},
		{"bh 5 repeats", family(5, 0.9), GateOptions{Correction: BH}, true, 5},
		{"below threshold", family(7, 0.97), GateOptions{}, true, 0},
		{"faster never fails", family(7, 1.2), GateOptions{}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gate(tc.vs, tc.opt)
			if CanFire(g.Power) != tc.canFire || len(g.Failed) != tc.failed {
				t.Errorf("can fire %v, failed %v; want %v, %d (power %v)", CanFire(g.Power), g.Failed, tc.canFire, tc.failed, g.Power)
			}
		})
	}
	// Latency: a 10% higher cost is a slowdown.
	var lat []Verdict
	for range 2 {
		lat = append(lat, Compare(separated(7, 100), separated(7, 110), LowerIsBetter, CompareOptions{}))
	}
	if g := Gate(lat, GateOptions{}); len(g.Failed) != 2 {
		t.Errorf("latency +10%%: failed %v, want both cells", g.Failed)
	}
}

func TestGateOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		opt   GateOptions
		field string
	}{
		{GateOptions{}.WithDefaults(), ""},
		{GateOptions{}, "alpha"},
		{GateOptions{Alpha: 1.5}.WithDefaults(), "alpha"},
		{GateOptions{Threshold: -0.1}.WithDefaults(), "threshold"},
		{GateOptions{MinEffect: 1}.WithDefaults(), "min_effect"},
		{GateOptions{Correction: "fdr"}.WithDefaults(), "correction"},
	} {
		err := tc.opt.Check()
		var fe *GateFieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v, want no error", tc.opt, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%+v: %v, want an error naming %s", tc.opt, err, tc.field)
		}
	}
}
