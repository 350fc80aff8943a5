package report

import (
	"benchlab/internal/report/section"
	"fmt"
	"math"
	"slices"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/store"
)

// VerdictOptions are the significance settings of the relative tables.
type VerdictOptions = analysis.CompareOptions

// Options control what Build puts in a report.
type Options struct {
	Verdict VerdictOptions
	// Sequence analyses the targets as a release sequence even when the spec
	// does not say `sequence = true`.
	Sequence bool
}

// Comparison is the verdict of one target against the base in one row.
type Comparison struct {
	Target  string
	Test    string
	Threads int
	Verdict analysis.Verdict
	// Metric is the row's headline: what Base and Other measure (its
	// quantity, throughput or latency) and which way is better.
	Metric metric.Metric
	// Base and Other summarise each side's headline over the repeats the
	// verdict used (without a run set aside as disturbed): median with a
	// 95% confidence interval from order statistics.
	Base, Other analysis.Summary
	// Noise says in detail what the verdict rests on (Verdict.Evidence is
	// its text): repeats only, repeats and within-run variance, or the
	// host's noise prior.
	Noise analysis.NoiseEvidence
}

// RepeatsRun is each side's repeats as run, the runs the verdict left out
// (on a slow host, or disturbed) included: what the experiment's power
// rests on, where Verdict.NBase and NOther count the runs judged.
func (c Comparison) RepeatsRun() (base, other int) {
	return c.Verdict.NBase + len(c.Noise.Left[0]), c.Verdict.NOther + len(c.Noise.Left[1])
}

// Compare judges every target against the base in every row, on the
// headline metric of each repeat (throughput, or connect's latency), with all the evidence the data and
// the host's noise model hold (analysis.CompareNoise), then decides every
// cell again after opt's correction (default Benjamini-Hochberg) over all
// the cells, the family a reader of compare scans at once.
func Compare(d *Data, opt VerdictOptions) []Comparison {
	s, keys, _ := d.samples()
	targets := d.targets()
	tput := func(r store.Result) float64 { return r.Throughput() }
	var out []Comparison
	for _, k := range keys {
		// Runs that completed no operation are left out; a cell with
		// none left on a side is not judged (NotJudged lists it).
		baseRs := withoutStalls(s[targets[0]][k])
		for _, t := range targets[1:] {
			otherRs := withoutStalls(s[t][k])
			if len(baseRs) == 0 || len(otherRs) == 0 {
				continue
			}
			v, ev := d.judge(baseRs, otherRs, targets[0], t, k, opt)
			// The medians are of the runs the verdict used: a run set
			// aside as disturbed is left out of its side's too.
			out = append(out, Comparison{Target: t, Test: k.test, Threads: k.threads, Verdict: v, Noise: ev, Metric: s.metricOf(k),
				Base:  analysis.Summarize(ev.Kept(0, section.Values(baseRs, tput)), analysis.DefaultConfidence),
				Other: analysis.Summarize(ev.Kept(1, section.Values(otherRs, tput)), analysis.DefaultConfidence)})
		}
	}
	vs := analysis.CorrectVerdicts(Verdicts(out), opt)
	for i := range out {
		out[i].Verdict = vs[i]
	}
	return out
}

// Verdicts returns the verdicts of cs, in order.
func Verdicts(cs []Comparison) []analysis.Verdict {
	vs := make([]analysis.Verdict, len(cs))
	for i, c := range cs {
		vs[i] = c.Verdict
	}
	return vs
}

// PowerOf is the power of the comparisons cs under opt's alpha and
// correction (default Benjamini-Hochberg at 0.01), with the smallest repeat
// counts of any cell.
func PowerOf(cs []Comparison, opt VerdictOptions) analysis.Power {
	alpha, corr := opt.Alpha, opt.Correction
	if alpha == 0 {
		alpha = analysis.DefaultAlpha
	}
	if corr == "" {
		corr = analysis.BH
	}
	nb, no := 0, 0
	for i, c := range cs {
		b, o := c.RepeatsRun()
		if i == 0 || b < nb {
			nb = b
		}
		if i == 0 || o < no {
			no = o
		}
	}
	return analysis.PowerOf(len(cs), nb, no, alpha, corr)
}

