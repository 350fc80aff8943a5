package analysis

import (
	"fmt"
	"math"
)

// HistoryOptions tune JudgeHistory; zero fields take their defaults.
type HistoryOptions struct {
	// Noise are the verdict's settings (alpha, minimum effect, ...).
	Noise NoiseOptions
	// Change tunes the change-point search (Otava's defaults).
	Change ChangeOptions
	// Effect is the step the history should be able to find, for
	// PointsNeeded (default DefaultGateThreshold, 5%).
	Effect float64
}

// History is what JudgeHistory found in one cell's series of points (one
// point per experiment, oldest first).
type History struct {
	// Values are the points' geometric means.
	Values []float64
	// ChangePoints are where the mean of Values shifts (ChangePoints:
	// E-Divisive means with Otava's t-test), oldest first.
	ChangePoints []ChangePoint
	// Regime is the first point of the newest point's history: the
	// points Regime..len-2 are judged against the newest (those after the
	// last change point before the newest point).
	Regime int
	// Newest is the verdict of the newest point against its regime's
	// runs, NewestEvidence what it rests on. Unknown with a single point.
	Newest         Verdict
	NewestEvidence NoiseEvidence
	// Between says the verdict was decided by the spread of the regime's
	// points (3 or more), which includes what varies from experiment to
	// experiment and not within one; BetweenP is that test's p.
	Between  bool
	BetweenP float64
	// PointsNeeded is how many points the change-point test needs to find
	// a step of opt.Effect at the newest point, given the spread the
	// points show (or the noise prior): 3 when that spread is unknown.
	PointsNeeded int
	// Spread is the relative standard deviation of a point that
	// PointsNeeded assumed; 0 when nothing showed it yet.
	Spread float64
}

// JudgeHistory judges one cell's history. Change points come from
// ChangePoints over the points' geometric means, as Apache Otava finds
// them over one value per commit. The newest point is judged against its
// regime (the points after the last change point before it). Repeats of
// one experiment share a day, a build and a machine state that the next
// experiment may not, so runs pooled over experiments can look more alike
// than experiments are: with 3 or more points in the regime, a t-test of
// the newest point's mean against the points' means with their own spread
// decides (a prediction interval, k−1 degrees of freedom), which holds
// whatever part of the variation lies between experiments, and works with
// one run per experiment. With 1 or 2 points it cannot be had, and the
// newest runs are judged against the regime's runs with CompareNoise, the
// verdict of compare with the host's noise prior; its evidence says so.
// The verdict is the cell's alone: CorrectVerdicts or Gate decide it again
// over a family of cells.
func JudgeHistory(points [][]Run, dir Direction, prior NoisePrior, opt HistoryOptions) History {
	if opt.Effect <= 0 {
		opt.Effect = DefaultGateThreshold
	}
	n := len(points)
	h := History{Values: make([]float64, n), Newest: Verdict{Outcome: Unknown, P: math.NaN(), PAdjusted: math.NaN(), Direction: dir}}
	for i, p := range points {
		h.Values[i] = geoMean(p)
	}
	h.ChangePoints = ChangePoints(h.Values, opt.Change)
	for _, cp := range h.ChangePoints {
		if cp.Index <= n-2 {
			h.Regime = cp.Index
		}
	}
	h.Spread = pointSpread(points, h.Values[h.Regime:max(n-1, h.Regime)], prior)
	h.PointsNeeded = PointsNeeded(opt.Effect, h.Spread, opt.Change)
	if n < 2 {
		return h
	}
	var base []Run
	for _, p := range points[h.Regime : n-1] {
		base = append(base, p...)
	}
	h.Newest, h.NewestEvidence = CompareNoise(base, points[n-1], dir, prior, opt.Noise)
	h.Newest.Direction = dir
	// A point with no value (every run of it stalled: no rate) is no point
	// of the regime's spread.
	if k := valued(h.Values[h.Regime : n-1]); k >= 3 {
		// Enough points to measure how much experiments differ: the
		// points' own spread decides, a test valid whatever part of the
		// variation lies between experiments and not within them.
		lo, hi, p := predictionTest(h.Values[h.Regime:n-1], h.Values[n-1], opt.Noise.CompareOptions)
		h.Between, h.BetweenP = true, p
		v := &h.Newest
		v.Evidence = Evidence(fmt.Sprintf("t-test over the %d points' own spread (the runs alone: %s, p=%.2g)", k, v.Evidence, v.P))
		v.P, v.PAdjusted, v.RatioLo, v.RatioHi = p, p, lo, hi
		v.Ratio = Ratio(h.Values[n-1], geoMeanOf(h.Values[h.Regime:n-1]))
		copt, _ := opt.Noise.CompareOptions.withDefaults()
		v.Outcome = decide(*v, copt)
		// Not the Mann-Whitney test over the runs: its floor does not
		// bind (a gate asks).
		h.NewestEvidence.Basis = BasisRepeatsOwn
	}
	return h
}

