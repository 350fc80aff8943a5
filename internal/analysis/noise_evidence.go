package analysis

import (
	"fmt"
	"slices"
	"strings"
)

// This file is the noise model's evidence and its wording: what a verdict
// of CompareNoise rests on (NoiseEvidence) and the words the tables show
// for it (String, Brief, Short). The statistics that fill it are in
// noise.go and noise_disturbed.go.

// Basis names the evidence a verdict rests on.
type Basis int

const (
	// BasisRepeats is the Mann-Whitney test over the repeats alone: used
	// when the host's history is too short and the runs' series give no
	// within-run variance.
	BasisRepeats Basis = iota
	// BasisRepeatsWithin is a t-test on log throughput over the repeats,
	// where each run's variance is at least its own within-run variance
	// (batch means): no history, but the series guard small samples
	// against a variance estimate that is small by chance.
	BasisRepeatsWithin
	// BasisPrior is a t-test whose run-to-run variance pools the host's
	// noise history with the repeats (and within-run variance as a floor).
	BasisPrior
	// BasisRepeatsOwn is a t-test over the repeats with their own variance,
	// used when they vary far more than the host's history says (so that
	// variance is not small by chance) and no single disturbed run explains
	// it.
	BasisRepeatsOwn
	// BasisRepeatsWelch is Welch's t-test on log throughput over the
	// repeats alone, for a cell with no usable history and 3 or more runs
	// per side whose outlier check passed (welchGuarded): the exact
	// Mann-Whitney test cannot go below p = 0.0079 at 5 against 5, so a
	// tenfold slowdown could not pass a correction over a few cells.
	BasisRepeatsWelch
)

// NoiseEvidence says in detail what a verdict of CompareNoise rests on;
// String is the Verdict's Evidence.
type NoiseEvidence struct {
	Basis Basis
	// NBase and NOther are the repeats on each side.
	NBase, NOther int
	// Within is the number of runs with a usable within-run variance.
	Within int
	// Prior is the history used (Basis BasisPrior) or found too short.
	Prior NoisePrior
	// DF is the t-test's degrees of freedom (prior + repeats).
	DF int
	// Why explains a fallback to repeats only.
	Why string
	// SetAside describes each run left out as disturbed, the base's first:
	// "base run 2 of 3 (-8.1% from its others)" or "other run ...".
	SetAside []string
	// SetAsideIndex holds, per side (base, other), the index in the values
	// given to CompareNoise of the run set aside because the repeats
	// disagreed with the history, −1 for none.
	SetAsideIndex [2]int
	// Left holds, per side, the indexes in the values given to
	// CompareNoise of every run left out: those on a slow host and the one
	// of SetAsideIndex.
	Left [2][]int
	// HostSlow holds the runs set aside because they ran on a slow host
	// (Run.HostSlow), "other run 2 of 3 (host slow during run: ...)";
	// they are in SetAside too.
	HostSlow []string
	// SlowSide says, per side, that a run of that side ran on a slow host
	// and fewer than 3 of its runs are left: a difference that side's
	// slowness explains, that side coming out the worse, is not called
	// (Verdict.HostSlow). Its other runs measured a host known to be
	// disturbed then, and with 1 or 2 runs no check sees whether they were
	// slowed too (as for disturbanceP); with 3 or more the conflict check
	// against the history does.
	SlowSide [2]bool
	// AllSlow says, per side, why every run of that side ran on a slow
	// host (the first run's Run.HostSlow), "" otherwise.
	AllSlow [2]string
	// Withheld says that the t-test alone would have called the change
	// that SlowSide keeps from being called.
	Withheld bool
	// Paired says the runs were pairs measured in the same window
	// (NoiseOptions.Paired).
	Paired bool
	// Outliers describes the runs DixonOutlier flagged in a cell judged by
	// Welch's test (BasisRepeatsWelch), each with what was done: set aside
	// (a slow run whose removal leaves the call unchanged) or kept (a fast
	// one: a disturbance slows a run, so a fast one is not set aside). A
	// run whose removal changes the call is not here but in Guard.
	Outliers []string
	// Guard says why Welch's t-test was not used for a cell that had the
	// runs for it, the verdict falling back to the ranks (Mann-Whitney):
	// an outlier whose removal changes the t-test's call, or one that a
	// side of 3 cannot be judged without.
	Guard string
	// PDisturbed is the chance that a disturbance of the kind the host's
	// history shows, in a run no test could check (a side of one or two
	// runs), explains the difference alone; it is added to the t-test's p
	// (disturbanceP). 0 when the history shows no disturbance.
	PDisturbed float64
}

// Kept is values (one side's, in the order given to CompareNoise) without
// the run set aside from that side (side 0 the base, 1 the other); values
// itself when none was.
func (e NoiseEvidence) Kept(side int, values []float64) []float64 {
	if len(e.Left[side]) == 0 {
		return values
	}
	var out []float64
	for i, v := range values {
		if !slices.Contains(e.Left[side], i) {
			out = append(out, v)
		}
	}
	return out
}

