package analysis

import (
	"math"
	"slices"
)

// This file is how CompareNoise treats disturbed runs: the check that the
// repeats agree with the history, the runs set aside when they do not, the
// chance that an unchecked disturbance explains a difference, and the
// sides a slow host keeps from being called.

// withhold decides v's outcome with the sides marked whose runs on a slow
// host left too few runs to check (NoiseEvidence.SlowSide, copied to
// Verdict.HostSlow), and says in ev when that kept a change from being
// called.
func withhold(v *Verdict, ev *NoiseEvidence, opt CompareOptions) {
	v.HostSlow = ev.SlowSide
	v.Outcome = decide(*v, opt)
	if v.HostSlow != [2]bool{} {
		free := *v
		free.HostSlow = [2]bool{}
		ev.Withheld = decide(free, opt) != v.Outcome
	}
}

// disturbanceP is the chance that a disturbance of a run explains a
// difference d of mean log throughput on its own, as the host's history
// knows its disturbances (NoisePrior.Shifts and DisturbedRate), given the
// sides' run counts before any was set aside. Only runs no check saw can
// hide one: a single run, and both runs of a side of two compared with a
// single run (with 2 against 2 or more, CompareNoise's conflict check sees
// a disturbed run in the spread; a side of 3 or more has it set aside). A
// disturbed run of a side of n moves the side's mean by δ/n, and
// it explains d when δ/n reaches |d| less two standard errors of the
// comparison (the rest is ordinary noise). A disturbance (a stall, a
// neighbour's load) slows a run, so only the side that came out lower can
// hold it: the other side when d < 0, the base when d > 0. By the union
// bound over that side's unchecked runs, the chance is at most n · rate ·
// (share of the history's shifts δ with δ/n ≥ |d| − 2·se), which the
// verdict adds to the t-test's p. A quiet host's history sets nothing aside and adds nothing;
// on a host with bad minutes a single run per target cannot call a change
// that such a minute explains, and says so, instead of calling it falsely.
func disturbanceP(d, se float64, nb, no int, prior NoisePrior) float64 {
	rate := prior.DisturbedRate()
	if rate == 0 {
		return 0
	}
	need := math.Abs(d) - 2*se
	checked := nb+no-2 >= 2
	// A disturbance slows a run: a lower other side can be its other's
	// disturbed run, a higher one its base's.
	n := no
	if d > 0 {
		n = nb
	}
	if n < 1 || n > 2 || (n == 2 && checked) {
		return 0
	}
	explain := 0
	for _, delta := range prior.Shifts {
		if delta/float64(n) >= need {
			explain++
		}
	}
	return float64(n) * rate * float64(explain) / float64(len(prior.Shifts))
}

// SetAsideAgreeP is the level at which the runs left after setting one
// aside as disturbed must agree with the host's history (the one-sided
// F-test of their pooled variance against the prior's): stricter than
// PriorConflictP, so that repeats spread evenly (a noisy period, not one
// stalled run) are not made to look quiet by dropping their extreme.
const SetAsideAgreeP = 0.05

// priorConflict is the one-sided F-test of the repeats' pooled variance
// (each side around its own mean) against the prior's: its p and the
// repeats' variance.
func priorConflict(yb, yo []float64, prior NoisePrior) (p, own float64) {
	nu := len(yb) + len(yo) - 2
	own = (sumSq(yb, mean(yb)) + sumSq(yo, mean(yo))) / float64(nu)
	return fUpper(own/prior.Var, float64(nu), float64(prior.DF)), own
}

// disturbedRuns finds the fewest runs, at most one per side, whose
// removal leaves repeats that agree with the prior. Only a side with at
// least 3 runs can lose one (of 2, which is disturbed cannot be told), and
// only a run slower than the mean of its side's others: a disturbance (a
// stall, a neighbour's load) slows a run, and setting aside a fast run
// would let a side whose runs were mostly disturbed look calm.
// Single removals are tried first, then one run of each side; of each
// kind, the one leaving the smallest pooled sum of squares is taken, and
// accepted when the remaining repeats pass priorConflict at
// SetAsideAgreeP. drop[0] and drop[1] are the indexes of the base's and
// the other side's run to leave out, −1 for none.
func disturbedRuns(yb, yo []float64, prior NoisePrior) (drop [2]int, ok bool) {
	sides := [2][]float64{yb, yo}
	options := func(sd int) []int {
		out := []int{-1}
		if len(sides[sd]) >= 3 {
			for i, y := range sides[sd] {
				// A disturbance slows a run: only a run below its
				// side's others can be one.
				if rest := slices.Delete(slices.Clone(sides[sd]), i, i+1); y < mean(rest) {
					out = append(out, i)
				}
			}
		}
		return out
	}
	without := func(ys []float64, i int) []float64 {
		if i < 0 {
			return ys
		}
		return slices.Delete(slices.Clone(ys), i, i+1)
	}
	for _, removals := range []int{1, 2} {
		best, found := math.Inf(1), false
		var cand [2]int
		for _, i := range options(0) {
			for _, j := range options(1) {
				if n := boolInt(i >= 0) + boolInt(j >= 0); n != removals {
					continue
				}
				b, o := without(yb, i), without(yo, j)
				if ss := sumSq(b, mean(b)) + sumSq(o, mean(o)); ss < best {
					best, cand, found = ss, [2]int{i, j}, true
				}
			}
		}
		if !found {
			continue
		}
		b, o := without(yb, cand[0]), without(yo, cand[1])
		if len(b)+len(o) < 3 {
			continue
		}
		if p, _ := priorConflict(b, o, prior); p >= SetAsideAgreeP {
			return cand, true
		}
	}
	return [2]int{-1, -1}, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
