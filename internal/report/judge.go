package report

import (
	"benchlab/internal/report/section"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/meter"
	"benchlab/internal/noise"
	"benchlab/internal/store"
)

// runValues turns the repeats of a cell into what analysis.CompareNoise
// judges: throughput and within-run variance from batch means, and
// whether the run was disturbed: the canaries bracketing it found the host
// slow (noise.Model.HostSlow), and what was measured during it says the
// machine was busy or its CPUs slow (noise.Disturbed, against
// speedMedian, the CPU speed median of the runs compared).
func (d *Data) runValues(rs []store.Result, speedMedian float64) []analysis.Run {
	var runs map[int64]store.Run
	if d.Noise != nil {
		runs = make(map[int64]store.Run, len(d.Runs))
		for _, r := range d.Runs {
			runs[r.ID] = r
		}
	}
	out := make([]analysis.Run, len(rs))
	for i, r := range rs {
		out[i] = noise.RunOf(r)
		if run, ok := runs[r.RunID]; ok {
			out[i].HostSlow = d.Noise.HostSlow(run)
		}
		out[i].Disturbed = noise.Disturbed(r, speedMedian)
	}
	return out
}

// engineOf maps each target to its engine.
func (d *Data) engineOf() map[string]string {
	m := map[string]string{}
	for _, r := range d.Runs {
		m[r.Target] = r.Engine
	}
	return m
}

// judge compares a target's repeats of a cell with the base's using every
// evidence at hand: the host's noise prior when the store has enough
// history, the runs' within-run variance, the repeats.
func (d *Data) judge(base, other []store.Result, baseT, otherT string, k cellKey, opt VerdictOptions) (analysis.Verdict, analysis.NoiseEvidence) {
	eng := d.engineOf()
	prior := d.Noise.Prior([]string{eng[baseT], eng[otherT]}, k.test, k.threads)
	if b, o, ok := d.pairedRuns(base, other); ok {
		v, ev := analysis.CompareNoise(b, o, directionOf(base), prior, analysis.NoiseOptions{CompareOptions: opt, Paired: true})
		// The pairs' values are ratios scaled to the base's mean: the
		// medians shown are the measured ones.
		v.MedianBase, v.MedianOther = medianThroughput(base), medianThroughput(other)
		return v, ev
	}
	speed := noise.SpeedMedian(base, other)
	return analysis.CompareNoise(d.runValues(base, speed), d.runValues(other, speed), directionOf(base), prior,
		analysis.NoiseOptions{CompareOptions: opt})
}

// pairedRuns is what analysis.CompareNoise judges for the repeats of an
// interleaved experiment (spec workload.interleave), whose targets took
// turns through each step so that repeat r of the base and of the other
// target were measured in the same window: the pairs' ratios. The base's
// runs are all set to the geometric mean of its values, and each of the
// other's is divided by its partner's value and multiplied by that mean, so
// the variation the repeats show is the pairs' alone, what a slow spell of
// the machine added to both cancelling out. The noise model learns the
// same pairs' variance, halved (noise.Entries), so that the verdict's
// variance of the difference, prior over each side's runs, is the pairs'
// variance over their number. Neither canary nor speed flags apply: a slow
// spell fell on both. ok is false unless every result is interleaved; a
// repeat one side lacks is left out.
func (d *Data) pairedRuns(base, other []store.Result) (b, o []analysis.Run, ok bool) {
	type window struct {
		exp    int64
		repeat int
	}
	runs := make(map[int64]store.Run, len(d.Runs))
	for _, r := range d.Runs {
		runs[r.ID] = r
	}
	at := func(rs []store.Result) (map[window]float64, bool) {
		m := map[window]float64{}
		for _, r := range rs {
			run, known := runs[r.RunID]
			if !known || r.Facts[store.FactInterleave] <= 0 {
				return nil, false
			}
			if v := r.Throughput(); v > 0 && !math.IsInf(v, 0) {
				m[window{run.ExperimentID, run.Repeat}] = v
			}
		}
		return m, len(rs) > 0
	}
	bv, okb := at(base)
	ov, oko := at(other)
	if !okb || !oko {
		return nil, nil, false
	}
	var pairs [][2]float64
	logMean := 0.0
	for w, v := range bv {
		if ovv, both := ov[w]; both {
			pairs = append(pairs, [2]float64{v, ovv})
			logMean += math.Log(v)
		}
	}
	if len(pairs) == 0 {
		return nil, nil, false
	}
	g := math.Exp(logMean / float64(len(pairs)))
	for _, p := range pairs {
		b = append(b, analysis.Run{Value: g, RelVar: math.NaN()})
		o = append(o, analysis.Run{Value: p[1] / p[0] * g, RelVar: math.NaN()})
	}
	return b, o, true
}

