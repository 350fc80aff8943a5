package analysis

import (
	"math"
	"testing"
)

func TestRatio(t *testing.T) {
	tests := []struct {
		value, base, want float64
	}{
		{110, 100, 1.1},
		{0, 0, 1},
		{5, 0, math.Inf(1)},
		{math.NaN(), 1, math.NaN()},
		{1, math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		if got := Ratio(tc.value, tc.base); !sameFloat(got, tc.want) && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Ratio(%v, %v) = %v, want %v", tc.value, tc.base, got, tc.want)
		}
	}
}

func TestBandOf(t *testing.T) {
	tests := []struct {
		ratio float64
		dir   Direction
		want  Band
	}{
		{1.05, HigherIsBetter, Better},
		{1.05, LowerIsBetter, Worse},
		{0.95, HigherIsBetter, Worse},
		{0.95, LowerIsBetter, Better},
		{1.0, HigherIsBetter, Neutral},
		// Rounded to 2 decimals first: 1.046 prints as 1.05 and is green.
		{1.046, HigherIsBetter, Better},
		{1.044, HigherIsBetter, Neutral},
		{0.954, HigherIsBetter, Worse},
		{math.Inf(1), HigherIsBetter, Better},
		{math.NaN(), HigherIsBetter, Neutral},
	}
	for _, tc := range tests {
		if got := BandOf(tc.ratio, tc.dir); got != tc.want {
			t.Errorf("BandOf(%v, %v) = %v, want %v", tc.ratio, tc.dir, got, tc.want)
		}
	}
	for b, want := range map[Band]string{Better: "better", Worse: "worse", Neutral: "neutral"} {
		if b.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(b), b.String(), want)
		}
	}
}
