package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"benchlab/internal/analysis"
)

// summaryChanges is how many changed cells the summary names; the tables
// have the rest.
const summaryChanges = 3

// summaryCue is the least a cost must move, as a ratio either way, to be
// offered as the reason for a change.
const summaryCue = 1.10

// summary is the few lines a busy reader reads first: what changed beyond
// noise, by how much and how sure (the verdict's evidence), and the
// strongest "why" the run measured for the largest change (a cost per
// operation, a perf counter, or the profile's function that grew most);
// with one target, what ran and whether any step was unstable.
func summary(v *view, r *Report) []string {
	if len(v.targets) < 2 {
		return singleSummary(v, r)
	}
	out := summaryOfVerdicts(v)
	if nj := NotJudged(v.d); len(nj) > 0 {
		out = append(out, fmt.Sprintf("%d cell(s) not judged: every run of a side completed no operation (%s in the relative "+
			"table; the notes name them)", len(nj), StalledMark))
	}
	return out
}

// summaryOfVerdicts is the summary's lines on the judged cells.
func summaryOfVerdicts(v *view) []string {
	cs := v.compare()
	var changed []Comparison
	same, unknown := 0, 0
	for _, c := range cs {
		switch c.Verdict.Outcome {
		case analysis.Slower, analysis.Faster:
			changed = append(changed, c)
		case analysis.Same:
			same++
		default:
			unknown++
		}
	}
	if len(cs) == 0 {
		if len(NotJudged(v.d)) > 0 {
			return nil
		}
		return []string{"nothing to compare: no cell has results on the base and another target"}
	}
	if len(changed) == 0 {
		out := []string{fmt.Sprintf("no change beyond noise in %d cells (%d the same, %d not decidable); the tables "+
			"and notes say what each verdict rests on", len(cs), same, unknown)}
		if c, ok := largestUndecided(cs); ok {
			why := "more repeats would decide it"
			if _, long := UnknownWhy(c, v.opt.Verdict); long != "" {
				why = long
			}
			out = append(out, "  largest not decided: "+changeLine(c, v.d.Experiment.Base)+"; "+why)
		}
		return out
	}
	slices.SortStableFunc(changed, func(a, b Comparison) int {
		return cmp.Compare(math.Abs(math.Log(b.Verdict.Ratio)), math.Abs(math.Log(a.Verdict.Ratio)))
	})
	out := []string{fmt.Sprintf("%d of %d cells changed beyond noise (%d slower, %d faster); largest first:", len(changed),
		len(cs), countOutcome(changed, analysis.Slower), countOutcome(changed, analysis.Faster))}
	for _, c := range changed[:min(len(changed), summaryChanges)] {
		out = append(out, "  "+changeLine(c, v.d.Experiment.Base))
	}
	if len(changed) > summaryChanges {
		out = append(out, fmt.Sprintf("  ... and %d more in the relative table", len(changed)-summaryChanges))
	}
	if why := whyCue(v, changed[0]); why != "" {
		out = append(out, "why ("+changed[0].Test+" on "+changed[0].Target+"): "+why)
	} else {
		out = append(out, "why: no cost per operation, counter or profile measured for it moved by 10% or more")
	}
	return out
}

// largestUndecided is the comparison of unknown outcome whose ratio is
// farthest from 1, if any moved by the minimum effect or more.
func largestUndecided(cs []Comparison) (Comparison, bool) {
	var best Comparison
	found := false
	for _, c := range cs {
		if c.Verdict.Outcome != analysis.Unknown || c.Verdict.Ratio <= 0 || math.Abs(math.Log(c.Verdict.Ratio)) < math.Log(1.02) {
			continue
		}
		if !found || math.Abs(math.Log(c.Verdict.Ratio)) > math.Abs(math.Log(best.Verdict.Ratio)) {
			best, found = c, true
		}
	}
	return best, found
}

// countOutcome counts the comparisons of outcome o.
func countOutcome(cs []Comparison, o analysis.Outcome) int {
	n := 0
	for _, c := range cs {
		if c.Verdict.Outcome == o {
			n++
		}
	}
	return n
}

// changeLine is one change: the cell, its ratio to the base with the
// interval, the outcome, and what the verdict rests on.
func changeLine(c Comparison, base string) string {
	ci := ""
	if lo, hi := c.Verdict.RatioLo, c.Verdict.RatioHi; lo > 0 && !math.IsInf(hi, 0) {
		ci = fmt.Sprintf(" (95%% CI %s-%s)", FormatRatio(lo), FormatRatio(hi))
	}
	p := ""
	if !math.IsNaN(c.Verdict.PAdjusted) {
		p = fmt.Sprintf(", p %.2g", c.Verdict.PAdjusted)
	}
	return fmt.Sprintf("%s @%d: %s is %sx %s's %s%s, %s; evidence: %s%s", c.Test, c.Threads, c.Target,
		FormatRatio(c.Verdict.Ratio), base, c.Metric.SymbolOf(), ci, c.Verdict.Outcome, orDefault(string(c.Verdict.Evidence), "repeats"), p)
}

// whyCue is the cost that moved most between the base and the target in
// c's cell: a per-operation efficiency figure or perf counter (x times the
// base's), else the profiled function whose self time per operation grew
// most. Empty when none moved by summaryCue.
func whyCue(v *view, c Comparison) string {
	k := cellKey{c.Test, c.Threads}
	base, other := v.s[v.targets[0]][k], v.s[c.Target][k]
	best, bestRatio := "", 1.0
	for _, m := range append(slices.Clone(effMetrics), counterMetrics(v.keys, v.s)...) {
		if !m.relative {
			continue
		}
		bv, bc := effValues(base, m.value)
		ov, oc := effValues(other, m.value)
		if bc != nil || oc != nil {
			continue
		}
		b, o := analysis.Median(bv), analysis.Median(ov)
		if b <= 0 || o <= 0 {
			continue
		}
		if r := o / b; math.Abs(math.Log(r)) > math.Abs(math.Log(bestRatio)) {
			best, bestRatio = fmt.Sprintf("%s %sx the base's (%s vs %s)", m.column, FormatRatio(r), FormatValue(o), FormatValue(b)), r
		}
	}
	if math.Abs(math.Log(bestRatio)) >= math.Log(summaryCue) {
		return best
	}
	bc, tc := costOf(base), costOf(other)
	if bc == nil || tc == nil {
		return ""
	}
	top := topBy(bc.fn, tc.fn, func(b, x float64) float64 { return x - b })
	if len(top) == 0 {
		return ""
	}
	f := top[0]
	return fmt.Sprintf("profile: %s self time %s us/op vs %s on the base", f, FormatValue(tc.fn[f]), FormatValue(bc.fn[f]))
}

// singleSummary is the summary of one target: what ran and how it went.
func singleSummary(v *view, r *Report) []string {
	out := []string{fmt.Sprintf("one target (%s), %d measured cells: no comparison; the tables give the absolute figures",
		orDefault(v.d.Experiment.Base, "none"), len(v.keys))}
	unstable := 0
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "unstable: ") || strings.HasPrefix(n, "stalled: ") {
			unstable++
		}
	}
	if unstable > 0 {
		out = append(out, fmt.Sprintf("%d step(s) unstable or stalled: see the notes for the seconds and latencies", unstable))
	}
	for _, test := range slices.Sorted(maps.Keys(v.sec.Planned)) {
		out = append(out, fmt.Sprintf("%s: %s (planned); its outage is the result, in the suite's table", test, v.sec.Planned[test]))
	}
	return out
}
