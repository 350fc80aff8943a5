package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Correction names a multiple-comparison procedure applied to the p-values
// of a family of cells (every cell of a report, every step of a sequence).
type Correction string

const (
	// BH is Benjamini-Hochberg's step-up procedure: it controls the false
	// discovery rate, the expected share of wrong calls among the cells
	// called slower or faster. Its power grows with the number of real
	// changes, so a change that moves many cells at once (a slower fsync
	// moves every write test) is found with fewer repeats than under Holm.
	// It is the default for the report's verdict marks.
	BH Correction = "bh"
	// Holm is Holm's step-down procedure: it controls the family-wise error
	// rate, the chance of any wrong call among all cells. It is the
	// default for the gate (compare --fail-on-regression), whose single
	// yes/no answer must stay rare under no change.
	Holm Correction = "holm"
	// NoCorrection judges every cell at alpha on its own.
	NoCorrection Correction = "none"
)

// Corrections lists the accepted names, for error messages and help.
var Corrections = []Correction{BH, Holm, NoCorrection}

// ParseCorrection accepts "bh", "holm" or "none" (and "" for def).
func ParseCorrection(s string, def Correction) (Correction, error) {
	if s == "" {
		return def, nil
	}
	for _, c := range Corrections {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%q is not a correction; want bh (Benjamini-Hochberg, false discovery rate), holm (family-wise) or none", s)
}

// Long is the correction's name for sentences.
func (c Correction) Long() string {
	switch c {
	case BH:
		return "Benjamini-Hochberg (false discovery rate)"
	case Holm:
		return "Holm (family-wise error)"
	case NoCorrection:
		return "no correction"
	}
	return string(c)
}

// Adjust returns the adjusted p-values of a family under correction c: a
// cell is rejected at level alpha exactly when its adjusted p is below
// alpha, which is the same decision as the step-down (Holm) or step-up (BH)
// procedure with strict inequalities, as Compare's p < alpha.
//
// With the p-values sorted ascending, p_(1) ≤ … ≤ p_(m):
//
//	Holm: p~_(i) = max_{j ≤ i} min(1, (m−j+1)·p_(j))
//	BH:   q_(i)  = min_{j ≥ i} min(1, m·p_(j)/j)
//
// NaN p-values (cells that could not be tested) count in m, as they are
// part of the family that was looked at, sort last, and stay NaN. Any other
// c (NoCorrection, "") returns the p-values unchanged.
func Adjust(ps []float64, c Correction) []float64 {
	m := len(ps)
	out := make([]float64, m)
	if c != Holm && c != BH {
		copy(out, ps)
		return out
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmpNaNLast(ps[i], ps[j]) })
	switch c {
	case Holm:
		running := 0.0
		for rank, idx := range order {
			p := ps[idx]
			if math.IsNaN(p) {
				out[idx] = math.NaN()
				continue
			}
			running = math.Max(running, math.Min(1, float64(m-rank)*p))
			out[idx] = running
		}
	case BH:
		running := 1.0
		for rank := m - 1; rank >= 0; rank-- {
			idx := order[rank]
			p := ps[idx]
			if math.IsNaN(p) {
				out[idx] = math.NaN()
				continue
			}
			running = math.Min(running, math.Min(1, float64(m)*p/float64(rank+1)))
			out[idx] = running
		}
	}
	return out
}

// Reject returns which cells of the family are significant at alpha after
// correction c.
func Reject(ps []float64, alpha float64, c Correction) []bool {
	adj := Adjust(ps, c)
	out := make([]bool, len(ps))
	for i, q := range adj {
		out[i] = q < alpha
	}
	return out
}

// BenjaminiHochberg applies the Benjamini-Hochberg step-up procedure to a
// family's p-values at false discovery rate alpha: with the p-values sorted
// ascending, find the largest k with p_(k) < k·alpha/m and reject the k
// smallest. NaN p-values count in m and are never rejected.
func BenjaminiHochberg(ps []float64, alpha float64) []bool { return Reject(ps, alpha, BH) }

// cmpNaNLast orders p-values ascending with NaN after every number.
func cmpNaNLast(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
