// Package analysis holds pure functions over measured numbers: relative values,
// summaries, significance tests, change points and stability. It does no I/O and
// no formatting; callers render what it returns.
package analysis

import "math"

// Direction says which way a metric improves.
type Direction int

const (
	// HigherIsBetter marks throughput-like metrics (QPS, rows/s).
	HigherIsBetter Direction = iota
	// LowerIsBetter marks latency and per-operation cost metrics.
	LowerIsBetter
)

// Band classifies a relative value against the base.
type Band int

const (
	// Neutral is a ratio inside the grey band (0.95, 1.05) or a ratio that cannot be judged.
	Neutral Band = iota
	// Better is a ratio beyond the threshold in the metric's good direction (green).
	Better
	// Worse is a ratio beyond the threshold in the metric's bad direction (red).
	Worse
)

// String names the band for tables and tests.
func (b Band) String() string {
	switch b {
	case Better:
		return "better"
	case Worse:
		return "worse"
	}
	return "neutral"
}

// Default thresholds of the Insert Benchmark articles (docs/method.md 1.13): a relative
// value <= 0.95 is red and >= 1.05 is green for higher-is-better metrics.
const (
	LowThreshold  = 0.95
	HighThreshold = 1.05
)

// Ratio returns value/base, 1 when both are zero (as sum_met.awk does), +Inf when
// only the base is zero, and NaN when either input is NaN.
func Ratio(value, base float64) float64 {
	if math.IsNaN(value) || math.IsNaN(base) {
		return math.NaN()
	}
	if base == 0 {
		if value == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return value / base
}

// BandOf classifies ratio with the article thresholds, honouring the direction:
// for a lower-is-better metric a ratio of 1.05 or more is Worse. The ratio is
// rounded to 2 decimals first, so the colour always agrees with the printed value.
func BandOf(ratio float64, dir Direction) Band {
	if math.IsNaN(ratio) {
		return Neutral
	}
	r := math.Round(ratio*100) / 100
	if math.IsInf(ratio, 1) {
		r = ratio
	}
	switch {
	case r >= HighThreshold:
		if dir == LowerIsBetter {
			return Worse
		}
		return Better
	case r <= LowThreshold:
		if dir == LowerIsBetter {
			return Better
		}
		return Worse
	}
	return Neutral
}
