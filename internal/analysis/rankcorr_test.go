package analysis

import (
	"math"
	"testing"
)

// TestSpearman checks the rank correlation on values whose ranks are known:
// any increasing relation is 1 however curved, a decreasing one -1, ties
// take mid-ranks, and degenerate input is NaN.
func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"increasing, curved", []float64{1, 2, 3, 4, 5}, []float64{1, 8, 27, 64, 1e9}, 1},
		{"decreasing", []float64{1, 2, 3, 4}, []float64{40, 30, 20, 10}, -1},
		// y's ranks 1, 3.5, 3.5, 2 against 1, 2, 3, 4: covariance 1.5 over
		// sqrt(5 x 4.5), 1/sqrt(10).
		{"tie", []float64{1, 2, 3, 4}, []float64{1, 3, 3, 2}, 1 / math.Sqrt(10)},
		{"constant", []float64{1, 2, 3}, []float64{5, 5, 5}, math.NaN()},
		{"too short", []float64{1, 2}, []float64{2, 1}, math.NaN()},
		{"not finite", []float64{1, 2, math.Inf(1)}, []float64{1, 2, 3}, math.NaN()},
	} {
		got := Spearman(c.x, c.y)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Spearman = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSpearmanWithin checks that groups are ranked on their own: two
// groups in which y falls as x rises are -1 together though the second
// sits far above the first (pooled, the levels alone would make it
// positive), a constant group only dilutes, and short groups are left out.
func TestSpearmanWithin(t *testing.T) {
	xs := [][]float64{{1, 2, 3, 4}, {100, 200, 300, 400}, {5, 5, 5, 5}, {1, 2}}
	ys := [][]float64{{4, 3, 2, 1}, {40, 30, 20, 10}, {1, 2, 3, 4}, {1, 2}}
	if got := SpearmanWithin(xs[:2], ys[:2]); got != -1 {
		t.Errorf("two falling groups: %v, want -1", got)
	}
	if pooled := Spearman([]float64{1, 2, 3, 4, 100, 200, 300, 400}, []float64{4, 3, 2, 1, 40, 30, 20, 10}); pooled <= 0 {
		t.Errorf("pooled across levels: %v, want > 0 (what SpearmanWithin avoids)", pooled)
	}
	// The constant group adds y's spread (5 of 15 in the sums) and no
	// covariance: -10 / sqrt(10 x 15).
	if got, want := SpearmanWithin(xs, ys), -10/math.Sqrt(150); math.Abs(got-want) > 1e-12 {
		t.Errorf("with a constant and a short group: %v, want %v", got, want)
	}
	if got := SpearmanWithin(xs[2:], ys[2:]); !math.IsNaN(got) {
		t.Errorf("no spread of x: %v, want NaN", got)
	}
}