// SingleRun reports whether a side has a single run: a verdict that only
// the noise prior makes possible.
func (e NoiseEvidence) SingleRun() bool { return e.NBase == 1 || e.NOther == 1 }

// Brief is String without the set-aside runs' details ("1 run set aside
// as disturbed"), for a table's column; the report's notes name the runs.
func (e NoiseEvidence) Brief() string { return e.text(true) }

// String is the evidence in a few words, as the tables show it.
func (e NoiseEvidence) String() string { return e.text(false) }

// text is String, or Brief when brief: the runs set aside counted, not
// named, and no canary figures.
func (e NoiseEvidence) text(brief bool) string {
	count := func(xs []string) []string {
		n := fmt.Sprintf("%d run", len(xs))
		if len(xs) != 1 {
			n += "s"
		}
		return []string{n}
	}
	if brief && len(e.SetAside) > 0 {
		e.SetAside = count(e.SetAside)
	}
	if brief && len(e.HostSlow) > 0 {
		e.HostSlow = count(e.HostSlow)
	}
	s := e.basisString(brief)
	if e.Paired && e.Basis != BasisRepeats {
		s = "interleaved pairs, " + s
	}
	if e.Basis != BasisPrior && len(e.HostSlow) > 0 {
		s += ", " + strings.Join(e.HostSlow, " and ") + " set aside"
		if brief {
			s += " (host slow)"
		}
	}
	for side, slow := range e.SlowSide {
		name, why := [2]string{"base", "other"}[side], e.AllSlow[side]
		switch {
		case !slow:
		case why == "" && brief:
			s += fmt.Sprintf("; %s partly on a slow host", name)
		case why == "":
			s += fmt.Sprintf("; %s partly on a slow host: a change it explains is not called", name)
		case brief:
			s += fmt.Sprintf("; every %s run on a slow host", name)
		default:
			s += fmt.Sprintf("; every %s run on a slow host (%s): a change it explains is not called",
				name, strings.TrimPrefix(why, "host slow during run: "))
		}
	}
	if e.Withheld {
		s += " (the t-test alone would have called it)"
	}
	return s
}

// basisString is String without the slow-host sides (brief: Brief's
// form).
func (e NoiseEvidence) basisString(brief bool) string {
	switch e.Basis {
	case BasisPrior:
		s := fmt.Sprintf("noise prior (%d history points) + repeats %d/%d", e.Prior.Points, e.NBase, e.NOther)
		if e.Prior.SetAside > 0 {
			s = fmt.Sprintf("noise prior (%d history points, %d noisy entries set aside) + repeats %d/%d",
				e.Prior.Points, e.Prior.SetAside, e.NBase, e.NOther)
		}
		if e.Within > 0 {
			s += fmt.Sprintf(" + within-run (%d runs)", e.Within)
		}
		if e.SingleRun() {
			s += ", single run"
		}
		if e.PDisturbed > 0 {
			s += fmt.Sprintf(", host disturbed %d of %d history runs (p+%.2g)", len(e.Prior.Shifts),
				e.Prior.Points+e.Prior.AsidePoints, e.PDisturbed)
		}
		if len(e.SetAside) > 0 {
			s += ", " + strings.Join(e.SetAside, " and ") + " set aside as disturbed"
		}
		return s
	case BasisRepeatsWithin:
		return fmt.Sprintf("repeats %d/%d + within-run", e.NBase, e.NOther)
	case BasisRepeatsOwn:
		return fmt.Sprintf("repeats %d/%d, t-test on their own variance", e.NBase, e.NOther)
	case BasisRepeatsWelch:
		s := fmt.Sprintf("repeats %d/%d, Welch t-test on log values", e.NBase, e.NOther)
		switch {
		case len(e.Outliers) > 0 && brief:
			s += fmt.Sprintf(", %d outlier(s) checked", len(e.Outliers))
		case len(e.Outliers) > 0:
			s += ", " + strings.Join(e.Outliers, "; ")
		}
		return s
	}
	s := fmt.Sprintf("repeats only %d/%d", e.NBase, e.NOther)
	switch {
	case e.Guard != "" && brief:
		s += ", ranks: an outlier decides the t-test"
	case e.Guard != "":
		s += ", ranks: " + e.Guard
	}
	return s
}

// Short is a one-word form of the basis for narrow columns.
func (e NoiseEvidence) Short() string {
	switch e.Basis {
	case BasisPrior:
		if e.SingleRun() {
			return "prior,1run"
		}
		if len(e.SetAside) > 0 {
			return "prior-1"
		}
		return "prior"
	case BasisRepeatsWithin:
		return "rep+within"
	case BasisRepeatsOwn:
		return "rep-t"
	case BasisRepeatsWelch:
		return "rep-welch"
	}
	return "repeats"
}
