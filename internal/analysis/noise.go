package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Batch-means settings. A run's 1-second series is autocorrelated (a
// checkpoint or a compaction slows several seconds in a row), so the
// variance of its mean is not the variance of a second divided by the
// number of seconds. Grouping the seconds into batches and growing the
// batches until their means are nearly uncorrelated gives an honest
// variance of the mean (the method of batch means, Law and Kelton,
// "Simulation Modeling and Analysis", ch. 9).
const (
	// MinBatches is the fewest batches a variance is computed from; with
	// fewer the series is too short and no within-run variance is given.
	MinBatches = 8
	// MaxBatchLag1 is the largest lag-1 autocorrelation of the batch means
	// accepted as "nearly uncorrelated". Its standard error under
	// independence is about 1/sqrt(batches), 0.35 at 8 batches, so the check
	// catches strong correlation only; the batch size doubles until it holds.
	MaxBatchLag1 = 0.2
)

// BatchMeans is the within-run variation of one measured step, from its
// per-second series.
type BatchMeans struct {
	// Mean is the mean of the seconds used (the trailing seconds that do not
	// fill a batch are left out).
	Mean float64
	// Size is the batch size in seconds and Batches the number of batches.
	Size, Batches int
	// Lag1 is the lag-1 autocorrelation of the batch means at Size.
	Lag1 float64
	// VarMean is the variance of Mean: the sample variance of the batch
	// means divided by Batches.
	VarMean float64
	// OK is true when at least MinBatches batches had |Lag1| <=
	// MaxBatchLag1; otherwise Reason says why no variance is given.
	OK     bool
	Reason string
}

// RelVar is the variance of log(Mean), VarMean/Mean² by the delta method:
// the within-run variance on the scale verdicts are taken on. It is NaN when
// the batch means are not OK.
func (b BatchMeans) RelVar() float64 {
	if !b.OK || b.Mean == 0 {
		return math.NaN()
	}
	return b.VarMean / (b.Mean * b.Mean)
}

// BatchMeansOf computes the batch means of a per-second series: batch size
// 1, 2, 4, ... until the lag-1 autocorrelation of the batch means is at most
// MaxBatchLag1, as long as at least MinBatches batches remain. Non-finite
// values are dropped first.
func BatchMeansOf(series []float64) BatchMeans {
	xs, _ := finite(series)
	var last BatchMeans
	for size := 1; len(xs)/size >= MinBatches; size *= 2 {
		k := len(xs) / size
		means := make([]float64, k)
		for i := range k {
			var s float64
			for _, x := range xs[i*size : (i+1)*size] {
				s += x
			}
			means[i] = s / float64(size)
		}
		m := mean(means)
		sd := stddev(means, m, 1)
		last = BatchMeans{Mean: m, Size: size, Batches: k, Lag1: lag1(means, m), VarMean: sd * sd / float64(k)}
		if math.Abs(last.Lag1) <= MaxBatchLag1 || sd == 0 {
			last.OK = true
			return last
		}
	}
	if last.Batches == 0 {
		last.Reason = fmt.Sprintf("%d seconds are fewer than the %d batches needed", len(xs), MinBatches)
		return last
	}
	last.Reason = fmt.Sprintf("batch means of %d s still correlated (lag-1 %.2f > %.2f) with %d batches",
		last.Size, last.Lag1, MaxBatchLag1, last.Batches)
	return last
}

