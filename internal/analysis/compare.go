package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Defaults of CompareOptions (regression-detection.md §7.3); the interval
// level defaults to DefaultConfidence, the 95% benchstat prints.
const (
	// DefaultAlpha is the significance level, 0.01 rather than benchstat's
	// 0.05 because a report holds many cells.
	DefaultAlpha = 0.01
	// DefaultMinEffect is the smallest relative change that counts, the 2%
	// floor Mozilla Perfherder uses.
	DefaultMinEffect = 0.02
)

// CompareOptions tunes Compare; a zero field takes its default.
type CompareOptions struct {
	// Alpha is the significance level of the Mann-Whitney test (default 0.01).
	Alpha float64
	// MinEffect is the smallest relative change that counts, as a fraction of
	// the base median (default 0.02, i.e. 2%).
	MinEffect float64
	// Confidence is the level of the ratio interval (default 0.95).
	Confidence float64
	// Correction is the multiple-comparison procedure CompareFamily and
	// CorrectVerdicts apply over a family of cells (default BH); Compare
	// judges one cell and ignores it.
	Correction Correction
	// Judges are extra sources of evidence CompareFamily consults for each
	// cell after the repeats' own verdict, in order; the first that has
	// something to say replaces that verdict (see Judge).
	Judges []Judge
}

// withDefaults fills zero fields and replaces invalid ones, explaining each
// replacement in a warning.
func (o CompareOptions) withDefaults() (CompareOptions, []string) {
	var warns []string
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	} else if !(o.Alpha > 0 && o.Alpha < 1) {
		warns = append(warns, fmt.Sprintf("alpha %v is not in (0, 1); using %v", o.Alpha, DefaultAlpha))
		o.Alpha = DefaultAlpha
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	} else if !(o.MinEffect > 0 && o.MinEffect < 1) {
		warns = append(warns, fmt.Sprintf("minimum effect %v is not in (0, 1); using %v", o.MinEffect, DefaultMinEffect))
		o.MinEffect = DefaultMinEffect
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	} else if !(o.Confidence > 0 && o.Confidence < 1) {
		warns = append(warns, fmt.Sprintf("confidence %v is not in (0, 1); using %v", o.Confidence, DefaultConfidence))
		o.Confidence = DefaultConfidence
	}
	if o.Correction == "" {
		o.Correction = BH
	} else if _, err := ParseCorrection(string(o.Correction), BH); err != nil {
		warns = append(warns, fmt.Sprintf("correction: %v; using %s", err, BH))
		o.Correction = BH
	}
	return o, warns
}

// Outcome is the verdict of comparing two samples of one metric.
type Outcome int

const (
	// Unknown means the data cannot tell: run more repeats.
	Unknown Outcome = iota
	// Same means the ratio's confidence interval lies inside ±MinEffect.
	Same
	// Slower means a significant change beyond MinEffect in the metric's bad
	// direction (lower throughput, higher latency).
	Slower
	// Faster means a significant change beyond MinEffect in the metric's good
	// direction.
	Faster
)

// String names the outcome for tables and tests.
func (o Outcome) String() string {
	switch o {
	case Same:
		return "same"
	case Slower:
		return "slower"
	case Faster:
		return "faster"
	}
	return "unknown"
}

// Verdict is the result of Compare: the effect, its uncertainty, the test
// and the decision drawn from them.
type Verdict struct {
	// Outcome is the decision: slower, faster, same or unknown.
	Outcome Outcome
	// Ratio is median(other)/median(base), as Ratio computes it.
	Ratio float64
	// RatioLo and RatioHi bound the confidence interval for the ratio; they
	// are 0 and +Inf (or ±Inf) when the samples are too small for one.
	RatioLo, RatioHi float64
	// P is the two-sided Mann-Whitney p-value (NaN when a side is empty),
	// or the p-value of the evidence that decided (see Evidence).
	P float64
	// PAdjusted is P after the family's multiple-comparison correction
	// (Correction); it equals P for a cell judged alone by Compare. The
	// outcome is significant when PAdjusted < alpha.
	PAdjusted float64
	// Correction is the procedure behind PAdjusted: "" for a cell judged
	// alone, otherwise that of CorrectVerdicts.
	Correction Correction
	// Evidence names what the verdict rests on (EvidenceRepeats for the
	// Mann-Whitney test over the repeats; a Judge names its own).
	Evidence Evidence
	// Direction is the metric's good direction, kept so that a correction
	// can decide the outcome again.
	Direction Direction
	// NBase and NOther are the numbers of finite values on each side.
	NBase, NOther int
	// MedianBase and MedianOther are the medians of each side.
	MedianBase, MedianOther float64
	// Warnings explain anything that weakens the verdict, such as too few
	// samples.
	Warnings []string
	// HostSlow marks the sides (0 the base, 1 the other) with a run on a
	// slow host, as the canaries bracketing the runs said (Run.HostSlow),
	// and too few runs left to check the rest (NoiseEvidence.SlowSide): a
	// difference that side's slowness explains, the other side worse when
	// it is the other's or better when it is the base's, is not called,
	// here or after a correction (decide).
	HostSlow [2]bool
}

