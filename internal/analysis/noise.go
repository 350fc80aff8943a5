package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// RelVar is the variance of log(Mean), VarMean/Mean² by the delta method:
// the within-run variance on the scale verdicts are taken on. It is NaN when
// the batch means are not OK.
func (b BatchMeans) RelVar() float64 {
	if !b.OK || b.Mean == 0 {
		return math.NaN()
	}
	return b.VarMean / (b.Mean * b.Mean)
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
	c := &noiseCase{base: base, other: other, dir: dir, prior: prior, opt: opt, copt: copt, warns: warns,
		ev: NoiseEvidence{Prior: prior, SetAsideIndex: [2]int{-1, -1}, Paired: opt.Paired}}
	// Runs on a slow host go first.
	c.setAsideSlowHost()
	c.ev.SetAside = slices.Clone(c.ev.HostSlow)
	c.yb, c.wb = logRuns(c.base)
	c.yo, c.wo = logRuns(c.other)
	c.ev.NBase, c.ev.NOther = len(c.yb), len(c.yo)
	nb0, no0 := len(c.yb), len(c.yo)
	usePrior := prior.DF >= opt.MinPriorDF && prior.Var > 0
	positive := len(c.yb) == len(c.base) && len(c.yo) == len(c.other)
	conflict := ""
	if nu := len(c.yb) + len(c.yo) - 2; usePrior && positive && nu >= 2 {
		usePrior, conflict = c.checkPrior()
	}
	c.chooseBasis(usePrior, positive, conflict)
	// A throughput of 0 is a run that completed no operation: a stall of
	// the machine, not a rate, which no log scale holds; Welch's test sets
	// it aside when its side keeps enough runs.
	stallsOnly := !positive && dir == HigherIsBetter && !slices.ContainsFunc(append(runValues(c.base), runValues(c.other)...),
		func(x float64) bool { return x != 0 && !(x > 0 && !math.IsInf(x, 0)) })
	if c.ev.Basis == BasisRepeats && (positive || stallsOnly) && !opt.Paired && len(c.yb) >= MinWelchRepeats && len(c.yo) >= MinWelchRepeats {
		if v, ok := c.welch(stallsOnly, conflict); ok {
			return v, c.ev
		}
	}
	if c.ev.Basis == BasisRepeats {
		v := Compare(runValues(c.base), runValues(c.other), dir, copt)
		withhold(&v, &c.ev, copt)
		v.Evidence = Evidence(c.ev.String())
		return v, c.ev
	}
	return c.tTest(nb0, no0), c.ev
}

// noiseCase is one CompareNoise call as it sets runs aside and picks its
// test: each side's runs left, their log values and within-run variances,
// and the evidence so far.
type noiseCase struct {
	base, other    []Run
	yb, yo, wb, wo []float64
	// orig maps each side's runs left after the slow host's to their
	// indexes as given.
	orig  [2][]int
	dir   Direction
	prior NoisePrior
	opt   NoiseOptions
	copt  CompareOptions
	warns []string
	ev    NoiseEvidence
}

// setAsideSlowHost sets aside, from a side that keeps others, the runs on
// a slow host worse than the mean of its runs on a normal host (and
// disturbed runs worse than its clean ones).
func (c *noiseCase) setAsideSlowHost() {
	ev := &c.ev
	for side, rs := range [2]*[]Run{&c.base, &c.other} {
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
			if c.dir == LowerIsBetter {
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
			c.orig[side] = append(c.orig[side], i)
		}
		*rs = keep
		// Fewer than 3 runs left: no check can see whether the slow host
		// also slowed them.
		ev.SlowSide[side] = hostSlow && len(keep) < 3
	}
}

// checkPrior checks that the repeats vary as the prior says; when they do
// not, it sets aside the disturbed runs that explain it, or returns false
// and why the prior cannot be used.
func (c *noiseCase) checkPrior() (usePrior bool, conflict string) {
	p, own := priorConflict(c.yb, c.yo, c.prior)
	if p >= PriorConflictP {
		return true, ""
	}
	drop, ok := disturbedRuns(c.yb, c.yo, c.prior)
	if !ok {
		return false, fmt.Sprintf("the repeats vary far more than the host's noise history (s %.1f%% against %.1f%%, F-test p=%.2g), "+
			"more than one disturbed run explains: a noisy period, or a machine unlike its history", 100*math.Sqrt(own), 100*math.Sqrt(c.prior.Var), p)
	}
	sides := [2]*[]Run{&c.base, &c.other}
	ys := [2]*[]float64{&c.yb, &c.yo}
	ws := [2]*[]float64{&c.wb, &c.wo}
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
	c.ev.SetAside = append(c.ev.SetAside, notes...)
	for side, i := range drop {
		if i >= 0 {
			c.ev.SetAsideIndex[side] = c.orig[side][i]
			c.ev.Left[side] = append(c.ev.Left[side], c.orig[side][i])
		}
	}
	c.ev.NBase, c.ev.NOther = len(c.yb), len(c.yo)
	return true, ""
}

