package analysis

import (
	"fmt"
	"math"
)

// DefaultConfidence is the confidence level used for intervals when the caller
// passes none (benchstat's 95%).
const DefaultConfidence = 0.95

// exactBinomialMax is the largest sample size for which the median interval
// is built from exact binomial probabilities; larger samples use the normal
// approximation with continuity correction, as benchstat does.
const exactBinomialMax = 30

// Summary describes one sample by its median and a distribution-free
// confidence interval for the population median.
type Summary struct {
	// N is the number of finite values summarised.
	N int
	// Median is the sample median (NaN when N is 0).
	Median float64
	// Lo and Hi bound the confidence interval for the population median; they
	// are -Inf/+Inf when the sample is too small for the requested confidence.
	Lo, Hi float64
	// Confidence is the confidence level the interval was built for.
	Confidence float64
	// Warnings explain anything that makes the summary less trustworthy.
	Warnings []string
}

// Summarize returns the median of xs with a confidence interval for the
// population median taken from order statistics, the method of benchstat: the
// number of sample points below the median is Binomial(n, 1/2), so
// [x_(l), x_(r)] covers the median with probability P(l ≤ B ≤ r−1). For n ≤ 30
// the interval grows from the binomial mode by the more probable neighbour
// (ties go left) until it reaches the confidence; above 30 it uses the normal
// approximation N(n/2, n/4) with continuity correction. The interval makes no
// assumption about the shape of the distribution. NaN and infinite values are
// dropped with a warning; a confidence outside (0, 1) is replaced by
// DefaultConfidence with a warning.
func Summarize(xs []float64, confidence float64) Summary {
	var warns []string
	if !(confidence > 0 && confidence < 1) {
		warns = append(warns, fmt.Sprintf("confidence %v is not in (0, 1); using %v", confidence, DefaultConfidence))
		confidence = DefaultConfidence
	}
	vals, dropped := finite(xs)
	if dropped > 0 {
		warns = append(warns, fmt.Sprintf("dropped %d non-finite values of %d", dropped, len(xs)))
	}
	s := sortedCopy(vals)
	sum := Summary{N: len(s), Median: medianSorted(s), Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: confidence}
	if len(s) == 0 {
		sum.Median = math.NaN()
		sum.Warnings = append(warns, "no samples")
		return sum
	}
	l, r := medianCIRanks(len(s), confidence)
	if l >= 1 {
		sum.Lo = s[l-1]
	}
	if r <= len(s) {
		sum.Hi = s[r-1]
	}
	if l < 1 || r > len(s) {
		warns = append(warns, fmt.Sprintf("%d samples are too few for a %s confidence interval of the median: need at least %d",
			len(s), percent(confidence), minSamplesForMedianCI(confidence)))
	}
	sum.Warnings = warns
	return sum
}

// medianCIRanks returns 1-based order-statistic ranks l < r such that
// [x_(l), x_(r)] covers the population median with at least the given
// confidence; l may be 0 and r may be n+1, meaning an unbounded side.
func medianCIRanks(n int, confidence float64) (l, r int) {
	if n > exactBinomialMax {
		// P(l ≤ B ≤ n−l) ≈ 1 − 2Φ((l − 0.5 − n/2)/(√n/2)) ≥ confidence.
		z := normQuantile((1 + confidence) / 2)
		l = int(math.Floor(float64(n)/2 + 0.5 - z*math.Sqrt(float64(n))/2))
		l = max(l, 0)
		return l, n + 1 - l
	}
	pmf := binomialHalfPMF(n)
	// Start with the mode k = ⌈(n+1)/2⌉ − 1 as the half-open range [k, k+1).
	k := (n+2)/2 - 1
	l, r = k, k+1
	cover := pmf[k]
	for cover < confidence && (l > 0 || r <= n) {
		left, right := -1.0, -1.0
		if l > 0 {
			left = pmf[l-1]
		}
		if r <= n {
			right = pmf[r]
		}
		if left >= right {
			l--
			cover += left
		} else {
			cover += right
			r++
		}
	}
	return l, r
}

// binomialHalfPMF returns P(B = k) for B ~ Binomial(n, 1/2), k = 0..n.
func binomialHalfPMF(n int) []float64 {
	pmf := make([]float64, n+1)
	for k := range pmf {
		pmf[k] = math.Exp(lgamma(float64(n+1)) - lgamma(float64(k+1)) - lgamma(float64(n-k+1)) - float64(n)*math.Ln2)
	}
	return pmf
}

// minSamplesForMedianCI returns the smallest n for which the median interval
// at this confidence has both ends finite.
func minSamplesForMedianCI(confidence float64) int {
	for n := 1; n < 1<<20; n++ {
		if l, r := medianCIRanks(n, confidence); l >= 1 && r <= n {
			return n
		}
	}
	return -1
}

// percent renders a fraction such as 0.95 as "95%" for warning texts.
func percent(f float64) string {
	return fmt.Sprintf("%g%%", math.Round(f*1e6)/1e4)
}