// NoiseJudge is the analysis.Judge that decides the throughput cells of
// d with the host's noise model and the runs' within-run variance
// (analysis.CompareNoise), for analysis.CompareFamily; its cells are keyed
// "target/test@threads".
func (d *Data) NoiseJudge() analysis.NoiseJudge {
	s, keys, _ := d.samples()
	targets := d.targets()
	eng := d.engineOf()
	j := analysis.NoiseJudge{Cells: map[string]analysis.NoiseCell{}}
	for _, k := range keys {
		for _, t := range targets[1:] {
			base, other := withoutStalls(s[targets[0]][k]), withoutStalls(s[t][k])
			prior := d.Noise.Prior([]string{eng[targets[0]], eng[t]}, k.test, k.threads)
			key := fmt.Sprintf("%s/%s@%d", t, k.test, k.threads)
			if b, o, ok := d.pairedRuns(base, other); ok {
				j.Cells[key] = analysis.NoiseCell{Base: b, Other: o, Prior: prior, Paired: true}
				continue
			}
			speed := noise.SpeedMedian(base, other)
			j.Cells[key] = analysis.NoiseCell{
				Base: d.runValues(base, speed), Other: d.runValues(other, speed), Prior: prior,
			}
		}
	}
	return j
}

// throughputCell is the relative table's cell for a target against the
// base: the verdict of judge, marked with its evidence; with a single run
// on a side and no usable prior, the plain 0.95/1.05 bands as before.
func (d *Data) throughputCell(base, other []store.Result, baseT, otherT string, k cellKey, opt VerdictOptions) Cell {
	if len(base) == 0 || len(other) == 0 {
		return Cell{Missing: true}
	}
	stalled, runs, unjudged := stallSides(base, other)
	if unjudged {
		return stalledCell(Unjudged{Target: otherT, Test: k.test, Threads: k.threads, Stalled: stalled, Runs: runs})
	}
	base, other = withoutStalls(base), withoutStalls(other)
	without := ""
	if n := stalled[0] + stalled[1]; n > 0 {
		without = fmt.Sprintf("; judged without %d stalled run(s)", n)
	}
	v, ev := d.judge(base, other, baseT, otherT, k, opt)
	if ev.Basis == analysis.BasisRepeats && (len(base) < 2 || len(other) < 2) {
		tput := func(r store.Result) float64 { return r.Throughput() }
		c := relativeCell(section.Values(base, tput), section.Values(other, tput), directionOf(base), opt)
		c.Detail = strings.TrimPrefix(c.Detail+without, "; ")
		return c
	}
	c := Cell{Kind: Ratio, Value: v.Ratio, Verdict: v.Outcome.String(), Mark: verdictMarks[v.Outcome], Judged: &v}
	switch v.Outcome {
	case analysis.Slower:
		c.Band = analysis.Worse
	case analysis.Faster:
		c.Band = analysis.Better
	}
	c.Detail = fmt.Sprintf("%s: ratio %.3f, 95%% CI %s, p=%.2g, n=%d/%d; evidence: %s", v.Outcome, v.Ratio,
		ciText(v.RatioLo, v.RatioHi), v.P, v.NBase, v.NOther, ev)
	if ev.Why != "" {
		c.Detail += " (" + ev.Why + ")"
	}
	c.Detail += without
	return c
}