// lag1 is the lag-1 autocorrelation of xs around m: Σ(x_i−m)(x_{i+1}−m) /
// Σ(x_i−m)²; 0 for a constant series.
func lag1(xs []float64, m float64) float64 {
	var num, den float64
	for i, x := range xs {
		d := x - m
		den += d * d
		if i+1 < len(xs) {
			num += d * (xs[i+1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// Run is one repeat's value of a cell with its within-run variance.
type Run struct {
	// Value is the run's headline throughput (> 0 to be used).
	Value float64
	// RelVar is the variance of log(Value) within the run (BatchMeans.RelVar);
	// NaN when the run's series gave none.
	RelVar float64
	// HostSlow, when not empty, says why the run counts as run on a slow
	// host: a canary bracketing it ran slower than the host's usual spread
	// allows ("host slow during run: memory canary (32 MiB) x1.80 after
	// the run, ..."). CompareNoise sets such a run aside when it came out
	// worse than its side's others.
	HostSlow string
	// Disturbed, when not empty, says what measured during the run found
	// the machine disturbed (other processes' CPU with the run-queue wait
	// it caused, CPU speed probes far below the compared runs'). Such a
	// run is set aside when it came out worse than its side's undisturbed
	// runs, as a run on a slow host is, but it never keeps its side from
	// being called the worse one: these flags are common on a small shared
	// machine (most runs of a test suite run in parallel carry one), and
	// the host's noise history already holds the variation of its busy
	// hours.
	Disturbed string
}

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

// PriorConflictP is the level of CompareNoise's check that a cell's own
// repeats vary as the host's history says: when their pooled variance is
// larger than the prior's with a one-sided F-test p below it, the prior
// does not describe the cell and is not used.
const PriorConflictP = 0.001

// DefaultMinPriorDF is the history a noise prior needs before verdicts use
// it: 10 degrees of freedom, for example three targets with 5 repeats or
// five A/A pairs of 3 repeats.
const DefaultMinPriorDF = 10

// NoiseOptions tune CompareNoise.
type NoiseOptions struct {
	CompareOptions
	// MinPriorDF is the history needed to use the prior (default
	// DefaultMinPriorDF).
	MinPriorDF int
	// Paired says the runs are pairs measured in the same window (an
	// interleaved experiment, spec workload.interleave), given as the
	// report's PairedRuns makes them: the base's runs all at one level, the
	// other's each divided by its partner; the evidence says so.
	Paired bool
}

// CompareNoise decides whether other differs from base using all the
// evidence at hand, and says which (Evidence).
//
// Model: a run's log throughput is its configuration's level plus a
// run-to-run error of variance σ² (fresh load, placement, the machine's
// state), and a run's within-run variance w (BatchMeans.RelVar) is part of
// that error. The estimate of σ² pools the host's history with the
// repeats, as an empirical-Bayes moderated t-test does (Smyth 2004, limma):
//
//	s² = (ν₀·s₀² + SS) / (ν₀ + ν),  SS = Σ over sides Σ (y − ȳ_side)², ν = n_b + n_o − 2
//
// and each run counts with variance max(s², w), so a disturbed run weighs
// less. With d = ȳ_o − ȳ_b and SE² = Σ_b max(s², w)/n_b² + Σ_o max(s², w)/n_o²,
// t = d/SE has ν₀ + ν degrees of freedom; the ratio is exp(d) (geometric
// means) with the interval exp(d ± t_q·SE). The outcome follows Compare's
// rules (p < Alpha and beyond MinEffect: slower or faster; the whole
// interval within ±MinEffect: same; otherwise unknown).
//
// The prior is used when it has at least MinPriorDF degrees of freedom and
// the cell's own repeats agree with it: with ν ≥ 2, the one-sided F-test
// of SS/ν against s₀² with (ν, ν₀) degrees of freedom must not fall below
// PriorConflictP. When it does, the usual cause on a shared machine is one
// run disturbed by a stall (one slow run of three), which pooling would
// judge with the history's small variance and call a change, and which
// falling back to the repeats would let hide a real one (Mann-Whitney never
// goes below p = 0.1 at 3 and 3, so a base with one stalled run hid every
// regression measured against it). So the fewest runs, at most one per
// side and only from a side of 3 or more, whose removal leaves repeats that
// agree with the history (F-test p ≥ SetAsideAgreeP) are set aside as
// disturbed, named in NoiseEvidence.SetAside, and the prior's t-test runs
// on the rest. When no such run explains the conflict (repeats spread
// evenly: a noisy period, or a machine unlike its history), the t-test runs
// on the repeats alone with their own variance (BasisRepeatsOwn), which the
// conflict shows is not small by chance. With a single run per side only
// the prior can give a verdict, and nothing can check it. Without a usable
// prior, and with at least 2 repeats per side whose series all gave a
// within-run variance, the t-test runs on the repeats alone (ν₀ = 0).
// Otherwise, with 3 or more runs a side (not interleaved pairs, which have
// their paired test), Welch's t-test on log throughput judges the repeats
// alone (BasisRepeatsWelch): log throughput is the scale the noise model
// already takes as normal, and the exact Mann-Whitney test cannot go below
// p = 0.0079 at 5 against 5, so a tenfold slowdown could not pass a
// correction over a handful of cells. A run far from its side's others
// (Dixon's Q) is checked first (welchGuarded); when the t-test's call rests
// on it, or a side of 3 would have to judge without it, the verdict is
// Compare's Mann-Whitney test over the repeats and NoiseEvidence.Guard says
// why, as NoiseEvidence.Why says why no history was used.
//
// Before all this, runs whose canaries found the host slow (Run.HostSlow)
// are set aside from a side that keeps runs on a normal host, when they
// came out worse than the mean of those (NoiseEvidence.HostSlow): a slow
// host slows a run, and one it did not slow still shows how much its side
// varies. A side with such a run and fewer than 3 runs left cannot be
// called the worse one (NoiseEvidence.SlowSide, Verdict.HostSlow): its
// other runs measured a host known to be disturbed, and nothing checks
// them (on a calibration through a host at load average 20-40, setting
// flagged runs aside alone left two slowed runs that agreed to call 4 of
// 250 A/A cells; this rule called none).
func CompareNoise(base, other []Run, dir Direction, prior NoisePrior, opt NoiseOptions) (Verdict, NoiseEvidence) {
	if opt.MinPriorDF <= 0 {
		opt.MinPriorDF = DefaultMinPriorDF
	}
	copt, warns := opt.CompareOptions.withDefaults()
	ev := NoiseEvidence{Prior: prior, SetAsideIndex: [2]int{-1, -1}, Paired: opt.Paired}
	// Runs on a slow host go first: from a side that keeps others, those
	// worse than the mean of its runs on a normal host; orig maps each
	// side's remaining runs to their indexes as given.
	var orig [2][]int
	for side, rs := range [2]*[]Run{&base, &other} {
		// normal: the runs no canary flagged, which a run on a slow host is
		// set against; clean: those with no flag at all, which a disturbed
		// run is set against.
		var normal, clean []float64
		hostSlow := false
		for _, r := range *rs {
			if r.HostSlow == "" {
				normal = append(normal, r.Value)
				if r.Disturbed == "" {
					clean = append(clean, r.Value)
				}
			}
			hostSlow = hostSlow || r.HostSlow != ""
		}
		if hostSlow && len(normal) == 0 {
			ev.AllSlow[side] = (*rs)[0].HostSlow
		}
		worse := func(v float64, than []float64) bool {
			if len(than) == 0 {
				return false
			}
			if dir == LowerIsBetter {
				return v > mean(than)
			}
			return v < mean(than)
		}
		var keep []Run
		for i, r := range *rs {
			why := ""
			switch {
			case r.HostSlow != "" && worse(r.Value, normal):
				why = r.HostSlow
			case r.HostSlow == "" && r.Disturbed != "" && 2*len(clean) >= len(*rs) && worse(r.Value, clean):
				// Only clean runs that are half the side or more say what its normal
				// is: on a busy machine most runs are disturbed, and setting
				// them aside against one clean run left a side of 1.
				why = r.Disturbed
			}
			if why != "" {
				ev.HostSlow = append(ev.HostSlow, fmt.Sprintf("%s run %d of %d (%s)", [2]string{"base", "other"}[side], i+1, len(*rs), why))
				ev.Left[side] = append(ev.Left[side], i)
				continue
			}
			keep = append(keep, r)
			orig[side] = append(orig[side], i)
		}
		*rs = keep
		// Fewer than 3 runs left: no check can see whether the slow host
		// also slowed them.
		ev.SlowSide[side] = hostSlow && len(keep) < 3
	}
	ev.SetAside = slices.Clone(ev.HostSlow)
	yb, wb := logRuns(base)
	yo, wo := logRuns(other)
	ev.NBase, ev.NOther = len(yb), len(yo)
	nb0, no0 := len(yb), len(yo)
	values := func(rs []Run) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.Value
		}
		return out
	}
	usePrior := prior.DF >= opt.MinPriorDF && prior.Var > 0
	positive := len(yb) == len(base) && len(yo) == len(other)
	conflict := ""
	if nu := len(yb) + len(yo) - 2; usePrior && positive && nu >= 2 {
		if p, own := priorConflict(yb, yo, prior); p < PriorConflictP {
			if drop, ok := disturbedRuns(yb, yo, prior); ok {
				sides := [2]*[]Run{&base, &other}
				ys := [2]*[]float64{&yb, &yo}
				ws := [2]*[]float64{&wb, &wo}
				var notes []string
				for side, i := range drop {
					if i < 0 {
						continue
					}
					rest := slices.Delete(slices.Clone(*ys[side]), i, i+1)
					dev := 100 * (math.Exp((*ys[side])[i]-mean(rest)) - 1)
					notes = append(notes, fmt.Sprintf("%s run %d of %d (%+.1f%% from its others)", [2]string{"base", "other"}[side], i+1, len(*ys[side]), dev))
					*sides[side] = slices.Delete(slices.Clone(*sides[side]), i, i+1)
					*ys[side] = rest
					*ws[side] = slices.Delete(slices.Clone(*ws[side]), i, i+1)
				}
				ev.SetAside = append(ev.SetAside, notes...)
				for side, i := range drop {
					if i >= 0 {
						ev.SetAsideIndex[side] = orig[side][i]
						ev.Left[side] = append(ev.Left[side], orig[side][i])
					}
				}
				ev.NBase, ev.NOther = len(yb), len(yo)
			} else {
				usePrior = false
				conflict = fmt.Sprintf("the repeats vary far more than the host's noise history (s %.1f%% against %.1f%%, F-test p=%.2g), "+
					"more than one disturbed run explains: a noisy period, or a machine unlike its history", 100*math.Sqrt(own), 100*math.Sqrt(prior.Var), p)
			}
		}
	}
	ev.Within = 0
	for _, w := range append(append([]float64(nil), wb...), wo...) {
		if !math.IsNaN(w) {
			ev.Within++
		}
	}
	allWithin := ev.Within == len(yb)+len(yo)
	switch {
	case len(yb) == 0 || len(yo) == 0:
		ev.Why = "a side has no positive values"
	case !positive:
		ev.Why = "some values are not positive, so there is no log scale"
	case usePrior:
		ev.Basis = BasisPrior
	case len(yb) >= 2 && len(yo) >= 2 && allWithin:
		ev.Basis = BasisRepeatsWithin
		ev.Why = cmp.Or(conflict, priorTooShort(prior, opt.MinPriorDF))
	case len(yb) >= 2 && len(yo) >= 2 && conflict != "":
		ev.Basis = BasisRepeatsOwn
		ev.Why = conflict
	case opt.Paired && len(yo) >= 3:
		// Pairs measured in the same window: their ratios' own variance,
		// n-1 degrees of freedom, is a paired t-test (history or not).
		ev.Basis = BasisRepeatsOwn
		ev.Why = priorTooShort(prior, opt.MinPriorDF)
	default:
		ev.Why = cmp.Or(conflict, priorTooShort(prior, opt.MinPriorDF))
		if !allWithin {
			ev.Why += fmt.Sprintf("; %d of %d runs have a series long enough for batch means", ev.Within, len(yb)+len(yo))
		}
	}
	// A throughput of 0 is a run that completed no operation: a stall of
	// the machine, not a rate, which no log scale holds; Welch's test sets
	// it aside when its side keeps enough runs.
	stallsOnly := !positive && dir == HigherIsBetter && !slices.ContainsFunc(append(values(base), values(other)...),
		func(x float64) bool { return x != 0 && !(x > 0 && !math.IsInf(x, 0)) })
	if ev.Basis == BasisRepeats && (positive || stallsOnly) && !opt.Paired && len(yb) >= MinWelchRepeats && len(yo) >= MinWelchRepeats {
		g := welchGuarded(yb, yo, dir, copt)
		ev.Guard = g.guard
		if g.guard == "" {
			ev.Basis = BasisRepeatsWelch
			if stallsOnly {
				ev.Why = cmp.Or(conflict, priorTooShort(prior, opt.MinPriorDF))
			}
			sides := [2]*[]Run{&base, &other}
			for side, rs := range sides {
				var keep []Run
				total := len(*rs) + len(ev.Left[side])
				y := 0 // index among the side's positive runs, as welchGuarded saw them
				for i, r := range *rs {
					switch {
					case !(r.Value > 0):
						ev.Outliers = append(ev.Outliers, fmt.Sprintf("%s run %d of %d completed no operation (a stall), set aside",
							[2]string{"base", "other"}[side], orig[side][i]+1, total))
						ev.Left[side] = append(ev.Left[side], orig[side][i])
						continue
					case y == g.drop[side]:
						ev.Left[side] = append(ev.Left[side], orig[side][i])
					default:
						keep = append(keep, r)
					}
					y++
				}
				*rs = keep
			}
			ev.Outliers = append(ev.Outliers, g.notes...)
			yb, _ = logRuns(base)
			yo, _ = logRuns(other)
			ev.NBase, ev.NOther = len(yb), len(yo)
			w := WelchTest(yb, yo)
			ev.DF = int(math.Round(w.DF))
			v := Verdict{NBase: len(yb), NOther: len(yo), MedianBase: medianSorted(sortedCopy(values(base))),
				MedianOther: medianSorted(sortedCopy(values(other))), Ratio: math.Exp(w.D), Direction: dir, P: w.P}
			v.RatioLo, v.RatioHi = w.Interval(copt.Confidence)
			v.PAdjusted = v.P
			withhold(&v, &ev, copt)
			v.Evidence = Evidence(ev.String())
			v.Warnings = warns
			return v, ev
		}
	}
	if ev.Basis == BasisRepeats {
		v := Compare(values(base), values(other), dir, copt)
		withhold(&v, &ev, copt)
		v.Evidence = Evidence(ev.String())
		return v, ev
	}

	mb, mo := mean(yb), mean(yo)
	ss := sumSq(yb, mb) + sumSq(yo, mo)
	nu := len(yb) + len(yo) - 2
	if opt.Paired {
		// The base's values are all one level and the other's carry the
		// pairs' ratios: n pairs give n-1 degrees of freedom, and half
		// their squares estimate the per-side variance the prior holds
		// (a pair's variance is twice it).
		ss, nu = ss/2, len(yo)-1
	}
	var s2 float64
	df := nu
	if ev.Basis == BasisPrior {
		df += prior.DF
		s2 = (float64(prior.DF)*prior.Var + ss) / float64(df)
	} else {
		s2 = ss / float64(nu)
	}
	ev.DF = df
	se2 := sideVar(wb, s2) + sideVar(wo, s2)
	d := mo - mb
	se := math.Sqrt(se2)
	v := Verdict{NBase: len(yb), NOther: len(yo), MedianBase: medianSorted(sortedCopy(values(base))),
		MedianOther: medianSorted(sortedCopy(values(other))), Ratio: math.Exp(d), Direction: dir,
		Evidence: Evidence(ev.String())}
	if se == 0 {
		v.P = 1
		if d != 0 {
			v.P = 0
		}
		v.RatioLo, v.RatioHi = v.Ratio, v.Ratio
	} else {
		v.P = studentTwoSided(d/se, float64(df))
		q := studentQuantile((1+copt.Confidence)/2, float64(df))
		v.RatioLo, v.RatioHi = math.Exp(d-q*se), math.Exp(d+q*se)
	}
	if ev.Basis == BasisPrior {
		ev.PDisturbed = disturbanceP(d, se, nb0, no0, prior)
		v.P = min(1, v.P+ev.PDisturbed)
		v.Evidence = Evidence(ev.String())
	}
	v.PAdjusted = v.P
	withhold(&v, &ev, copt)
	v.Evidence = Evidence(ev.String())
	v.Warnings = warns
	return v, ev
}

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

// priorTooShort says why the noise prior was not used.
func priorTooShort(p NoisePrior, need int) string {
	if p.Points == 0 {
		return "no noise history for this test on this host"
	}
	return fmt.Sprintf("noise history too short: %d runs, %d degrees of freedom, %d needed", p.Points, p.DF, need)
}

// logRuns returns the logs of the positive, finite values and their
// within-run variances.
func logRuns(rs []Run) (ys, ws []float64) {
	for _, r := range rs {
		if r.Value > 0 && !math.IsInf(r.Value, 0) {
			ys = append(ys, math.Log(r.Value))
			ws = append(ws, r.RelVar)
		}
	}
	return ys, ws
}

// sideVar is the variance of a side's mean log value when each run has
// variance max(s2, w): Σ max(s2, w) / n².
func sideVar(ws []float64, s2 float64) float64 {
	var sum float64
	for _, w := range ws {
		if !math.IsNaN(w) && w > s2 {
			sum += w
		} else {
			sum += s2
		}
	}
	n := float64(len(ws))
	return sum / (n * n)
}

// sumSq is Σ(x − m)².
func sumSq(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s
}

// studentQuantile is the p-quantile (p > 0.5) of Student's t with df
// degrees of freedom, found by bisection on studentTwoSided.
func studentQuantile(p, df float64) float64 {
	tail := 2 * (1 - p)
	lo, hi := 0.0, 1.0
	for studentTwoSided(hi, df) > tail && hi < 1e12 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTwoSided(mid, df) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
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

// NoiseCell is what a NoiseJudge knows of one cell beyond its values: the
// repeats with their within-run variances, and the host's noise prior.
type NoiseCell struct {
	Base, Other []Run
	Prior       NoisePrior
	// Paired: the runs are interleaved pairs (NoiseOptions.Paired).
	Paired bool
}

// NoiseJudge is a Judge (CompareFamily) that decides cells with
// CompareNoise. Cells maps a Pair's Key to what it knows of the cell; a
// cell it does not know keeps the repeats' verdict. When CompareNoise falls
// back to the repeats, the judge still answers, with the repeats' verdict
// and an Evidence that says why it fell back.
type NoiseJudge struct {
	Cells      map[string]NoiseCell
	MinPriorDF int
}

// Judge implements Judge.
func (j NoiseJudge) Judge(c Pair, repeats Verdict, opt CompareOptions) (Verdict, bool) {
	cell, ok := j.Cells[c.Key]
	if !ok {
		return repeats, false
	}
	v, ev := CompareNoise(cell.Base, cell.Other, c.Dir, cell.Prior, NoiseOptions{CompareOptions: opt, MinPriorDF: j.MinPriorDF,
		Paired: cell.Paired})
	if ev.Basis == BasisRepeats && ev.SlowSide == [2]bool{} && len(ev.HostSlow) == 0 {
		repeats.Evidence = Evidence(ev.String())
		if ev.Why != "" {
			repeats.Evidence += Evidence(" (" + ev.Why + ")")
		}
		return repeats, true
	}
	if cell.Paired {
		// The pairs' values are ratios scaled to the base's mean: the
		// medians shown are the measured ones.
		v.MedianBase, v.MedianOther = repeats.MedianBase, repeats.MedianOther
	}
	return v, true
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
