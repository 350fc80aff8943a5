package analysis

import (
	"math"
	"testing"
)

// TestAdjustHandWorked checks both procedures on a family worked by hand
// (m = 4, alpha = 0.05). Sorted: 0.001, 0.03, 0.035, 0.2.
//
//	BH bounds k·0.05/4: 0.0125, 0.025, 0.0375, 0.05. The largest k with
//	p_(k) below its bound is 3 (0.035 < 0.0375), so the three smallest are
//	rejected, 0.03 too although it misses its own bound (step-up).
//	q: q_(4) = 0.2, q_(3) = min(0.2, 4·0.035/3) = 0.046667, q_(2) =
//	min(0.046667, 4·0.03/2 = 0.06) = 0.046667, q_(1) = 4·0.001/1 = 0.004.
//	Holm: 4·0.001 = 0.004, max(0.004, 3·0.03) = 0.09, max(0.09, 2·0.035)
//	= 0.09, max(0.09, 0.2) = 0.2: only the first is rejected.
func TestAdjustHandWorked(t *testing.T) {
	ps := []float64{0.2, 0.03, 0.001, 0.035} // unsorted on purpose
	for _, tc := range []struct {
		c      Correction
		adj    []float64
		reject []bool
	}{
		{BH, []float64{0.2, 0.14 / 3, 0.004, 0.14 / 3}, []bool{false, true, true, true}},
		{Holm, []float64{0.2, 0.09, 0.004, 0.09}, []bool{false, false, true, false}},
		{NoCorrection, ps, []bool{false, true, true, true}},
	} {
		got := Adjust(ps, tc.c)
		for i := range got {
			if math.Abs(got[i]-tc.adj[i]) > 1e-12 {
				t.Errorf("%s: adjusted %v, want %v", tc.c, got, tc.adj)
				break
			}
		}
		rej := Reject(ps, 0.05, tc.c)
		for i := range rej {
			if rej[i] != tc.reject[i] {
				t.Errorf("%s: reject %v, want %v", tc.c, rej, tc.reject)
				break
			}
		}
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	nan := math.NaN()
	testRejections(t, BenjaminiHochberg, []rejectCase{
		// m = 4, alpha 0.05, sorted 0.005 0.01 0.03 0.04 against 0.0125,
		// 0.025, 0.0375, 0.05: k = 4 passes, so all four are rejected, where
		// Holm stops at 0.03 ≥ 0.05/2 and rejects two.
		{"all pass at k = m", []float64{0.01, 0.04, 0.03, 0.005}, 0.05, []bool{true, true, true, true}},
		{"none", []float64{0.5, 0.2, 0.06}, 0.05, []bool{false, false, false}},
		// 0.025 < 0.05/2 fails and 0.05 < 0.05 fails: strict, as Compare.
		{"strict inequality", []float64{0.025, 0.05}, 0.05, []bool{false, false}},
		// m = 2 with the NaN: 0.04 ≥ 0.05/2 is kept; alone (m = 1) it would
		// be rejected.
		{"NaN never rejected, counts in m", []float64{nan, 0.04}, 0.05, []bool{false, false}},
		{"single test is plain alpha", []float64{0.049}, 0.05, []bool{true}},
		{"empty", nil, 0.05, []bool{}},
	})
	if got := HolmBonferroni([]float64{0.01, 0.04, 0.03, 0.005}, 0.05); !got[0] || got[1] || got[2] || !got[3] {
		t.Errorf("Holm on the first family: %v, want 0.005 and 0.01 rejected, 0.03 and 0.04 kept", got)
	}
}

func TestAdjustNaNStaysNaN(t *testing.T) {
	for _, c := range []Correction{BH, Holm} {
		got := Adjust([]float64{math.NaN(), 0.01}, c)
		if !math.IsNaN(got[0]) || got[1] != 0.02 {
			t.Errorf("%s: %v, want [NaN 0.02]", c, got)
		}
	}
}

func TestParseCorrection(t *testing.T) {
	for in, want := range map[string]Correction{"": Holm, "bh": BH, "holm": Holm, "none": NoCorrection} {
		got, err := ParseCorrection(in, Holm)
		if err != nil || got != want {
			t.Errorf("ParseCorrection(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseCorrection("bonferonni", BH); err == nil {
		t.Error("ParseCorrection(\"bonferonni\"): no error")
	}
}

// rejectCase is a row of a multiple-testing correction's table: the
// p-values, alpha, and which of them the correction rejects.
type rejectCase struct {
	name  string
	ps    []float64
	alpha float64
	want  []bool
}

// testRejections checks correct's rejections on each case, as a subtest.
func testRejections(t *testing.T, correct func(ps []float64, alpha float64) []bool, cases []rejectCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := correct(tc.ps, tc.alpha)
			if len(got) != len(tc.want) {
				t.Fatalf("len %d, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
					break
				}
			}
		})
	}
}
