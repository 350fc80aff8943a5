package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Thresholds of Stability (regression-detection.md §5, "Stalls and waves";
// the numbers are proposals there, chosen to mirror pyperf's 10% warning and
// fio's steady-state checks).
const (
	// MaxStableCV is the largest coefficient of variation of a stable
	// per-second series (pyperf warns at a 10% standard deviation).
	MaxStableCV = 0.10
	// StallFraction defines a stalled second: throughput below this share of
	// the series median.
	StallFraction = 0.5
	// MaxStallShare is the largest share of stalled seconds of a stable run.
	MaxStallShare = 0.01
	// MaxStallRun is the length (seconds) of a run of consecutive stalled
	// seconds that makes a series unstable.
	MaxStallRun = 5
	// MinWaveAutocorr is the autocorrelation a peak must reach to count as a
	// wave; short series also need 3/√N, three standard errors of a white-noise
	// autocorrelation, so noise alone rarely qualifies.
	MinWaveAutocorr = 0.3
	// SteadyTolerance is how far (relative) the running median may stray
	// from the final level once the series is in steady state.
	SteadyTolerance = 0.10
	// minStabilityPoints is the shortest series Stability judges at all.
	minStabilityPoints = 10
)

// StabilityResult describes the shape of a per-second throughput series.
type StabilityResult struct {
	// N is the number of finite seconds examined.
	N int
	// Mean and Median are the mean and median throughput.
	Mean, Median float64
	// CV is the sample standard deviation divided by the mean.
	CV float64
	// ShareBelowHalfMedian is the share of seconds below StallFraction of the
	// median.
	ShareBelowHalfMedian float64
	// LongestStall is the longest run of consecutive such seconds.
	LongestStall int
	// Oscillates reports a periodic pattern: an autocorrelation peak at some
	// lag of at least 2 seconds (see Stability).
	Oscillates bool
	// Period is the lag in seconds of the strongest such peak, 0 if none.
	Period int
	// PeakAutocorr is the autocorrelation at Period (0 if none).
	PeakAutocorr float64
	// SteadyAfter is the first index from which the series is in steady state
	// (see Stability).
	SteadyAfter int
	// Settled reports that steady state began in the first half of the series.
	Settled bool
	// Unstable reports that some threshold was crossed; Reasons says which.
	Unstable bool
	// Reasons explain each crossed threshold.
	Reasons []string
	// Warnings explain why some checks could not be made.
	Warnings []string
}

// Stability measures the shape of a per-second throughput series; pass the
// series after any fixed warm-up, since every second counts.
//
// Thresholds (constants above): the series is Unstable when CV > 0.10, when
// more than 1% of seconds are below half the median, when 5 or more
// consecutive seconds are, when it oscillates, or when it has not settled.
//
// Oscillation: r_k is the autocorrelation of y − mean at lag k (biased
// estimator, normalised by the lag-0 sum). A wave is a local maximum of r_k
// at 2 ≤ k ≤ N/3 (at least three periods seen) with r_k ≥ max(0.3, 3/√N)
// that is preceded by a dip: some r_j with j < k is at least 0.3 below r_k.
// The dip rule keeps a trend or a single step, whose autocorrelation decays
// slowly without returning, from counting as a wave. Period is the lag of the
// highest qualifying peak.
//
// Steady state: with a window of w = clamp(N/10, 5, 60) seconds (rounded up
// to a whole number of periods when the series oscillates), the final level
// is the median of the last w seconds and the running median at second t is
// the median of the w seconds centred on t (the first or last w seconds near
// the ends, so a wave is always averaged over whole periods). SteadyAfter
// is the earliest second from which the running median stays within 10% of
// the final level to the end. Medians rather than means keep a stall shorter
// than w/2, which is reported on its own, from resetting the steady state,
// while a warm-up ramp, a step or a drift still moves them; centring the
// window puts SteadyAfter at the end of a ramp rather than w/2 before it.
// Settled is SteadyAfter ≤ N/2.
//
// Non-finite values are dropped with a warning; series shorter than 10
// seconds are only summarised, never judged.
func Stability(series []float64) StabilityResult {
	y, dropped := finite(series)
	var res StabilityResult
	if dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("dropped %d non-finite values of %d", dropped, len(series)))
	}
	res.N = len(y)
	res.Mean = mean(y)
	res.Median = medianSorted(sortedCopy(y))
	if res.N < minStabilityPoints {
		res.CV = math.NaN()
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d seconds are too few to judge stability: need at least %d", res.N, minStabilityPoints))
		return res
	}
	sd := stddev(y, res.Mean, 1)
	switch {
	case res.Mean != 0:
		res.CV = sd / math.Abs(res.Mean)
	case sd == 0:
		res.CV = 0
	default:
		res.CV = math.Inf(1)
	}

	limit := StallFraction * res.Median
	below, run := 0, 0
	for _, v := range y {
		if v < limit {
			below++
			run++
			res.LongestStall = max(res.LongestStall, run)
		} else {
			run = 0
		}
	}
	res.ShareBelowHalfMedian = float64(below) / float64(res.N)

	res.Period, res.PeakAutocorr = wavePeriod(y, res.Mean)
	res.Oscillates = res.Period > 0
	res.SteadyAfter = steadyAfter(y, res.Period)
	res.Settled = res.SteadyAfter <= res.N/2

	if res.CV > MaxStableCV {
		res.Reasons = append(res.Reasons, fmt.Sprintf("CV %.3f exceeds %.2f", res.CV, MaxStableCV))
	}
	if res.ShareBelowHalfMedian > MaxStallShare {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%.1f%% of seconds are below half the median (limit %.0f%%)",
			100*res.ShareBelowHalfMedian, 100*MaxStallShare))
	}
	if res.LongestStall >= MaxStallRun {
		res.Reasons = append(res.Reasons, fmt.Sprintf("stall of %d consecutive seconds below half the median (limit %d)",
			res.LongestStall, MaxStallRun-1))
	}
	if res.Oscillates {
		res.Reasons = append(res.Reasons, fmt.Sprintf("oscillates with a period of %d s (autocorrelation %.2f)",
			res.Period, res.PeakAutocorr))
	}
	if !res.Settled {
		res.Reasons = append(res.Reasons, fmt.Sprintf("not settled: steady only from second %d of %d", res.SteadyAfter, res.N))
	}
	res.Unstable = len(res.Reasons) > 0
	return res
}

