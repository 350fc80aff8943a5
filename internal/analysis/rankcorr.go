package analysis

import (
	"math"
	"slices"
)

// Spearman is the rank correlation of paired values x and y, from -1 to 1:
// Pearson's correlation of their mid-ranks (tied values share the mean of
// their ranks). It measures how consistently y rises or falls with x,
// whatever the shape of the relation, and a burst of a few large values
// weighs no more than its ranks. NaN when there are fewer than three
// pairs, the lengths differ, a value is not finite, or either side is
// constant.
func Spearman(x, y []float64) float64 { return SpearmanWithin([][]float64{x}, [][]float64{y}) }

// SpearmanWithin is the rank correlation of x and y within groups (xs[i]
// paired with ys[i]; the seconds of one run): each group's values are
// ranked among themselves and centred on their mean rank, and the
// correlation is taken over all groups' centred ranks together. So groups
// at different levels (two targets, one faster) add nothing by their
// levels alone, only by how x and y moved together inside each; a group
// in which x or y stayed constant adds its spread of the other only. A
// group of fewer than three pairs, of different lengths or with a value
// that is not finite is left out; NaN when no spread remains.
func SpearmanWithin(xs, ys [][]float64) float64 {
	var sxy, sxx, syy float64
	for g := range xs {
		x, y := xs[g], ys[g]
		if g >= len(ys) || len(x) != len(y) || len(x) < 3 || !allFinite(x) || !allFinite(y) {
			continue
		}
		rx, ry := midRanks(x), midRanks(y)
		mean := float64(len(x)+1) / 2 // the mean of ranks 1..n, ties included
		for i := range rx {
			dx, dy := rx[i]-mean, ry[i]-mean
			sxy += dx * dy
			sxx += dx * dx
			syy += dy * dy
		}
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// midRanks gives each value its rank from 1 in increasing order, ties the
// mean of the ranks they span.
func midRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mid
		}
		i = j + 1
	}
	return r
}