// verdictMarks are the signs shown with a ratio that carries a verdict, so
// that a reader needs no colour to see it.
var verdictMarks = map[analysis.Outcome]string{
	analysis.Slower: "-", analysis.Faster: "+", analysis.Same: "=", analysis.Unknown: "?",
}

// relativeCell compares the repeats of a target with those of the base. With
// at least two repeats on each side it carries the Mann-Whitney verdict and is
// coloured only when the verdict is slower or faster; with fewer it falls back
// to the plain 0.95/1.05 thresholds. The verdict is the cell's alone until
// correctTable decides it again over the whole table.
func relativeCell(base, other []float64, dir analysis.Direction, opt VerdictOptions) Cell {
	if len(base) == 0 || len(other) == 0 {
		return Cell{Missing: true}
	}
	if len(base) < 2 || len(other) < 2 {
		return section.RatioCell(analysis.Ratio(analysis.Median(other), analysis.Median(base)), dir)
	}
	return verdictCell(analysis.Compare(base, other, dir, opt))
}

// verdictCell shows a verdict as a ratio cell with its mark and figures.
func verdictCell(v analysis.Verdict) Cell {
	c := Cell{Kind: Ratio, Value: v.Ratio, Verdict: v.Outcome.String(), Mark: verdictMarks[v.Outcome], Judged: &v}
	switch v.Outcome {
	case analysis.Slower:
		c.Band = analysis.Worse
	case analysis.Faster:
		c.Band = analysis.Better
	}
	c.Detail = fmt.Sprintf("%s: ratio %.3f, 95%% CI %s, p=%.2g, n=%d/%d, evidence: %s", v.Outcome, v.Ratio,
		ciText(v.RatioLo, v.RatioHi), v.P, v.NBase, v.NOther, v.Evidence)
	return c
}

// correctTable applies opt's correction (default Benjamini-Hochberg) over
// the verdict cells of one table, the family a reader scans at once, and
// redraws them. It returns the family's power, or false when the table has
// no verdicts.
func correctTable(t *Table, opt VerdictOptions) (analysis.Power, bool) {
	var vs []analysis.Verdict
	var at []*Cell
	for i := range t.Rows {
		for j := range t.Rows[i].Cells {
			if c := &t.Rows[i].Cells[j]; c.Judged != nil {
				vs = append(vs, *c.Judged)
				at = append(at, c)
			}
		}
	}
	if len(vs) == 0 {
		return analysis.Power{}, false
	}
	vs = analysis.CorrectVerdicts(vs, opt)
	nb, no := vs[0].NBase, vs[0].NOther
	for i, v := range vs {
		redraw(at[i], v)
		nb, no = min(nb, v.NBase), min(no, v.NOther)
	}
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = analysis.DefaultAlpha
	}
	return analysis.PowerOf(len(vs), nb, no, alpha, vs[0].Correction), true
}

// redraw updates a verdict cell for its verdict after correction: mark,
// colour and outcome, and the detail says the adjusted p.
func redraw(c *Cell, v analysis.Verdict) {
	old := c.Verdict
	c.Judged = &v
	c.Verdict, c.Mark, c.Band = v.Outcome.String(), verdictMarks[v.Outcome], analysis.Neutral
	switch v.Outcome {
	case analysis.Slower:
		c.Band = analysis.Worse
	case analysis.Faster:
		c.Band = analysis.Better
	}
	if rest, ok := strings.CutPrefix(c.Detail, old+": "); ok {
		c.Detail = c.Verdict + ": " + rest
	}
	if v.Correction != "" && v.Correction != analysis.NoCorrection {
		c.Detail += fmt.Sprintf("; %s-adjusted p=%.2g over the table", v.Correction, v.PAdjusted)
	}
}

// correctTables runs correctTable over every table of r and says in a note,
// per table with verdicts, which correction its marks went through and
// whether its repeats could call a change at all.
func correctTables(r *Report, opt VerdictOptions) {
	for i := range r.Tables {
		pw, ok := correctTable(&r.Tables[i], opt)
		if !ok {
			continue
		}
		title, _, _ := strings.Cut(r.Tables[i].Title, ":")
		r.Notes = append(r.Notes, fmt.Sprintf("%s: verdict marks after %s over the table's %d cells; %s",
			title, pw.Correction.Long(), pw.Cells, pw))
	}
}