// wavePeriod returns the lag and height of the highest autocorrelation peak
// that qualifies as a wave under the rules on Stability, or (0, 0).
func wavePeriod(y []float64, m float64) (period int, peak float64) {
	n := len(y)
	maxLag := n / 3
	if maxLag < 3 {
		return 0, 0
	}
	var c0 float64
	for _, v := range y {
		c0 += (v - m) * (v - m)
	}
	if c0 == 0 {
		return 0, 0
	}
	r := make([]float64, maxLag+2)
	for k := range r {
		if k >= n {
			break
		}
		var c float64
		for t := 0; t+k < n; t++ {
			c += (y[t] - m) * (y[t+k] - m)
		}
		r[k] = c / c0
	}
	threshold := math.Max(MinWaveAutocorr, 3/math.Sqrt(float64(n)))
	minSoFar := r[1]
	for k := 2; k <= maxLag; k++ {
		minSoFar = math.Min(minSoFar, r[k-1])
		if r[k] < threshold || r[k] < r[k-1] || r[k] < r[k+1] {
			continue
		}
		if r[k]-minSoFar < MinWaveAutocorr {
			continue
		}
		if r[k] > peak {
			period, peak = k, r[k]
		}
	}
	return period, peak
}

// steadyAfter implements the running-median rule documented on Stability;
// period is the wave period found, or 0.
func steadyAfter(y []float64, period int) int {
	n := len(y)
	w := min(max(n/10, 5), 60, n)
	if period > 0 {
		// A whole number of periods, so the wave itself does not read as drift.
		w = min(period*((w+period-1)/period), n)
	}
	half := w / 2
	final := medianSorted(sortedCopy(y[n-w:]))
	tol := SteadyTolerance * math.Abs(final)
	// Walk backwards from the last second; the answer is the earliest second
	// of the unbroken in-tolerance run that ends at the last second.
	window := make([]float64, 0, w)
	start := n
	for t := n - 1; t >= 0; t-- {
		lo := min(max(0, t-half), n-w)
		window = append(window[:0], y[lo:lo+w]...)
		slices.Sort(window)
		if math.Abs(medianSorted(window)-final) > tol {
			break
		}
		start = t
	}
	return start
}
