package analysis

import (
	"math"
	"slices"
)

// This file is the host's noise prior: the run-to-run variance its history
// shows, pooled from groups of repeats with noisy periods set aside.

// NoisePrior is what the history of a host says about one test's run-to-run
// variation: the pooled variance of log throughput between repeats of one
// configuration, and its degrees of freedom (each group of k repeats of one
// configuration adds k−1).
type NoisePrior struct {
	// Var is the pooled variance of log throughput (0 when DF is 0).
	Var float64
	// DF is the degrees of freedom behind Var.
	DF int
	// Points is the number of runs behind Var.
	Points int
	// SetAside counts the history entries left out as from periods far
	// noisier than the rest (PoolHistory).
	SetAside int
	// AsidePoints is the number of runs in the entries set aside.
	AsidePoints int
	// Shifts holds, for each entry set aside, the size on the log scale of
	// the disturbance that explains it: one run of k moved by δ gives the
	// entry a variance of δ²/k, so δ = sqrt(k·variance). Together with the
	// runs behind the history they say how often and by how much this host
	// disturbs a run, which a single run cannot see in itself.
	Shifts []float64
}

// DisturbedRate is the share of the history's runs that a disturbance
// moved: the entries set aside (one disturbed run each, at least) over all
// the runs behind the history; 0 without history.
func (p NoisePrior) DisturbedRate() float64 {
	if n := p.Points + p.AsidePoints; n > 0 {
		return float64(len(p.Shifts)) / float64(n)
	}
	return 0
}

// PoolPrior adds a group of repeats of one configuration to a prior: its log
// values' sum of squares around their mean, with k−1 degrees of freedom.
// Non-positive values are left out.
func PoolPrior(p NoisePrior, values []float64) NoisePrior {
	ys, _ := logRuns(func() []Run {
		rs := make([]Run, len(values))
		for i, v := range values {
			rs[i] = Run{Value: v}
		}
		return rs
	}())
	if len(ys) < 2 {
		p.Points += len(ys)
		return p
	}
	return CombinePrior(p, NoisePrior{Var: sumSq(ys, mean(ys)) / float64(len(ys)-1), DF: len(ys) - 1, Points: len(ys)})
}

// CombinePrior pools two priors, weighting each variance by its degrees of
// freedom.
func CombinePrior(a, b NoisePrior) NoisePrior {
	df := a.DF + b.DF
	out := NoisePrior{DF: df, Points: a.Points + b.Points, SetAside: a.SetAside + b.SetAside,
		AsidePoints: a.AsidePoints + b.AsidePoints, Shifts: append(slices.Clip(a.Shifts), b.Shifts...)}
	if df > 0 {
		out.Var = (float64(a.DF)*a.Var + float64(b.DF)*b.Var) / float64(df)
	}
	return out
}

// PriorOutlierP is the level at which PoolHistory sets aside a history
// entry whose variance is too large for the rest: a one-sided F-test of the
// entry's variance against the pool of the others.
const PriorOutlierP = 0.001

// PoolHistory pools a test's history entries (each a group of repeats of
// one configuration in one experiment) into a prior, setting aside the
// entries from periods when the machine varied far more than usual: while
// the entry with the largest variance v has P(F ≥ v/V) < PriorOutlierP
// under F(df, DF), where V and DF are the pooled variance and degrees of
// freedom of the other entries, it is left out. Under a constant noise a
// true entry is left out with chance 0.001 per test, and leaving one out
// changes little; a loaded hour, whose variance is several times the
// usual, no longer inflates the prior of every later verdict (a pooled
// variance is a mean of squares, which one such entry dominates). It
// returns the prior and the number of entries left out.
func PoolHistory(entries []NoisePrior) (NoisePrior, int) {
	kept := slices.Clone(entries)
	dropped, asidePoints := 0, 0
	var shifts []float64
	for len(kept) > 1 {
		worst := 0
		for i, e := range kept {
			if e.Var > kept[worst].Var {
				worst = i
			}
		}
		var rest NoisePrior
		for i, e := range kept {
			if i != worst {
				rest = CombinePrior(rest, e)
			}
		}
		w := kept[worst]
		if w.DF < 1 || rest.DF < 1 || !(rest.Var > 0) || fUpper(w.Var/rest.Var, float64(w.DF), float64(rest.DF)) >= PriorOutlierP {
			break
		}
		kept = slices.Delete(kept, worst, worst+1)
		dropped++
		asidePoints += w.Points
		shifts = append(shifts, math.Sqrt(float64(w.Points)*w.Var))
	}
	var p NoisePrior
	for _, e := range kept {
		p = CombinePrior(p, e)
	}
	p.SetAside += dropped
	p.AsidePoints += asidePoints
	p.Shifts = append(p.Shifts, shifts...)
	return p, dropped
}