// evidenceNotes say which evidence the comparisons rest on, with the
// reasons for every fallback to repeats only.
func evidenceNotes(cs []Comparison, model *noise.Model) []string {
	if len(cs) == 0 {
		return nil
	}
	byText := map[string]int{}
	why := map[string]int{}
	var setAside []string
	seen := map[string]bool{}
	disturbed, unknown, withheld := 0, 0, 0
	for _, c := range cs {
		if c.Noise.Withheld {
			withheld++
		}
		if c.Noise.PDisturbed > 0 {
			disturbed++
			if c.Verdict.Outcome == analysis.Unknown {
				unknown++
			}
		}
		byText[evidenceKind(c.Noise)]++
		if c.Noise.Basis != analysis.BasisPrior && c.Noise.Why != "" {
			why[c.Noise.Why]++
		}
		for _, run := range c.Noise.SetAside {
			if slices.Contains(c.Noise.HostSlow, run) {
				continue // named once in the canary notes (canaryNotes)
			}
			// The base's run is the same in every target's cell: named once.
			if r, ok := strings.CutPrefix(run, "other "); ok {
				run = c.Target + " " + r
			}
			if s := fmt.Sprintf("%s @%d: %s", c.Test, c.Threads, run); !seen[s] {
				seen[s] = true
				setAside = append(setAside, s)
			}
		}
	}
	var parts []string
	for _, k := range sortedByCount(byText) {
		parts = append(parts, fmt.Sprintf("%d %s", byText[k], k))
	}
	host := "this host"
	switch {
	case model != nil && model.Host != "":
		host = model.Host
	case model != nil:
		// Runs that name no host (imported from another tool's output)
		// have no history to draw on.
		host = "none: the runs name no host"
	}
	out := []string{fmt.Sprintf("evidence of the %d verdicts (noise model of %s): %s", len(cs), host, strings.Join(parts, ", "))}
	for _, w := range sortedByCount(why) {
		out = append(out, fmt.Sprintf("fallback to repeats in %d cells: %s", why[w], w))
	}
	if len(setAside) > 0 {
		out = append(out, "runs set aside as disturbed (without them the cell's repeats agree with the host's noise history): "+
			strings.Join(setAside, "; "))
	}
	if disturbed > 0 {
		out = append(out, fmt.Sprintf("%d verdicts allow for this host's disturbed runs: its history holds runs that a stall "+
			"or a neighbour slowed far more than its usual noise, and a single run cannot show that it was one of them, "+
			"so the chance that such a run explains the difference is added to p (\"host disturbed k of n history runs\" "+
			"in the evidence); %d of them are unknown; 3 or more repeats per target show a disturbed run in their spread",
			disturbed, unknown))
	}
	if withheld > 0 {
		out = append(out, fmt.Sprintf("%d verdicts not called because the side that came out worse had a run on a slow host "+
			"(its memory canaries say so; \"on a slow host\" in the evidence), which explains it", withheld))
	}
	if byText["noise prior, single run per target"] > 0 {
		out = append(out, "single run per target: the verdict rests on the host's noise history alone, "+
			"which assumes today's machine varies as it did before; the canary notes say if it did not")
	}
	return out
}