// chooseBasis picks the evidence the verdict rests on, and says why
// when it is not the prior.
func (c *noiseCase) chooseBasis(usePrior, positive bool, conflict string) {
	ev, yb, yo := &c.ev, c.yb, c.yo
	ev.Within = 0
	for _, w := range append(append([]float64(nil), c.wb...), c.wo...) {
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
		ev.Why = cmp.Or(conflict, priorTooShort(c.prior, c.opt.MinPriorDF))
	case len(yb) >= 2 && len(yo) >= 2 && conflict != "":
		ev.Basis = BasisRepeatsOwn
		ev.Why = conflict
	case c.opt.Paired && len(yo) >= 3:
		// Pairs measured in the same window: their ratios' own variance,
		// n-1 degrees of freedom, is a paired t-test (history or not).
		ev.Basis = BasisRepeatsOwn
		ev.Why = priorTooShort(c.prior, c.opt.MinPriorDF)
	default:
		ev.Why = cmp.Or(conflict, priorTooShort(c.prior, c.opt.MinPriorDF))
		if !allWithin {
			ev.Why += fmt.Sprintf("; %d of %d runs have a series long enough for batch means", ev.Within, len(yb)+len(yo))
		}
	}
}

// welch judges the repeats alone by Welch's t-test on log values, after
// the outlier check (welchGuarded); false, with the evidence's Guard set,
// when that check sends the cell to the ranks.
func (c *noiseCase) welch(stallsOnly bool, conflict string) (Verdict, bool) {
	ev := &c.ev
	g := welchGuarded(c.yb, c.yo, c.dir, c.copt)
	ev.Guard = g.guard
	if g.guard != "" {
		return Verdict{}, false
	}
	ev.Basis = BasisRepeatsWelch
	if stallsOnly {
		ev.Why = cmp.Or(conflict, priorTooShort(c.prior, c.opt.MinPriorDF))
	}
	sides := [2]*[]Run{&c.base, &c.other}
	for side, rs := range sides {
		var keep []Run
		total := len(*rs) + len(ev.Left[side])
		y := 0 // index among the side's positive runs, as welchGuarded saw them
		for i, r := range *rs {
			switch {
			case !(r.Value > 0):
				ev.Outliers = append(ev.Outliers, fmt.Sprintf("%s run %d of %d completed no operation (a stall), set aside",
					[2]string{"base", "other"}[side], c.orig[side][i]+1, total))
				ev.Left[side] = append(ev.Left[side], c.orig[side][i])
				continue
			case y == g.drop[side]:
				ev.Left[side] = append(ev.Left[side], c.orig[side][i])
			default:
				keep = append(keep, r)
			}
			y++
		}
		*rs = keep
	}
	ev.Outliers = append(ev.Outliers, g.notes...)
	c.yb, _ = logRuns(c.base)
	c.yo, _ = logRuns(c.other)
	yb, yo := c.yb, c.yo
	ev.NBase, ev.NOther = len(yb), len(yo)
	w := WelchTest(yb, yo)
	ev.DF = int(math.Round(w.DF))
	v := Verdict{NBase: len(yb), NOther: len(yo), MedianBase: medianSorted(sortedCopy(runValues(c.base))),
		MedianOther: medianSorted(sortedCopy(runValues(c.other))), Ratio: math.Exp(w.D), Direction: c.dir, P: w.P}
	v.RatioLo, v.RatioHi = w.Interval(c.copt.Confidence)
	v.PAdjusted = v.P
	withhold(&v, ev, c.copt)
	v.Evidence = Evidence(ev.String())
	v.Warnings = c.warns
	return v, true
}

// tTest is the t-test on log values with the chosen basis's variance: the
// prior pooled with the repeats, or the repeats' own; nb0 and no0 are the
// sides' runs before the prior's check set any aside.
func (c *noiseCase) tTest(nb0, no0 int) Verdict {
	ev, yb, yo, prior := &c.ev, c.yb, c.yo, c.prior
	mb, mo := mean(yb), mean(yo)
	ss := sumSq(yb, mb) + sumSq(yo, mo)
	nu := len(yb) + len(yo) - 2
	if c.opt.Paired {
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
	se2 := sideVar(c.wb, s2) + sideVar(c.wo, s2)
	d := mo - mb
	se := math.Sqrt(se2)
	v := Verdict{NBase: len(yb), NOther: len(yo), MedianBase: medianSorted(sortedCopy(runValues(c.base))),
		MedianOther: medianSorted(sortedCopy(runValues(c.other))), Ratio: math.Exp(d), Direction: c.dir,
		Evidence: Evidence(ev.String())}
	if se == 0 {
		v.P = 1
		if d != 0 {
			v.P = 0
		}
		v.RatioLo, v.RatioHi = v.Ratio, v.Ratio
	} else {
		v.P = studentTwoSided(d/se, float64(df))
		q := studentQuantile((1+c.copt.Confidence)/2, float64(df))
		v.RatioLo, v.RatioHi = math.Exp(d-q*se), math.Exp(d+q*se)
	}
	if ev.Basis == BasisPrior {
		ev.PDisturbed = disturbanceP(d, se, nb0, no0, prior)
		v.P = min(1, v.P+ev.PDisturbed)
		v.Evidence = Evidence(ev.String())
	}
	v.PAdjusted = v.P
	withhold(&v, ev, c.copt)
	v.Evidence = Evidence(ev.String())
	v.Warnings = c.warns
	return v
}

// runValues are the runs' values.
func runValues(rs []Run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
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
