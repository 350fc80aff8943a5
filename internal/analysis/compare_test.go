package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normalSample returns n draws of N(mu, (cv·mu)²) from a seeded generator.
func normalSample(seed uint64, n int, mu, cv float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 42))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mu + cv*mu*r.NormFloat64()
	}
	return xs
}

func TestCompareOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		base, other []float64
		dir         Direction
		opt         CompareOptions
		want        Outcome
		warn        string
	}{
		{"clear slower throughput", normalSample(1, 10, 100, 0.01), normalSample(2, 10, 90, 0.01), HigherIsBetter, CompareOptions{}, Slower, ""},
		{"clear faster throughput", normalSample(3, 10, 100, 0.01), normalSample(4, 10, 110, 0.01), HigherIsBetter, CompareOptions{}, Faster, ""},
		{"lower-is-better: higher latency is slower", normalSample(3, 10, 100, 0.01), normalSample(4, 10, 110, 0.01), LowerIsBetter, CompareOptions{}, Slower, ""},
		{"lower-is-better: lower latency is faster", normalSample(1, 10, 100, 0.01), normalSample(2, 10, 90, 0.01), LowerIsBetter, CompareOptions{}, Faster, ""},
		{"equal with tight CI is same", normalSample(5, 20, 100, 0.002), normalSample(6, 20, 100, 0.002), HigherIsBetter, CompareOptions{}, Same, ""},
		// A 1% shift with almost no noise is significant but below MinEffect.
		{"significant but tiny is same", normalSample(7, 20, 100, 0.001), normalSample(8, 20, 101, 0.001), HigherIsBetter, CompareOptions{}, Same, ""},
		// The same 1% shift is slower once MinEffect is 0.5%.
		{"tiny shift counts with a smaller MinEffect", normalSample(7, 20, 100, 0.001), normalSample(8, 20, 99, 0.001), HigherIsBetter, CompareOptions{MinEffect: 0.005}, Slower, ""},
		// 3 vs 3 fully separated by 10%: p = 0.1 at best, no finite ratio CI.
		{"too few samples", []float64{100, 101, 102}, []float64{90, 91, 92}, HigherIsBetter, CompareOptions{}, Unknown, "at least 5 per side"},
		{"4 per side cannot reach 0.01", []float64{100, 101, 102, 103}, []float64{90, 91, 92, 93}, HigherIsBetter, CompareOptions{}, Unknown, "at least 5 per side"},
		// ...but 4 per side can reach α = 0.05 (min p 0.0286).
		{"4 per side at alpha 0.05", []float64{100, 101, 102, 103}, []float64{90, 91, 92, 93}, HigherIsBetter, CompareOptions{Alpha: 0.05}, Slower, ""},
		{"5 per side separated reaches 0.01", []float64{100, 101, 102, 103, 104}, []float64{90, 91, 92, 93, 94}, HigherIsBetter, CompareOptions{}, Slower, ""},
		{"noisy is unknown", normalSample(9, 10, 100, 0.2), normalSample(10, 10, 95, 0.2), HigherIsBetter, CompareOptions{}, Unknown, ""},
		{"empty side", nil, []float64{1, 2, 3, 4, 5}, HigherIsBetter, CompareOptions{}, Unknown, "base has 0 samples"},
		{"invalid alpha falls back", normalSample(1, 10, 100, 0.01), normalSample(2, 10, 90, 0.01), HigherIsBetter, CompareOptions{Alpha: 2}, Slower, "alpha 2 is not in (0, 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Compare(tc.base, tc.other, tc.dir, tc.opt)
			if v.Outcome != tc.want {
				t.Errorf("outcome %v, want %v (ratio %.4f CI [%.4f, %.4f] p %.4g)", v.Outcome, tc.want, v.Ratio, v.RatioLo, v.RatioHi, v.P)
			}
			checkWarning(t, v.Warnings, tc.warn)
			if v.NBase != len(tc.base) || v.NOther != len(tc.other) {
				t.Errorf("N = %d, %d; want %d, %d", v.NBase, v.NOther, len(tc.base), len(tc.other))
			}
		})
	}
}

