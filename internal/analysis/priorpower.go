package analysis

import (
	"fmt"
	"math"
)

// DetectPower is the chance of finding a change that PriorPower's Likely
// figures are computed for.
const DetectPower = 0.90

// PriorPower is what a host's noise history lets a planned comparison call
// before it runs: CompareNoise's t-test with the prior's variance s² and n
// repeats per side has a standard error of the log ratio SE = s·sqrt(2/n)
// and ν = prior DF + 2n − 2 degrees of freedom, and a change is called
// when its estimate passes the t quantile of the p a lone change needs
// (alpha/cells under Holm or BH) and the minimum effect.
type PriorPower struct {
	// Prior is the history used.
	Prior NoisePrior
	// N is the planned repeats per side.
	N int
	// Usable says the prior has the MinPriorDF CompareNoise needs; the other
	// figures are zero when it is false.
	Usable bool
	// DF is the t-test's degrees of freedom.
	DF int
	// Threshold is the p a lone change needs (LoneThreshold).
	Threshold float64
	// SE is the expected standard error of the log ratio.
	SE float64
	// Callable is the smallest slowdown, as a fraction of the base (0.05 =
	// 5%), whose measured ratio would be called: 1 − exp(−q·SE) with q the
	// two-sided t quantile of Threshold, and at least the minimum effect.
	// A change of this size is found about half of the time.
	Callable float64
	// Likely is the slowdown found with DetectPower (90%) chance:
	// 1 − exp(−(q + z₀.₉)·SE), at least the minimum effect.
	Likely float64
	// Disturbed says the host's disturbed runs (NoisePrior.Shifts) raised
	// Callable and Likely: with a single run per side, a difference that
	// such a run explains often enough is not called (disturbanceP).
	Disturbed bool
}

// PriorPowerOf computes the PriorPower of a family of cells compared with
// n repeats per side at alpha under correction c, given one cell's prior
// (minPriorDF 0 takes DefaultMinPriorDF, minEffect 0 DefaultMinEffect).
func PriorPowerOf(prior NoisePrior, n, cells int, alpha float64, c Correction, minPriorDF int, minEffect float64) PriorPower {
	if minPriorDF <= 0 {
		minPriorDF = DefaultMinPriorDF
	}
	if minEffect <= 0 {
		minEffect = DefaultMinEffect
	}
	pp := PriorPower{Prior: prior, N: n}
	if n < 1 || prior.DF < minPriorDF || !(prior.Var > 0) {
		return pp
	}
	pp.Usable = true
	pp.DF = prior.DF + 2*n - 2
	pp.Threshold = LoneThreshold(alpha, cells, c)
	pp.SE = math.Sqrt(prior.Var * 2 / float64(n))
	q := studentQuantile(1-pp.Threshold/2, float64(pp.DF))
	pp.Callable = math.Max(minEffect, 1-math.Exp(-q*pp.SE))
	pp.Likely = math.Max(minEffect, 1-math.Exp(-(q+normQuantile(DetectPower))*pp.SE))
	if n == 1 && prior.DisturbedRate() > 0 {
		// The smallest log change whose t-test p plus the chance that a
		// disturbed run explains it stays below the threshold.
		for d := 0.0; d < 5; d += 0.001 {
			if studentTwoSided(d/pp.SE, float64(pp.DF))+disturbanceP(-d, pp.SE, 1, 1, prior) < pp.Threshold {
				if c := 1 - math.Exp(-d); c > pp.Callable+1e-9 {
					pp.Disturbed = true
					pp.Callable = c
					pp.Likely = math.Max(pp.Likely, 1-math.Exp(-(d+normQuantile(DetectPower)*pp.SE)))
				}
				break
			}
		}
	}
	return pp
}

// String is the one-line statement plan prints per test.
func (p PriorPower) String() string {
	if !p.Usable {
		return fmt.Sprintf("no usable noise history (%s)", priorTooShort(p.Prior, DefaultMinPriorDF))
	}
	s := fmt.Sprintf("noise history s=%.1f%% (%d df): with %d repeats per side a slowdown of %.1f%% can be called, "+
		"%.1f%% is found %.0f%% of the time (needs p < %.2g)",
		100*math.Sqrt(p.Prior.Var), p.Prior.DF, p.N, 100*p.Callable, 100*p.Likely, 100*DetectPower, p.Threshold)
	if p.Disturbed {
		s += fmt.Sprintf("; raised by the %d of %d history runs this host disturbed, which a single run cannot see in itself",
			len(p.Prior.Shifts), p.Prior.Points+p.Prior.AsidePoints)
	}
	return s
}
