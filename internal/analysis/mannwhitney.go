package analysis

import (
	"math"
	"slices"
)

// exactMWUMax is the largest per-side sample size for which MannWhitney uses
// the exact null distribution of U (when there are no ties), as benchstat does.
const exactMWUMax = 50

// MannWhitney runs the two-sided Mann-Whitney U (Wilcoxon rank-sum) test of
// a against b and returns U for a, R_a − n_a(n_a+1)/2 with mid-ranks for ties
// (the number of pairs with a_i > b_j, ties counting one half), and the
// two-sided p-value.
//
// Without ties and with at most 50 values per side, p is exact: it is
// 2·P(U ≤ min(U_a, U_b)) under the null distribution of U, counted with the
// recurrence c(u; m, n) = c(u−n; m−1, n) + c(u; m, n−1), and 1 when
// U_a = U_b. With ties or larger samples, p comes from the normal
// approximation with mean n_a·n_b/2, the tie-corrected variance
// n_a·n_b/12·((N+1) − Σ(t³−t)/(N(N−1))) and a continuity correction of 1/2.
// For 5 against 5 fully separated values the exact p is 2/252 ≈ 0.0079, the
// smallest p possible with 5 per side. NaN and infinite values are ignored;
// if either side is then empty, both results are NaN, and if every value is
// tied, p is 1.
func MannWhitney(a, b []float64) (u float64, p float64) {
	a, _ = finite(a)
	b, _ = finite(b)
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN()
	}
	rankSumA, tieTerm := rankSum(a, b)
	u1 := rankSumA - float64(n1*(n1+1))/2
	u2 := float64(n1*n2) - u1
	if tieTerm == 0 && n1 <= exactMWUMax && n2 <= exactMWUMax {
		if u1 == u2 {
			return u1, 1
		}
		umin := int(math.Round(math.Min(u1, u2)))
		pmf := mwuPMF(n1, n2, umin)
		var cdf float64
		for _, q := range pmf {
			cdf += q
		}
		return u1, math.Min(1, 2*cdf)
	}
	N := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((N + 1) - tieTerm/(N*(N-1)))
	if variance <= 0 {
		return u1, 1
	}
	d := u1 - mu
	switch {
	case d > 0:
		d = math.Max(0, d-0.5)
	case d < 0:
		d = math.Min(0, d+0.5)
	}
	z := d / math.Sqrt(variance)
	return u1, math.Min(1, 2*normCDF(-math.Abs(z)))
}

// rankSum returns the sum of the mid-ranks of a in the pooled sample a ∪ b
// and Σ(t³ − t) over the groups of t tied values (0 when there are no ties).
func rankSum(a, b []float64) (sumA float64, tieTerm float64) {
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, x := range a {
		all = append(all, obs{x, true})
	}
	for _, x := range b {
		all = append(all, obs{x, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// Positions i..j−1 share the mid-rank of ranks i+1..j.
		mid := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if all[k].fromA {
				sumA += mid
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return sumA, tieTerm
}

// mwuPMF returns P(U = u) for u = 0..umax under the null hypothesis, where U
// counts the pairs (x_i > y_j) between samples of sizes m and n without ties.
// It uses the probability form of the counting recurrence: the largest of the
// m+n values comes from the first sample with probability m/(m+n) and then
// beats all n values of the second, so
// p(u; m, n) = m/(m+n)·p(u−n; m−1, n) + n/(m+n)·p(u; m, n−1).
// Every term is positive, so there is no cancellation, and truncating at umax
// is exact because p(u; ·) only depends on smaller u.
func mwuPMF(m, n, umax int) []float64 {
	umax = max(0, min(umax, m*n))
	prev := make([][]float64, n+1) // row i−1: prev[j] = p(·; i−1, j)
	cur := make([][]float64, n+1)
	for j := range cur {
		prev[j] = make([]float64, umax+1)
		cur[j] = make([]float64, umax+1)
	}
	for i := 0; i <= m; i++ {
		for j := 0; j <= n; j++ {
			row := cur[j]
			clear(row)
			if i == 0 || j == 0 {
				row[0] = 1
				continue
			}
			wA := float64(i) / float64(i+j)
			wB := float64(j) / float64(i+j)
			left := cur[j-1]
			up := prev[j]
			for u := 0; u <= umax; u++ {
				v := wB * left[u]
				if u >= j {
					v += wA * up[u-j]
				}
				row[u] = v
			}
		}
		prev, cur = cur, prev
	}
	return prev[n]
}

// mwuCriticalCount returns the largest k such that P(U ≤ k−1) ≤ tail under
// the null distribution of U for sizes m and n (exact up to 50 per side,
// normal approximation with continuity correction above). Zero means no
// order statistic is extreme enough for that tail.
func mwuCriticalCount(m, n int, tail float64) int {
	if m <= exactMWUMax && n <= exactMWUMax {
		pmf := mwuPMF(m, n, m*n/2)
		var cdf float64
		k := 0
		for u, q := range pmf {
			cdf += q
			if cdf > tail*(1+1e-12) {
				break
			}
			k = u + 1
		}
		return k
	}
	mu := float64(m*n) / 2
	sigma := math.Sqrt(float64(m*n) * float64(m+n+1) / 12)
	k := int(math.Floor(mu + 0.5 - normQuantile(1-tail)*sigma))
	return max(k, 0)
}
