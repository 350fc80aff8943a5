package analysis

import (
	"math"
	"strings"
	"testing"
)

// seq returns the values 1..n in descending order, so the tests also check
// that Summarize sorts.
func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(n - i)
	}
	return xs
}

func TestSummarizeMedianCI(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name       string
		xs         []float64
		confidence float64
		median     float64
		lo, hi     float64
		warn       string // substring of a warning, "" for none
	}{
		// Binomial(6,1/2): [x(1), x(6)] covers 62/64 = 0.969, [x(2), x(6)] only 0.89.
		{"n=6 is the smallest finite 95% interval", seq(6), 0.95, 3.5, 1, 6, ""},
		// n=5: even [x(1), x(5)] covers only 30/32 = 0.9375 < 0.95.
		{"n=5 is too few at 95%", seq(5), 0.95, 3, -inf, 5, "need at least 6"},
		// Textbook: n=10 gives [x(2), x(9)] with coverage 1 − 2·11/1024 = 0.979.
		{"n=10", seq(10), 0.95, 5.5, 2, 9, ""},
		// n=20 gives [x(6), x(15)], coverage 0.9586 (tables of median CIs).
		{"n=20", seq(20), 0.95, 10.5, 6, 15, ""},
		// n=100 uses the normal approximation: ranks 50.5 ∓ 1.96·5 → 40 and 61.
		{"n=100 normal approximation", seq(100), 0.95, 50.5, 40, 61, ""},
		// 99% needs 1 − 2/2^n ≥ 0.99, i.e. n ≥ 8; at n=7 the greedy
		// growth reaches 127/128 by adding x(0) = −Inf (ties go left).
		{"n=7 at 99%", seq(7), 0.99, 4, -inf, 7, "need at least 8"},
		{"n=8 at 99%", seq(8), 0.99, 4.5, 1, 8, ""},
		{"invalid confidence falls back to 95%", seq(6), 1.5, 3.5, 1, 6, "not in (0, 1)"},
		{"NaN dropped", append(seq(6), math.NaN()), 0.95, 3.5, 1, 6, "dropped 1 non-finite"},
		{"empty", nil, 0.95, math.NaN(), -inf, inf, "no samples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.xs, tc.confidence)
			if !sameFloat(s.Median, tc.median) || s.Lo != tc.lo || s.Hi != tc.hi {
				t.Errorf("got median %v CI [%v, %v], want %v [%v, %v]", s.Median, s.Lo, s.Hi, tc.median, tc.lo, tc.hi)
			}
			checkWarning(t, s.Warnings, tc.warn)
		})
	}
}

func TestSummarizeDoesNotModifyInput(t *testing.T) {
	xs := []float64{3, 1, 2, 6, 5, 4}
	Summarize(xs, 0.95)
	if xs[0] != 3 || xs[5] != 4 {
		t.Errorf("input was modified: %v", xs)
	}
}

func TestMedianCICoverage(t *testing.T) {
	// The chosen ranks must reach the confidence: P(l ≤ B ≤ r−1) ≥ c.
	for n := 6; n <= 30; n++ {
		l, r := medianCIRanks(n, 0.95)
		pmf := binomialHalfPMF(n)
		var cover float64
		for k := l; k < r; k++ {
			cover += pmf[k]
		}
		if cover < 0.95 {
			t.Errorf("n=%d: ranks [%d, %d] cover %.4f < 0.95", n, l, r, cover)
		}
	}
}

// sameFloat compares two floats, treating NaNs as equal.
func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// checkWarning fails unless some warning contains want, or, when want is
// empty, unless there are no warnings.
func checkWarning(t *testing.T, warns []string, want string) {
	t.Helper()
	if want == "" {
		if len(warns) > 0 {
			t.Errorf("unexpected warnings %q", warns)
		}
		return
	}
	for _, w := range warns {
		if strings.Contains(w, want) {
			return
		}
	}
	t.Errorf("warnings %q lack %q", warns, want)
}