func ciText(lo, hi float64) string {
	f := func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "?"
		}
		return fmt.Sprintf("%.3f", x)
	}
	return f(lo) + "-" + f(hi)
}

// verdictNotes explain how the relative table was judged.
func verdictNotes(minRepeats, maxRepeats int, opt VerdictOptions) []string {
	if maxRepeats < 2 {
		return nil
	}
	alpha, eff := opt.Alpha, opt.MinEffect
	if alpha == 0 {
		alpha = analysis.DefaultAlpha
	}
	if eff == 0 {
		eff = analysis.DefaultMinEffect
	}
	return []string{fmt.Sprintf("verdicts over %d-%d repeats per cell, alpha %g, minimum effect %g%%: throughput by the "+
		"evidence named below (without history, Welch's t-test on log throughput from 3 repeats a side), other metrics by a "+
		"two-sided Mann-Whitney U; - slower and + faster (significant after the table's correction and beyond the minimum "+
		"effect, coloured), = same (ratio CI within +-%g%%), ? unknown: run more repeats", minRepeats, maxRepeats, alpha,
		eff*100, eff*100)}
}

// overrunNote flags a measured step that completed no operation, or whose
// measured part's seconds were sampled over much longer than it was
// planned for (sampled): benchlab's sampler, or every worker, was held up,
// by a machine that did not schedule benchlab or by operations that held
// the step's end, so its figures describe a stall, not the engine's rate.
func overrunNote(r store.Result, run store.Run, sampled float64) string {
	where := fmt.Sprintf("%s @%d on %s (repeat %d)", r.Test, r.Threads, run.Target, run.Repeat)
	late := ""
	if r.Seconds > 0 && sampled > r.Seconds+0.5 && sampled > 1.2*r.Seconds {
		late = fmt.Sprintf("its measured part of %.3g s was sampled over %.3g s", r.Seconds, sampled)
	}
	switch {
	case r.Stalled() && late != "":
		return "stalled: " + where + " completed no operation; " + late + " (operations under way held its end, or the machine did not schedule benchlab)"
	case r.Stalled():
		return "stalled: " + where + " completed no operation in its measured part"
	case late != "" && r.Latency.Max.Seconds() >= (sampled-r.Seconds)/2:
		// An operation as long as the overrun was under way: a stall of
		// the target held the step's end, not benchlab's sampler.
		return fmt.Sprintf("late: %s: %s; an operation took %.3g s (its max latency): a stall of the target held the step's end; "+
			"its rate is of that span", where, late, r.Latency.Max.Seconds())
	case late != "":
		return "late: " + where + ": " + late + " (the machine did not schedule benchlab's sampler, or operations under way held the step's end); its rate is of that span"
	}
	return ""
}