func TestCompareRatioInterval(t *testing.T) {
	// base = e^0..e^4, other = base·e^10: the 25 log differences are
	// 10 + (j − i), i.e. 6..14 with multiplicities 1,2,3,4,5,4,3,2,1. For 5 vs
	// 5 at 95% k = 3, so the interval is [d(3), d(23)] = [e^7, e^13].
	var base, other []float64
	for i := range 5 {
		base = append(base, math.Exp(float64(i)))
		other = append(other, math.Exp(float64(i)+10))
	}
	v := Compare(base, other, HigherIsBetter, CompareOptions{})
	if math.Abs(math.Log(v.RatioLo)-7) > 1e-9 || math.Abs(math.Log(v.RatioHi)-13) > 1e-9 {
		t.Errorf("ratio CI = [e^%v, e^%v], want [e^7, e^13]", math.Log(v.RatioLo), math.Log(v.RatioHi))
	}
	if math.Abs(v.Ratio-math.Exp(10)) > 1e-6*math.Exp(10) || v.P != 2.0/252 || v.Outcome != Faster {
		t.Errorf("ratio %v p %v outcome %v; want e^10, 2/252, faster", v.Ratio, v.P, v.Outcome)
	}
}

func TestCompareRatioIntervalCoverage(t *testing.T) {
	// Over 400 seeded pairs with a true ratio of 1.05 the 95% interval should
	// cover 1.05 about 95% of the time; allow 90%..99%.
	covered := 0
	const trials = 400
	for s := range uint64(trials) {
		v := Compare(normalSample(2*s+100, 10, 100, 0.05), normalSample(2*s+101, 10, 105, 0.05), HigherIsBetter, CompareOptions{})
		if v.RatioLo <= 1.05 && 1.05 <= v.RatioHi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.90 || rate > 0.99 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
}

func TestCompareNonPositiveValues(t *testing.T) {
	base := []float64{0, 1, 2, 3, 4, 5, 6}
	other := []float64{10, 11, 12, 13, 14, 15, 16}
	v := Compare(base, other, HigherIsBetter, CompareOptions{})
	checkWarning(t, v.Warnings, "not all positive")
	if v.Outcome != Faster || !(v.RatioLo > 1) {
		t.Errorf("outcome %v CI [%v, %v]; want faster with CI above 1", v.Outcome, v.RatioLo, v.RatioHi)
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{Slower: "slower", Faster: "faster", Same: "same", Unknown: "unknown"} {
		if o.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(o), o.String(), want)
		}
	}
}

func TestRepeatsNeeded(t *testing.T) {
	// 2/C(2n,n): n=3 0.1, n=4 0.0286, n=5 0.00794, n=6 0.00216, n=7 0.000583,
	// n=8 0.000155; 0.01/32 = 0.0003125 needs 8 (the 32 sysbench tests).
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.005: 6, 0.01 / 32: 8, 0.001: 7, 0: 0} {
		if got := RepeatsNeeded(alpha); got != want {
			t.Errorf("RepeatsNeeded(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestHolmBonferroni(t *testing.T) {
	nan := math.NaN()
	testRejections(t, HolmBonferroni, []rejectCase{
		// m=4, α=0.05. Sorted 0.011 < 0.05/4, 0.015 < 0.05/3, 0.02 < 0.05/2,
		// 0.3 ≥ 0.05: three rejections where Bonferroni (0.0125) gives one.
		{"step-down beats Bonferroni", []float64{0.011, 0.3, 0.015, 0.02}, 0.05, []bool{true, false, true, true}},
		// Sorted 0.001 < 0.0125 rejects; 0.02 ≥ 0.0167 stops, so 0.024 is kept
		// although it is below its own bound 0.025.
		{"first failure stops", []float64{0.02, 0.001, 0.9, 0.024}, 0.05, []bool{false, true, false, false}},
		{"none", []float64{0.5, 0.2}, 0.05, []bool{false, false}},
		{"single test is plain alpha", []float64{0.049}, 0.05, []bool{true}},
		{"strict inequality", []float64{0.025, 0.025}, 0.05, []bool{false, false}},
		// With m=3, 0.03 ≥ 0.05/2 is kept; were the NaN not counted (m=2) it
		// would be rejected (0.03 < 0.05/1).
		{"NaN never rejected, counts in m", []float64{nan, 0.03, 0.001}, 0.05, []bool{false, false, true}},
		{"empty", nil, 0.05, []bool{}},
	})
}
