package analysis

import (
	"fmt"
	"math"
)

// maxRepeatsSearched bounds RepeatsNeeded's search; 2/C(2n, n) falls by
// about 4 per repeat, so any threshold above 1e-300 is met well before.
const maxRepeatsSearched = 1000

// MinPValue is the smallest two-sided p-value the exact Mann-Whitney test
// can give with m values against n: 2/C(m+n, m), reached when one sample
// lies wholly above the other. It is 2/252 ≈ 0.0079 at 5 against 5,
// 2/924 ≈ 0.0022 at 6 and 2/3432 ≈ 0.00058 at 7; no data, however clear,
// gets below it, so it decides whether a verdict can be reached at all.
// An empty side gives 1.
func MinPValue(m, n int) float64 {
	if m <= 0 || n <= 0 {
		return 1
	}
	lc := lgamma(float64(m+n+1)) - lgamma(float64(m+1)) - lgamma(float64(n+1))
	return math.Min(1, 2*math.Exp(-lc))
}

// RepeatsNeeded is the smallest n for which n repeats against n can reach a
// p-value below threshold (MinPValue(n, n) < threshold): 4 for 0.05, 5 for
// 0.01, 8 for 0.01/32. It returns 0 when no n up to 1000 does (a threshold
// that is not positive).
func RepeatsNeeded(threshold float64) int {
	for n := 1; n <= maxRepeatsSearched; n++ {
		if MinPValue(n, n) < threshold {
			return n
		}
	}
	return 0
}

// LoneThreshold is the p-value the strongest cell of a family of cells must
// beat to be called significant when it is the family's only change:
// alpha/cells under Holm and under Benjamini-Hochberg (both compare the
// smallest p with alpha/m), alpha without correction.
func LoneThreshold(alpha float64, cells int, c Correction) float64 {
	if cells < 1 || (c != Holm && c != BH) {
		return alpha
	}
	return alpha / float64(cells)
}

// Power says whether a family of compared cells can produce a significant
// verdict at all with the repeats it has, before anything is measured. It
// concerns the arithmetic of the exact test, not noise: with too few
// repeats even a tenfold slowdown cannot be called.
type Power struct {
	// Cells is the number of compared cells in the family (targets other
	// than the base × tests × thread counts).
	Cells int
	// NBase and NOther are the repeats on each side (the smallest over the
	// family's cells when they differ).
	NBase, NOther int
	// Alpha is the significance level (family-wise under Holm, false
	// discovery rate under BH).
	Alpha float64
	// Correction is the multiple-comparison procedure over the cells.
	Correction Correction
	// Floor is MinPValue(NBase, NOther), the smallest p reachable.
	Floor float64
	// Threshold is LoneThreshold: the p a lone change must get below.
	Threshold float64
	// Callable says a lone change can be called: Floor < Threshold.
	Callable bool
	// RepeatsNeeded is the repeats per side (equal sides) that make a lone
	// change callable: RepeatsNeeded(Threshold).
	RepeatsNeeded int
	// MinChanged is the fewest cells that must all reach the floor together
	// for any of them to be called: 1 when Callable; under BH, which
	// compares the k-th smallest p with k·alpha/m, the smallest k with
	// Floor < k·Alpha/Cells; 0 when even all cells together cannot be
	// called.
	MinChanged int
}

// PowerOf computes the Power of a family of cells compared with nBase
// against nOther repeats at alpha under correction c.
func PowerOf(cells, nBase, nOther int, alpha float64, c Correction) Power {
	if cells < 1 {
		cells = 1
	}
	p := Power{Cells: cells, NBase: nBase, NOther: nOther, Alpha: alpha, Correction: c,
		Floor: MinPValue(nBase, nOther), Threshold: LoneThreshold(alpha, cells, c)}
	p.Callable = p.Floor < p.Threshold
	p.RepeatsNeeded = RepeatsNeeded(p.Threshold)
	switch {
	case p.Callable:
		p.MinChanged = 1
	case c == BH:
		k := int(math.Floor(p.Floor*float64(cells)/alpha)) + 1
		if k <= cells && p.Floor < float64(k)*alpha/float64(cells) {
			p.MinChanged = k
		}
	}
	return p
}

// String is the one-line statement shown by plan, run, compare and the
// report, for example "power with repeats alone: 32 cells, 5 vs 5 repeats, alpha 0.01, holm:
// smallest p 0.0079, a lone change needs p < 0.00031: cannot be called;
// 8 repeats per side needed".
func (p Power) String() string {
	s := fmt.Sprintf("power with repeats alone: %d cells, %d vs %d repeats, alpha %g, %s: smallest p %.2g, a lone change needs p < %.2g: ",
		p.Cells, p.NBase, p.NOther, p.Alpha, p.Correction, p.Floor, p.Threshold)
	if p.Callable {
		return s + "can be called"
	}
	s += "cannot be called"
	if p.RepeatsNeeded > 0 {
		s += fmt.Sprintf("; %d repeats per side needed", p.RepeatsNeeded)
	}
	if p.MinChanged > 1 {
		s += fmt.Sprintf(" (with %d repeats, only a change that moves at least %d cells together can be called)",
			min(p.NBase, p.NOther), p.MinChanged)
	}
	return s
}