// Compare decides whether other differs from base for a metric that improves
// in direction dir.
//
// The rules, with the defaults of CompareOptions: Slower or Faster needs the
// Mann-Whitney p < Alpha and the ratio of medians beyond 1 ± MinEffect on the
// corresponding side (for a LowerIsBetter metric a ratio above 1 is Slower,
// for HigherIsBetter below 1); Same needs the whole ratio confidence interval
// inside [1 − MinEffect, 1 + MinEffect], so a significant but tiny change is
// Same; anything else is Unknown, meaning more runs are needed.
//
// The ratio interval is the Moses/Hodges-Lehmann interval for a shift, taken
// on log values: among the n_base·n_other pairwise differences
// d = ln(other_j) − ln(base_i), sorted, it is [exp d_(k), exp d_(nm+1−k)],
// where k is the largest count with P(U ≤ k−1) ≤ (1−Confidence)/2 under the
// Mann-Whitney null distribution. It is distribution-free under a
// multiplicative shift model and agrees with the test: it excludes 1 roughly
// when p < 1−Confidence. When a value is not positive, the same interval is
// taken on raw differences and divided by |median(base)|, with a warning.
func Compare(base, other []float64, dir Direction, opt CompareOptions) Verdict {
	opt, warns := opt.withDefaults()
	b, droppedB := finite(base)
	o, droppedO := finite(other)
	if droppedB > 0 {
		warns = append(warns, fmt.Sprintf("base: dropped %d non-finite values", droppedB))
	}
	if droppedO > 0 {
		warns = append(warns, fmt.Sprintf("other: dropped %d non-finite values", droppedO))
	}
	v := Verdict{
		NBase:       len(b),
		NOther:      len(o),
		MedianBase:  medianSorted(sortedCopy(b)),
		MedianOther: medianSorted(sortedCopy(o)),
		RatioLo:     math.Inf(-1),
		RatioHi:     math.Inf(1),
	}
	v.Ratio = Ratio(v.MedianOther, v.MedianBase)
	_, v.P = MannWhitney(b, o)
	v.PAdjusted, v.Evidence, v.Direction = v.P, EvidenceRepeats, dir

	need := RepeatsNeeded(opt.Alpha)
	for _, side := range []struct {
		name string
		n    int
	}{{"base", len(b)}, {"other", len(o)}} {
		if side.n < need {
			warns = append(warns, fmt.Sprintf("%s has %d samples; at least %d per side are needed for the Mann-Whitney test to reach p < %g",
				side.name, side.n, need, opt.Alpha))
		}
	}
	if len(b) > 0 && len(o) > 0 && len(b) >= need && len(o) >= need {
		if pmin := MinPValue(len(b), len(o)); pmin >= opt.Alpha {
			warns = append(warns, fmt.Sprintf("with %d and %d samples the smallest possible p is %.4f, not below %g",
				len(b), len(o), pmin, opt.Alpha))
		}
	}
	if len(b) == 0 || len(o) == 0 {
		v.Warnings = warns
		return v
	}

	lo, hi, logScale := ratioInterval(b, o, v.MedianBase, opt.Confidence)
	v.RatioLo, v.RatioHi = lo, hi
	if !logScale {
		warns = append(warns, "values are not all positive: the ratio interval comes from raw differences divided by the base median")
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || (logScale && lo == 0) {
		warns = append(warns, fmt.Sprintf("%d and %d samples are too few for a %s confidence interval of the ratio",
			len(b), len(o), percent(opt.Confidence)))
	}

	v.Outcome = decide(v, opt)
	v.Warnings = warns
	return v
}

// decide draws the outcome from a verdict's figures as Compare documents,
// with significance read from PAdjusted.
func decide(v Verdict, opt CompareOptions) Outcome {
	worse := v.Ratio < 1-opt.MinEffect
	better := v.Ratio > 1+opt.MinEffect
	if v.Direction == LowerIsBetter {
		worse, better = better, worse
	}
	significant := v.PAdjusted < opt.Alpha
	// A side that ran on a slow host can have made itself the worse one:
	// that difference is not called.
	if (worse && v.HostSlow[1]) || (better && v.HostSlow[0]) {
		significant = false
	}
	switch {
	case significant && worse:
		return Slower
	case significant && better:
		return Faster
	case v.RatioLo >= 1-opt.MinEffect && v.RatioHi <= 1+opt.MinEffect:
		return Same
	}
	return Unknown
}

// ratioInterval returns the shift interval described on Compare, on log
// values when every value is positive (logScale true) and otherwise on raw
// differences scaled by the base median.
func ratioInterval(b, o []float64, medianBase, confidence float64) (lo, hi float64, logScale bool) {
	logScale = !slices.ContainsFunc(b, nonPositive) && !slices.ContainsFunc(o, nonPositive)
	diffs := make([]float64, 0, len(b)*len(o))
	for _, x := range b {
		for _, y := range o {
			if logScale {
				diffs = append(diffs, math.Log(y)-math.Log(x))
			} else {
				diffs = append(diffs, y-x)
			}
		}
	}
	slices.Sort(diffs)
	k := mwuCriticalCount(len(b), len(o), (1-confidence)/2)
	dlo, dhi := math.Inf(-1), math.Inf(1)
	if k >= 1 {
		dlo, dhi = diffs[k-1], diffs[len(diffs)-k]
	}
	if logScale {
		return math.Exp(dlo), math.Exp(dhi), true
	}
	scale := math.Abs(medianBase)
	if scale == 0 {
		return math.Inf(-1), math.Inf(1), false
	}
	return 1 + dlo/scale, 1 + dhi/scale, false
}

// nonPositive reports whether x ≤ 0, where a logarithm is undefined.
func nonPositive(x float64) bool { return x <= 0 }

// HolmBonferroni applies Holm's step-down procedure to the p-values of a
// family of tests (for example every cell of a report) and reports which
// hypotheses are rejected while keeping the family-wise error rate at alpha.
// Sorted ascending, p_(i) (1-based) is rejected while p_(i) < alpha/(m−i+1);
// the first failure stops the procedure. The strict "<" matches Compare's
// p < alpha. NaN p-values are never rejected but still count in m.
func HolmBonferroni(ps []float64, alpha float64) []bool { return Reject(ps, alpha, Holm) }
