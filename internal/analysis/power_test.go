package analysis

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestMinPValue checks the exact floor 2/C(m+n, m) against hand counts and
// the rounded figures docs/statistics.md quotes (0.0079, 0.0022, 0.00058 at 5, 6, 7 per
// side), and that fully separated samples reach it.
func TestMinPValue(t *testing.T) {
	for _, tc := range []struct {
		m, n    int
		want    float64
		rounded string
	}{
		{5, 5, 2.0 / 252, "0.0079"},
		{6, 6, 2.0 / 924, "0.0022"},
		{7, 7, 2.0 / 3432, "0.00058"},
		{3, 5, 2.0 / 56, "0.036"},
		{5, 3, 2.0 / 56, "0.036"},
		{2, 2, 2.0 / 6, "0.33"},
		{1, 1, 1, "1"},
		{0, 5, 1, "1"},
	} {
		got := MinPValue(tc.m, tc.n)
		if math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("MinPValue(%d, %d) = %v, want %v", tc.m, tc.n, got, tc.want)
		}
		if s := fmtG2(got); s != tc.rounded {
			t.Errorf("MinPValue(%d, %d) rounds to %s, want %s", tc.m, tc.n, s, tc.rounded)
		}
		if tc.m > 0 && tc.n > 0 {
			a, b := make([]float64, tc.m), make([]float64, tc.n)
			for i := range a {
				a[i] = float64(i)
			}
			for i := range b {
				b[i] = float64(100 + i)
			}
			if _, p := MannWhitney(a, b); math.Abs(p-got) > 1e-12 {
				t.Errorf("separated %d vs %d: MannWhitney p = %v, floor %v", tc.m, tc.n, p, got)
			}
		}
	}
}

func fmtG2(x float64) string { return fmt.Sprintf("%.2g", x) }

// TestPowerOf works the power table's cases by hand: 32 sysbench cells at 5
// repeats under Holm at 0.01 need p < 0.01/32 = 0.0003125, which only n = 8
// reaches (2/12870 = 0.000155; n = 7 gives 0.00058). Under BH a lone change
// needs the same, but 26 cells moving together can be called, since
// 26·0.01/32 = 0.008125 > 2/252 while 25·0.01/32 = 0.0078 is not.
func TestPowerOf(t *testing.T) {
	for _, tc := range []struct {
		name               string
		cells, nb, no      int
		alpha              float64
		c                  Correction
		threshold          float64
		callable           bool
		needed, minChanged int
	}{
		{"32 cells holm", 32, 5, 5, 0.01, Holm, 0.01 / 32, false, 8, 0},
		{"32 cells bh", 32, 5, 5, 0.01, BH, 0.01 / 32, false, 8, 26},
		{"5 cells holm", 5, 5, 5, 0.01, Holm, 0.002, false, 7, 0},
		{"5 cells holm at 7", 5, 7, 7, 0.01, Holm, 0.002, true, 7, 1},
		// 5·0.0079365/0.01 = 3.97, so 4 cells: 4·0.002 = 0.008 > 0.0079365.
		{"5 cells bh", 5, 5, 5, 0.01, BH, 0.002, false, 7, 4},
		{"one cell", 1, 5, 5, 0.01, Holm, 0.01, true, 5, 1},
		{"no correction", 32, 5, 5, 0.01, NoCorrection, 0.01, true, 5, 1},
		{"one repeat", 4, 1, 1, 0.05, BH, 0.0125, false, 5, 0},
		// 3 vs 8: 2/C(11,3) = 2/165 = 0.0121, not below 0.01; 4 vs 8:
		// 2/C(12,4) = 2/495 = 0.0040.
		{"unequal 3 vs 8", 1, 3, 8, 0.01, Holm, 0.01, false, 5, 0},
		{"unequal 4 vs 8", 1, 4, 8, 0.01, Holm, 0.01, true, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PowerOf(tc.cells, tc.nb, tc.no, tc.alpha, tc.c)
			if math.Abs(p.Threshold-tc.threshold) > 1e-15 || p.Callable != tc.callable || p.RepeatsNeeded != tc.needed ||
				p.MinChanged != tc.minChanged || p.Floor != MinPValue(tc.nb, tc.no) {
				t.Errorf("got %+v; want threshold %v callable %v needed %d minChanged %d", p, tc.threshold, tc.callable,
					tc.needed, tc.minChanged)
			}
		})
	}
}

func TestPowerString(t *testing.T) {
	s := PowerOf(32, 5, 5, 0.01, Holm).String()
	for _, want := range []string{"32 cells", "5 vs 5 repeats", "smallest p 0.0079", "needs p < 0.00031", "cannot be called", "8 repeats per side needed"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if s := PowerOf(32, 5, 5, 0.01, BH).String(); !strings.Contains(s, "at least 26 cells") {
		t.Errorf("%q lacks the BH note", s)
	}
	if s := PowerOf(1, 5, 5, 0.01, Holm).String(); !strings.HasSuffix(s, "can be called") {
		t.Errorf("%q: want callable", s)
	}
}
