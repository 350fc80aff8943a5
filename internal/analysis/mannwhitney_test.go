package analysis

import (
	"math"
	"math/big"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		u, p float64
		tol  float64
	}{
		// Exact: P(U=0) = 1/C(10,5) = 1/252, two-sided 2/252 = 0.0079.
		{"5 vs 5 separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, 1e-12},
		{"5 vs 5 separated, reversed", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, 1e-12},
		// benchstat's documented minima: n=4: 0.0286, n=6: 0.0022.
		{"4 vs 4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70, 1e-12},
		{"6 vs 6 separated", []float64{1, 2, 3, 4, 5, 6}, []float64{7, 8, 9, 10, 11, 12}, 0, 2.0 / 924, 1e-12},
		// m=n=3: counts of U = 0..9 are 1,1,2,3,3,3,3,2,1,1 (of 20); U=1 → 2·2/20.
		{"3 vs 3, one inversion", []float64{1, 2, 4}, []float64{3, 5, 6}, 1, 0.2, 1e-12},
		// m=2, n=3: counts 1,1,2,2,2,1,1 (of 10); U=1 → 2·2/10.
		{"2 vs 3", []float64{1, 3}, []float64{2, 4, 5}, 1, 0.4, 1e-12},
		{"U at its mean gives p=1", []float64{1, 4}, []float64{2, 3}, 2, 1, 0},
		// Ties → normal approximation by hand: R_a = 1+3+3+5.5 = 12.5, U = 2.5,
		// μ = 8, σ² = 16/12·(9 − 30/56) = 11.2857, z = (2.5−8+0.5)/3.3594 =
		// −1.4884, p = 2Φ(−1.4884) = 0.1367.
		{"ties use the normal approximation", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 2.5, 0.1367, 5e-4},
		{"all tied", []float64{1, 1, 1}, []float64{1, 1}, 3, 1, 0},
		{"NaN ignored", []float64{1, 2, 3, 4, 5, math.NaN()}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, 1e-12},
		{"empty side", nil, []float64{1, 2}, math.NaN(), math.NaN(), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, p := MannWhitney(tc.a, tc.b)
			if !sameFloat(u, tc.u) {
				t.Errorf("U = %v, want %v", u, tc.u)
			}
			if !(sameFloat(p, tc.p) || math.Abs(p-tc.p) <= tc.tol) {
				t.Errorf("p = %.6g, want %.6g ± %g", p, tc.p, tc.tol)
			}
		})
	}
}

func TestMannWhitneyLargeSampleNormal(t *testing.T) {
	// 60 vs 60 without ties is beyond the exact limit: z = −1799.5/√36300 = −9.445.
	a := make([]float64, 60)
	b := make([]float64, 60)
	for i := range a {
		a[i] = float64(i)
		b[i] = float64(60 + i)
	}
	u, p := MannWhitney(a, b)
	want := 2 * normCDF(-1799.5/math.Sqrt(36300))
	if u != 0 || math.Abs(p-want) > 1e-3*want {
		t.Errorf("U, p = %v, %g; want 0, %g", u, p, want)
	}
}

func TestMannWhitneyExactAgreesWithNormalForModerateN(t *testing.T) {
	// Away from the far tail, at 20 vs 20, the exact and normal p-values agree
	// to a few percent: a sanity check of the recurrence by another method.
	a := make([]float64, 20)
	b := make([]float64, 20)
	for i := range a {
		a[i] = float64(2 * i)
		b[i] = float64(2*i + 5)
	}
	u, p := MannWhitney(a, b)
	mu, sigma := 200.0, math.Sqrt(400.0*41/12)
	pn := 2 * normCDF(-(mu-u-0.5)/sigma)
	if p < 0.05 || math.Abs(p-pn) > 0.03*pn {
		t.Errorf("exact p %g vs normal %g (U=%v)", p, pn, u)
	}
}