// sequenceTable locates changes across targets in release order (the spec's
// `sequence = true`): for each row, the first significant step between
// adjacent targets over all their repeats, and E-Divisive change points over
// the per-target medians.
func sequenceTable(d *Data, keys []cellKey, s samples, label func(cellKey) string, groups map[cellKey]string, opt Options) *Table {
	sp := d.StoredSpec()
	ordered := opt.Sequence || (sp != nil && sp.Sequence)
	if !ordered || len(d.Experiment.Targets) < 3 {
		return nil
	}
	order := d.Experiment.Targets
	t := &Table{
		Title: "Changes across the sequence (targets in release order)",
		Legend: "first significant step between adjacent targets, Holm-Bonferroni over the row's steps, each step judged " +
			"with the evidence at hand (repeats: Mann-Whitney over the repeats; prior: t-test on log throughput with the host's noise " +
			"history; rep+within: t-test with within-run variance; 1run: a single run per target); change point: E-Divisive " +
			"means over per-target medians, t-test p < 0.001",
		Columns: []string{"first significant step", "change points"},
	}
	eng := d.engineOf()
	for _, k := range keys {
		var groupsR [][]analysis.Run
		var priors []analysis.NoisePrior
		var medians []float64
		var all [][]store.Result
		for _, name := range order {
			// A stalled run is no point of the sequence (StallNotes name it).
			all = append(all, withoutStalls(s[name][k]))
		}
		speed := noise.SpeedMedian(all...)
		for i, name := range order {
			groupsR = append(groupsR, d.runValues(all[i], speed))
			medians = append(medians, analysis.Median(section.Values(all[i], func(r store.Result) float64 { return r.Throughput() })))
			if i > 0 {
				priors = append(priors, d.Noise.Prior([]string{eng[order[i-1]], eng[name]}, k.test, k.threads))
			}
		}
		st := analysis.FirstSignificantStepNoise(groupsR, s.metricOf(k).Direction, priors,
			analysis.NoiseOptions{CompareOptions: opt.Verdict})
		step := "none (" + stepEvidence(st) + ")"
		switch {
		case st.Found:
			v := st.Verdict
			step = fmt.Sprintf("%s -> %s: %s x%.2f (p=%.2g, Holm %.2g; %s)", order[st.Index-1], order[st.Index], v.Outcome,
				v.Ratio, v.P, v.PAdjusted, st.Evidence[st.Index-1].Short())
		case !st.Power.Callable && !st.Beyond():
			step = fmt.Sprintf("none possible: smallest p %.2g, needs p < %.2g; %d repeats per target needed, or a noise history",
				st.Power.Floor, st.Power.Threshold, st.Power.RepeatsNeeded)
		}
		var cps []string
		for _, cp := range analysis.ChangePoints(medians, analysis.ChangeOptions{}) {
			cps = append(cps, fmt.Sprintf("at %s: %+.1f%% (%.0f -> %.0f, p=%.2g)", order[cp.Index],
				cp.ForwardChangePercent, cp.MeanBefore, cp.MeanAfter, cp.P))
		}
		cp := "none"
		if len(cps) > 0 {
			cp = strings.Join(cps, "; ")
		}
		t.Rows = append(t.Rows, Row{Group: groups[k], Label: label(k), Cells: []Cell{section.TextCell(step), section.TextCell(cp)}})
	}
	return t
}

// stepEvidence says what the steps of a sequence rest on, as counts of
// NoiseEvidence.Short: "3 prior" or "2 repeats, 1 prior".
func stepEvidence(st analysis.Step) string {
	n := map[string]int{}
	var kinds []string
	for _, e := range st.Evidence {
		k := e.Short()
		if n[k] == 0 {
			kinds = append(kinds, k)
		}
		n[k]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d steps on %s", n[k], k))
	}
	if len(parts) == 0 {
		return "no steps"
	}
	return strings.Join(parts, ", ")
}

// ComparisonTable lists every comparison with the figures behind its verdict:
// each side's median and its 95% interval, the ratio and its interval, the
// p-value before and after the family's correction, the repeats on each
// side and the evidence the verdict rests on.
func ComparisonTable(cs []Comparison, base string) Table {
	return ComparisonTableWith(cs, base, VerdictOptions{})
}

// ComparisonTableWith is ComparisonTable for verdicts drawn with opt, whose
// alpha and minimum effect say which unknown verdicts need a reason
// (UnknownWhy) next to them.
func ComparisonTableWith(cs []Comparison, base string, opt VerdictOptions) Table {
	corr := analysis.BH
	if len(cs) > 0 && cs[0].Verdict.Correction != "" {
		corr = cs[0].Verdict.Correction
	}
	q := comparedQuantities(cs)
	logOf := "log values"
	if len(q) == 1 {
		logOf = "log " + q[0]
	}
	t := Table{
		Title: "Verdicts cell by cell (" + strings.Join(q, " and ") + ")",
		Legend: "median [95% CI from order statistics] over the repeats the verdict used (not a run set aside); ratio with its 95% CI and two-sided p: " +
			"of medians and Mann-Whitney for 'repeats only', of geometric means and a t-test on " + logOf + " otherwise " +
			"(Welch's for repeats without history; run-to-run variance from the repeats, pooled with the host's noise history for 'noise prior', each run " +
			"counted with at least its within-run variance from batch means); p is before correction, the verdict is decided by p " +
			"adjusted with " + corr.Long() + " over all cells (compare --format json gives it); n = repeats of base/target",
		Columns: []string{"target", base + " median", "target median", "ratio [95% CI]", "p", "n", "verdict", "evidence"},
	}
	for _, c := range cs {
		label := c.Test
		if c.Threads > 0 {
			label = fmt.Sprintf("%s @%d", c.Test, c.Threads)
		}
		v := c.Verdict
		t.Rows = append(t.Rows, Row{Label: label, Cells: []Cell{
			section.TextCell(c.Target), section.TextCell(summaryText(c.Base)), section.TextCell(summaryText(c.Other)),
			section.TextCell(fmt.Sprintf("%.3f [%s]", v.Ratio, ciText(v.RatioLo, v.RatioHi))),
			section.TextCell(fmt.Sprintf("%.2g", v.P)), section.TextCell(fmt.Sprintf("%d/%d", v.NBase, v.NOther)),
			section.TextCell(verdictText(c, opt)), section.TextCell(evidenceBrief(c)),
		}})
	}
	return t
}

