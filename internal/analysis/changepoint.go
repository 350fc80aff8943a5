package analysis

import (
	"math"
	"slices"
)

// Defaults of ChangeOptions, those of Apache Otava's CLI
// (regression-detection.md §1): a change point needs p < 0.001, the series is
// scanned in windows of 50 points, and no magnitude floor is applied.
const (
	// DefaultChangePValue is the largest t-test p-value of a reported change
	// point.
	DefaultChangePValue = 0.001
	// DefaultChangeWindow is the number of points searched at once.
	DefaultChangeWindow = 50
)

// ChangeOptions tunes ChangePoints; a zero field takes its default.
type ChangeOptions struct {
	// PValue is the largest t-test p-value a reported change point may have
	// (default 0.001; p = 0.01 gives about 0.3 false change points per noise
	// series, regression-detection.md §6).
	PValue float64
	// Window is the number of points scanned at once (default 50); aim for at
	// most one change per window.
	Window int
	// MinMagnitude is the relative change a reported point must exceed
	// (default 0, Otava's default; Magnitude is always reported).
	MinMagnitude float64
}

// withDefaults replaces zero or invalid fields by their defaults.
func (o ChangeOptions) withDefaults() ChangeOptions {
	if !(o.PValue > 0 && o.PValue < 1) {
		o.PValue = DefaultChangePValue
	}
	if o.Window < 2 {
		o.Window = DefaultChangeWindow
	}
	if !(o.MinMagnitude >= 0) {
		o.MinMagnitude = 0
	}
	return o
}

// ChangePoint is a place in an ordered series where its mean shifts.
type ChangePoint struct {
	// Index is the first index of the new regime.
	Index int
	// MeanBefore and MeanAfter are the means of the segments on either side,
	// bounded by the neighbouring change points.
	MeanBefore, MeanAfter float64
	// StddevBefore and StddevAfter are the population standard deviations of
	// those segments.
	StddevBefore, StddevAfter float64
	// ForwardChangePercent is (MeanAfter/MeanBefore − 1)·100.
	ForwardChangePercent float64
	// Magnitude is max(|after/before − 1|, |before/after − 1|).
	Magnitude float64
	// P is the two-sided t-test p-value between the two segments.
	P float64
}

// ChangePoints finds shifts of the mean in an ordered series (one value per
// version or commit) with E-Divisive means and Apache Otava's t-test
// significance, re-implemented from regression-detection.md §1:
//
//  1. Split: windows of opt.Window points, advanced by half a window (or to
//     the last change found), are searched hierarchically with a weak p
//     threshold (10·p below 0.05, 2·p below 0.5). In an interval the
//     candidate is the argmax of the energy statistic Q̂ over start < τ < κ,
//     and it is accepted while the pooled Student t-test between its
//     neighbouring segments gives p ≤ the weak threshold.
//  2. Every weak point is re-tested against the segments formed by all weak
//     points over the whole series.
//  3. Merge: repeatedly drop the point with the largest p while that p is not
//     below opt.PValue, then the point with the smallest magnitude while it
//     does not exceed opt.MinMagnitude, re-testing after each removal.
//
// As in Otava, the t-test feeds ddof-0 standard deviations into the pooled
// formula. NaN and infinite values are forward-filled (leading ones
// back-filled); a series without finite values has no change points. The
// result is sorted by Index.
func ChangePoints(series []float64, opt ChangeOptions) []ChangePoint {
	opt = opt.withDefaults()
	z := fillGaps(series)
	if len(z) < 3 {
		return nil
	}
	weakP := opt.PValue
	switch {
	case weakP < 0.05:
		weakP *= 10
	case weakP < 0.5:
		weakP *= 2
	}
	step := max(opt.Window/2, 1)
	found := map[int]bool{}
	for start := 0; start < len(z); {
		end := min(start+opt.Window, len(z))
		last := -1
		for _, cp := range detect(z[start:end], weakP) {
			found[start+cp] = true
			last = max(last, start+cp)
		}
		start = max(last, start+step)
	}
	idx := make([]int, 0, len(found))
	for i := range found {
		idx = append(idx, i)
	}
	slices.Sort(idx)

	for {
		if len(idx) == 0 {
			return nil
		}
		cps := testAll(z, idx)
		weakest := 0
		for i, cp := range cps {
			if cp.P > cps[weakest].P || (math.IsNaN(cp.P) && !math.IsNaN(cps[weakest].P)) {
				weakest = i
			}
		}
		if cps[weakest].P < opt.PValue {
			weakest = 0
			for i, cp := range cps {
				if cp.Magnitude < cps[weakest].Magnitude {
					weakest = i
				}
			}
			if cps[weakest].Magnitude > opt.MinMagnitude {
				return cps
			}
		}
		idx = slices.Delete(idx, weakest, weakest+1)
	}
}