// countU counts the arrangements of m and n distinct values with U = u using
// exact integers and the textbook recurrence c(u;m,n) = c(u−n;m−1,n) +
// c(u;m,n−1), independently of the probability form in mwuPMF.
func countU(u, m, n int, memo map[[3]int]*big.Int) *big.Int {
	if u < 0 {
		return big.NewInt(0)
	}
	if m == 0 || n == 0 {
		if u == 0 {
			return big.NewInt(1)
		}
		return big.NewInt(0)
	}
	key := [3]int{u, m, n}
	if c, ok := memo[key]; ok {
		return c
	}
	c := new(big.Int).Add(countU(u-n, m-1, n, memo), countU(u, m, n-1, memo))
	memo[key] = c
	return c
}

func TestMWUPMFMatchesIntegerCounts(t *testing.T) {
	for _, sz := range [][2]int{{20, 20}, {12, 31}, {1, 50}} {
		m, n := sz[0], sz[1]
		umax := m * n / 2
		pmf := mwuPMF(m, n, umax)
		memo := map[[3]int]*big.Int{}
		total := new(big.Int).Binomial(int64(m+n), int64(m))
		for _, u := range []int{0, 1, 5, umax / 3, umax} {
			want, _ := new(big.Rat).SetFrac(countU(u, m, n, memo), total).Float64()
			if math.Abs(pmf[u]-want) > 1e-9*want {
				t.Errorf("m=%d n=%d: P(U=%d) = %g, want %g", m, n, u, pmf[u], want)
			}
		}
	}
}

func TestMWUPMF(t *testing.T) {
	got := mwuPMF(3, 3, 9)
	want := []float64{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}
	for u := range want {
		if math.Abs(got[u]*20-want[u]) > 1e-12 {
			t.Errorf("P(U=%d)·20 = %v, want %v", u, got[u]*20, want[u])
		}
	}
	full := mwuPMF(7, 9, 63)
	var sum float64
	for u, q := range full {
		sum += q
		if math.Abs(q-full[63-u]) > 1e-15 {
			t.Errorf("not symmetric at u=%d: %v vs %v", u, q, full[63-u])
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("PMF sums to %v", sum)
	}
}

func TestMWUCriticalCount(t *testing.T) {
	tests := []struct {
		m, n int
		tail float64
		k    int
	}{
		// 5 vs 5: P(U≤2) = 4/252 = 0.0159 ≤ 0.025 < P(U≤3) = 7/252.
		{5, 5, 0.025, 3},
		// 3 vs 3: P(U≤0) = 0.05 > 0.025, so no finite interval.
		{3, 3, 0.025, 0},
		// 10 vs 10 at 95%: the table critical value of U is 23, so k = 24.
		{10, 10, 0.025, 24},
	}
	for _, tc := range tests {
		if k := mwuCriticalCount(tc.m, tc.n, tc.tail); k != tc.k {
			t.Errorf("mwuCriticalCount(%d, %d, %v) = %d, want %d", tc.m, tc.n, tc.tail, k, tc.k)
		}
	}
}

func TestStudentTwoSided(t *testing.T) {
	tests := []struct{ t, df, p float64 }{
		{2.228, 10, 0.05},   // t table: 0.975 quantile of t(10)
		{2.0, 10, 0.07339},  // scipy.stats.t.sf(2, 10)·2
		{1.96, 1e6, 0.05},   // normal limit
		{0, 5, 1},           // no difference
		{12.706, 1, 0.05},   // t(1) is Cauchy
		{3.707, 6, 0.01},    // t table: 0.995 quantile of t(6)
		{-2.228, 10, 0.05},  // sign does not matter
		{40, 3, 3.4694e-05}, // far tail, exercises the symmetric branch
	}
	for _, tc := range tests {
		if p := studentTwoSided(tc.t, tc.df); math.Abs(p-tc.p) > 1e-3*math.Max(tc.p, 0.01) {
			t.Errorf("studentTwoSided(%v, %v) = %.6g, want %.6g", tc.t, tc.df, p, tc.p)
		}
	}
}