// valued counts the positive finite values of xs.
func valued(xs []float64) int {
	n := 0
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			n++
		}
	}
	return n
}

// geoMeanOf is the geometric mean of the positive values of xs.
func geoMeanOf(xs []float64) float64 {
	rs := make([]Run, len(xs))
	for i, x := range xs {
		rs[i].Value = x
	}
	return geoMean(rs)
}

// predictionTest tests whether a new point y belongs with the points xs
// (3 or more): Student's t on the log scale with the points' own spread,
// t = (ln y − mean ln x) / (s·sqrt(1 + 1/k)) with k−1 degrees of freedom.
// It returns the ratio y/geomean(xs)'s interval at opt's confidence and the
// two-sided p.
func predictionTest(xs []float64, y float64, opt CompareOptions) (lo, hi, p float64) {
	opt, _ = opt.withDefaults()
	ls := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			ls = append(ls, math.Log(x))
		}
	}
	k := len(ls)
	if k < 3 || !(y > 0) {
		return 0, math.Inf(1), 1
	}
	m := mean(ls)
	s := stddev(ls, m, 1)
	d := math.Log(y) - m
	se := s * math.Sqrt(1+1/float64(k))
	df := float64(k - 1)
	if se == 0 {
		if d == 0 {
			return 1, 1, 1
		}
		return math.Exp(d), math.Exp(d), 0
	}
	q := studentQuantile(1-(1-opt.Confidence)/2, df)
	return math.Exp(d - q*se), math.Exp(d + q*se), studentTwoSided(d/se, df)
}

// pointSpread is the relative standard deviation of one point: the
// spread of the regime's points when there are 3 or more, else the noise
// prior's run-to-run spread over a point's runs, else the runs' own spread
// within their points over a point's runs (which leaves out what varies
// between experiments: a lower bound); 0 when none is known.
func pointSpread(points [][]Run, regime []float64, prior NoisePrior) float64 {
	if len(regime) >= 3 {
		ls := make([]float64, 0, len(regime))
		for _, v := range regime {
			if v > 0 {
				ls = append(ls, math.Log(v))
			}
		}
		if len(ls) >= 3 {
			return stddev(ls, mean(ls), 1)
		}
	}
	runs := 0
	ss, df := 0.0, 0
	for _, p := range points {
		runs += len(p)
		var ls []float64
		for _, r := range p {
			if r.Value > 0 && !math.IsInf(r.Value, 0) {
				ls = append(ls, math.Log(r.Value))
			}
		}
		if len(ls) >= 2 {
			ss += sumSq(ls, mean(ls))
			df += len(ls) - 1
		}
	}
	per := math.Max(1, float64(runs)/float64(max(len(points), 1)))
	switch {
	case prior.DF > 0 && prior.Var > 0:
		return math.Sqrt(prior.Var / per)
	case df > 0 && ss > 0:
		return math.Sqrt(ss / float64(df) / per)
	}
	return 0
}

// PointsNeeded is the fewest points a series needs before ChangePoints
// (at opt's p-value) can report a step of relative size effect anywhere in
// it, when its points vary with relative standard deviation sigma: the
// test ChangePoints applies, on the best case, the step halfway (points
// alternating at ±sigma around their level on either side). A step at
// the newest point alone is never found when it is not far beyond sigma:
// it must last. 3 (the fewest any split can be tested with) when sigma is
// 0 or unknown; 0 when no series of up to 1,000 points would do.
func PointsNeeded(effect, sigma float64, opt ChangeOptions) int {
	opt = opt.withDefaults()
	if !(sigma > 0) || !(effect > 0) {
		return 3
	}
	side := func(n int, level float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level * (1 + sigma*float64(1-2*(i%2)))
		}
		return xs
	}
	for n := 3; n <= 1000; n++ {
		if segmentTest(side(n/2, 1), side(n-n/2, 1-effect)).P < opt.PValue {
			return n
		}
	}
	return 0
}

// geoMean is the geometric mean of the runs' positive values, NaN when
// none is positive.
func geoMean(rs []Run) float64 {
	s, n := 0.0, 0
	for _, r := range rs {
		if r.Value > 0 && !math.IsInf(r.Value, 0) {
			s += math.Log(r.Value)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(s / float64(n))
}