// fillGaps returns a copy of xs with non-finite values replaced by the last
// finite value before them, or the first finite value for leading gaps.
func fillGaps(xs []float64) []float64 {
	first := slices.IndexFunc(xs, func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) })
	if first < 0 {
		return nil
	}
	out := make([]float64, len(xs))
	last := xs[first]
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out[i] = last
			continue
		}
		out[i] = x
		last = x
	}
	return out
}

// testAll returns the change points at the sorted indices idx, each tested
// against the segments bounded by its neighbours in idx.
func testAll(z []float64, idx []int) []ChangePoint {
	cps := make([]ChangePoint, len(idx))
	for i, t := range idx {
		s, e := 0, len(z)
		if i > 0 {
			s = idx[i-1]
		}
		if i+1 < len(idx) {
			e = idx[i+1]
		}
		cps[i] = segmentTest(z[s:t], z[t:e])
		cps[i].Index = t
	}
	return cps
}

// segmentTest compares two adjacent segments as Otava's t-test tester does.
func segmentTest(left, right []float64) ChangePoint {
	m1, m2 := mean(left), mean(right)
	s1, s2 := stddev(left, m1, 0), stddev(right, m2, 0)
	cp := ChangePoint{
		MeanBefore:           m1,
		MeanAfter:            m2,
		StddevBefore:         s1,
		StddevAfter:          s2,
		ForwardChangePercent: (m2/m1 - 1) * 100,
		Magnitude:            math.Max(math.Abs(m2/m1-1), math.Abs(m1/m2-1)),
		P:                    pooledTTest(m1, s1, len(left), m2, s2, len(right)),
	}
	if m1 == m2 {
		cp.ForwardChangePercent, cp.Magnitude = 0, 0
	}
	return cp
}

// pooledTTest returns the two-sided p-value of Student's two-sample t-test
// with pooled variance from summary statistics. Zero variance gives p = 1 for
// equal means and p = 0 otherwise; n1+n2 ≤ 2 gives p = 1.
func pooledTTest(m1, s1 float64, n1 int, m2, s2 float64, n2 int) float64 {
	if n1+n2 <= 2 || n1 == 0 || n2 == 0 {
		return 1
	}
	df := float64(n1 + n2 - 2)
	sp2 := (float64(n1-1)*s1*s1 + float64(n2-1)*s2*s2) / df
	se := math.Sqrt(sp2 * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		if m1 == m2 {
			return 1
		}
		return 0
	}
	return studentTwoSided((m1-m2)/se, df)
}

// detect runs the hierarchical E-Divisive detector on z and returns the
// accepted change points (sorted indices into z): take the best candidate
// over all intervals between accepted points, stop at the first whose t-test
// p exceeds pmax.
func detect(z []float64, pmax float64) []int {
	var cps []int
	for {
		bounds := append(append([]int{0}, cps...), len(z))
		best, bestQ := -1, math.Inf(-1)
		bestS, bestE := 0, 0
		for i := 0; i+1 < len(bounds); i++ {
			s, e := bounds[i], bounds[i+1]
			if e-s < 2 {
				continue
			}
			tau, q := bestSplit(z[s:e])
			if tau > 0 && q > bestQ {
				best, bestQ, bestS, bestE = s+tau, q, s, e
			}
		}
		if best < 0 {
			return cps
		}
		cp := segmentTest(z[bestS:best], z[best:bestE])
		if !(cp.P <= pmax) {
			return cps
		}
		cps = append(cps, best)
		slices.Sort(cps)
	}
}