// evidenceKind groups evidence for the notes.
func evidenceKind(e analysis.NoiseEvidence) string {
	switch e.Basis {
	case analysis.BasisPrior:
		if e.SingleRun() {
			return "noise prior, single run per target"
		}
		if len(e.SetAside) > 0 {
			return "noise prior + repeats, a disturbed run set aside"
		}
		if e.Within > 0 {
			return "noise prior + repeats + within-run"
		}
		return "noise prior + repeats"
	case analysis.BasisRepeatsWithin:
		return "repeats + within-run"
	case analysis.BasisRepeatsOwn:
		return "repeats, t-test on their own variance"
	case analysis.BasisRepeatsWelch:
		return "repeats, Welch t-test on log throughput"
	}
	if e.Guard != "" {
		return "repeats only (Mann-Whitney: an outlier decides the t-test)"
	}
	return "repeats only (Mann-Whitney)"
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// canaryNotes flag the runs whose canary probes found the machine slow
// before them, and the runs whose memory canaries found the host slow at
// either end (noise.Model.HostSlow), which the verdicts set aside.
func canaryNotes(d *Data) []string {
	if d.Noise == nil {
		return nil
	}
	var out, slow []string
	for _, r := range d.Runs {
		if s, slow := d.Noise.Canaries.Check(r); slow {
			out = append(out, s)
		}
		if s := d.Noise.HostSlow(r); s != "" {
			slow = append(slow, fmt.Sprintf("%s repeat %d (%s)", r.Target, r.Repeat, strings.TrimPrefix(s, "host slow during run: ")))
		}
	}
	if len(slow) > 0 {
		m := d.Noise.Canaries.Mem
		out = append(out, fmt.Sprintf("runs on a slow host (a memory canary before or after the run slower than the host's median "+
			"by more than %d robust standard deviations and at least %.0f%%; 32 MiB walk median %.3g loads/s over %d canaries): %s; "+
			"verdicts set these runs aside when they came out worse than their side's other runs, and do not call a side "+
			"with such a run and fewer than 3 runs left the worse one",
			noise.CanarySpreads, 100*noise.CanaryMinSlow, m.Median, m.N, strings.Join(slow, "; ")))
	}
	return out
}

// Disturbance counts the measured results of an experiment and those that
// ran on a busy machine or on slow CPUs (noise.Busy, noise.SlowCPU against
// the median of the cell's runs on every target).
type Disturbance struct {
	Results, Busy, SlowCPU int
	// busy and slow describe each flagged result for the notes.
	busy, slow []string
}

// Disturbances finds the disturbed results of d (Disturbance).
func Disturbances(d *Data) Disturbance {
	s, keys, _ := d.samples()
	targets := d.targets()
	var out Disturbance
	for _, k := range keys {
		var all [][]store.Result
		for _, t := range targets {
			all = append(all, s[t][k])
		}
		median := noise.SpeedMedian(all...)
		for _, t := range targets {
			for _, r := range s[t][k] {
				out.Results++
				repeat := d.repeatOf(r.RunID)
				if b := noise.Busy(r); b != "" {
					out.Busy++
					out.busy = append(out.busy, fmt.Sprintf("%s @%d on %s repeat %d (%s)", k.test, k.threads, t, repeat,
						strings.TrimPrefix(b, "machine busy during run: ")))
				}
				if w := noise.SlowCPU(r, median); w != "" {
					out.SlowCPU++
					out.slow = append(out.slow, fmt.Sprintf("%s @%d on %s repeat %d (%s)", k.test, k.threads, t, repeat,
						strings.TrimPrefix(w, "CPUs slow during run: ")))
				}
			}
		}
	}
	return out
}

// disturbedNotes name the results that ran on a busy machine or on CPUs the
// host slowed (Disturbances), which the verdicts set aside when they came
// out worse than their side's other runs.
func disturbedNotes(d *Data) []string {
	ds := Disturbances(d)
	var out []string
	if len(ds.busy) > 0 {
		out = append(out, fmt.Sprintf("runs on a busy machine (other processes used more than %d%% of all CPU and the step's "+
			"threads waited for a CPU at least %.0f%% of their running time, from /proc/<pid>/task/*/schedstat): %s; verdicts set "+
			"these runs aside when they came out worse than their side's undisturbed runs",
			noise.BusyForeignPct, 100*noise.BusyWaitShare, strings.Join(ds.busy, "; ")))
	}
	if len(ds.slow) > 0 {
		out = append(out, fmt.Sprintf("runs on slow CPUs (the CPU speed probes during the run, a fixed loop timed by its own "+
			"thread's CPU clock on every CPU every %v, more often in steps shorter than %v, unless the experiment's speed_probe says otherwise, averaged below x%.2f of the "+
			"median of the cell's runs): %s; verdicts set these runs aside when they came out worse than their side's undisturbed "+
			"runs", meter.SpeedProbeEvery, meter.SpeedProbeEvery*meter.SpeedProbeMinSamples, noise.SlowCPUFactor,
			strings.Join(ds.slow, "; ")))
	}
	return out
}

// repeatOf is the repeat number of a run (0 when unknown).
func (d *Data) repeatOf(runID int64) int {
	for _, r := range d.Runs {
		if r.ID == runID {
			return r.Repeat
		}
	}
	return 0
}

// medianThroughput is the median of results' throughput.
func medianThroughput(rs []store.Result) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = r.Throughput()
	}
	return analysis.Median(vs)
}