// comparedQuantities lists, once each and in order, what the comparisons'
// metrics measure ("throughput", "latency"); queries per second's
// quantity when there are none.
func comparedQuantities(cs []Comparison) []string {
	var out []string
	for _, c := range cs {
		if q := c.Metric.QuantityOf(); !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		out = append(out, metric.QPS.QuantityOf())
	}
	return out
}

// evidenceBrief is a comparison's evidence for the table's column: the
// basis in a few words, the runs set aside counted (the notes name them)
// and no reasons for a fallback (the notes give them), so that the column
// stays narrow.
func evidenceBrief(c Comparison) string {
	if c.Noise.NBase+c.Noise.NOther == 0 {
		return string(c.Verdict.Evidence)
	}
	return c.Noise.Brief()
}

func summaryText(s analysis.Summary) string {
	f := func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "?"
		}
		return FormatValue(x)
	}
	return fmt.Sprintf("%s [%s, %s]", f(s.Median), f(s.Lo), f(s.Hi))
}

// UnknownWhy says why a comparison whose ratio interval lies wholly beyond
// the minimum effect (the interval excludes 1 by more than it) is still
// unknown, so that the interval and the verdict never seem to disagree
// without a reason: short for a table's verdict column, long for a line
// under it. Both are "" for any other comparison.
func UnknownWhy(c Comparison, opt VerdictOptions) (short, long string) {
	v := c.Verdict
	if v.Outcome != analysis.Unknown {
		return "", ""
	}
	eff, alpha := opt.MinEffect, opt.Alpha
	if eff == 0 {
		eff = analysis.DefaultMinEffect
	}
	if alpha == 0 {
		alpha = analysis.DefaultAlpha
	}
	if !(v.RatioLo > 1+eff || v.RatioHi < 1-eff) {
		return "", ""
	}
	corr := v.Correction
	if corr == "" {
		corr = analysis.NoCorrection
	}
	p := fmt.Sprintf("p %.2g", v.P)
	if corr != analysis.NoCorrection {
		p += fmt.Sprintf(", %s-adjusted %.2g", corr, v.PAdjusted)
	}
	switch {
	case c.Noise.Withheld:
		return "slow host", "the side that came out worse ran partly on a slow host, which explains the change (" +
			evidenceBrief(c) + ")"
	case c.Noise.Basis == analysis.BasisRepeats:
		why := "no t-test was possible"
		if c.Noise.Guard != "" {
			why = "Welch's t-test was not used: " + c.Noise.Guard
		}
		return "ranks' floor", fmt.Sprintf("the ranks (Mann-Whitney) judged it because %s; %d against %d repeats reach "+
			"p %.2g at best, and %s is not below alpha %g", why, v.NBase, v.NOther, analysis.MinPValue(v.NBase, v.NOther), p, alpha)
	}
	return "p not below alpha", fmt.Sprintf("%s is not below alpha %g: the interval is a 95%% one, the verdict's "+
		"level is stricter", p, alpha)
}

// verdictText is a comparison's verdict for the table's column, with
// UnknownWhy's short reason when its interval seems to say more.
func verdictText(c Comparison, opt VerdictOptions) string {
	if short, _ := UnknownWhy(c, opt); short != "" {
		return c.Verdict.Outcome.String() + " (" + short + ")"
	}
	return c.Verdict.Outcome.String()
}