// bestSplit returns the τ (1 ≤ τ < len(x)) maximising the energy statistic
// Q̂(x[:τ], x[τ:κ]) over all κ with τ < κ ≤ len(x), and that maximum; ties
// keep the first in (τ, κ) order. With n = τ and m = κ−τ,
//
//	Q̂ = 2/(n+m)·Σ|X−Y| − 2m/((n+m)(n−1))·Σ_{i<k}|X_i−X_k| − 2n/((n+m)(m−1))·Σ_{j<k}|Y_j−Y_k|,
//
// a within-sample term being 0 when its sample has one point. For each τ the
// sums are extended one κ at a time, so the search costs O(len(x)³).
func bestSplit(x []float64) (tau int, q float64) {
	n := len(x)
	tau, q = -1, math.Inf(-1)
	for t := 1; t < n; t++ {
		var sxx float64
		for i := 0; i < t; i++ {
			for k := i + 1; k < t; k++ {
				sxx += math.Abs(x[i] - x[k])
			}
		}
		var sxy, syy float64
		for kappa := t + 1; kappa <= n; kappa++ {
			y := x[kappa-1]
			for i := 0; i < t; i++ {
				sxy += math.Abs(x[i] - y)
			}
			for j := t; j < kappa-1; j++ {
				syy += math.Abs(x[j] - y)
			}
			nx, ny := float64(t), float64(kappa-t)
			v := 2 / (nx + ny) * sxy
			if t > 1 {
				v -= 2 * ny / ((nx + ny) * (nx - 1)) * sxx
			}
			if kappa-t > 1 {
				v -= 2 * nx / ((nx + ny) * (ny - 1)) * syy
			}
			if v > q {
				tau, q = t, v
			}
		}
	}
	return tau, q
}

// Step is the result of FirstSignificantStep.
type Step struct {
	// Index is the first group of the new regime (i+1 for the step from
	// group i to i+1, as ChangePoint.Index), −1 when Found is false.
	Index int
	// Verdict is the step's comparison, with PAdjusted after Holm over all
	// the sequence's steps.
	Verdict Verdict
	// Found says a step qualified.
	Found bool
	// Power says whether any step could qualify with the groups' repeats
	// alone: the exact test's floor against alpha/steps. When Power.Callable
	// is false and no step rests on more than its repeats (Evidence), "no
	// step" says nothing about the sequence.
	Power Power
	// Evidence says what each step's verdict rests on (step i compares
	// group i with group i+1), as CompareNoise says it.
	Evidence []NoiseEvidence
}

// Beyond reports whether some step rests on more than its repeats (a
// noise prior or within-run variance), whose t-test has no Mann-Whitney
// floor, so that Power alone does not say whether a step can be found.
func (s Step) Beyond() bool {
	for _, e := range s.Evidence {
		if e.Basis != BasisRepeats {
			return true
		}
	}
	return false
}

// FirstSignificantStep compares each adjacent pair of groups (all repeats of
// version i against all repeats of version i+1) with Compare and returns the
// first step whose outcome is Slower or Faster and whose p-value survives
// Holm-Bonferroni over all the sequence's steps at opt.Alpha, so that a long
// sequence does not find a step by chance. Short sequences with several
// repeats per version suit this better than ChangePoints, which wants one
// value per version. Power is computed for the smallest group, the weakest
// step. It is FirstSignificantStepNoise with no history and no within-run
// variance.
func FirstSignificantStep(groups [][]float64, dir Direction, opt CompareOptions) Step {
	rs := make([][]Run, len(groups))
	for i, g := range groups {
		for _, v := range g {
			rs[i] = append(rs[i], Run{Value: v, RelVar: math.NaN()})
		}
	}
	return FirstSignificantStepNoise(rs, dir, nil, NoiseOptions{CompareOptions: opt})
}

// FirstSignificantStepNoise is FirstSignificantStep with all the evidence
// at hand: each step is judged by CompareNoise with priors[i], the host's
// noise history of the step from group i to i+1 (missing priors count as
// no history), so a noise prior or the runs' within-run variance can call a
// step that the repeats' Mann-Whitney floor cannot; the steps' p-values,
// whatever their evidence, go through Holm over all the steps.
func FirstSignificantStepNoise(groups [][]Run, dir Direction, priors []NoisePrior, opt NoiseOptions) Step {
	copt, _ := opt.CompareOptions.withDefaults()
	copt.Correction = Holm
	opt.CompareOptions = copt
	var vs []Verdict
	st := Step{Index: -1}
	nb, no := 0, 0
	for i := 0; i+1 < len(groups); i++ {
		var prior NoisePrior
		if i < len(priors) {
			prior = priors[i]
		}
		v, ev := CompareNoise(groups[i], groups[i+1], dir, prior, opt)
		v.Direction = dir
		vs = append(vs, v)
		st.Evidence = append(st.Evidence, ev)
		if i == 0 || v.NBase < nb {
			nb = v.NBase
		}
		if i == 0 || v.NOther < no {
			no = v.NOther
		}
	}
	st.Power = PowerOf(len(vs), nb, no, copt.Alpha, Holm)
	for i, v := range CorrectVerdicts(vs, copt) {
		if v.Outcome == Slower || v.Outcome == Faster {
			st.Index, st.Verdict, st.Found = i+1, v, true
			return st
		}
	}
	return st
}
