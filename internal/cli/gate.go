package cli

import (
	"errors"
	"fmt"
	"io"

	"benchlab/internal/analysis"
	"benchlab/internal/report"
)

// gateCheck refuses a gate that cannot fire on these comparisons (a gate
// that always passes would look like a green build):
// every verdict rests on the repeats alone and with their repeats no
// Mann-Whitney p-value can pass the gate's correction, so a pass would say
// nothing. flag names what asked for the gate.
// Cells left unjudged because their runs stalled do not make a gate
// unable to fire: gateReport reports them, and exits 1.
func gateCheck(flag string, cmps []report.Comparison, unjudged []report.Unjudged, opt analysis.GateOptions) error {
	g := analysis.Gate(report.Verdicts(withLeftOut(cmps)), opt)
	if len(cmps) == 0 && len(unjudged) > 0 {
		return nil
	}
	if len(cmps) == 0 {
		return usagef("%s: the experiment has no compared cells (one target, or no measured results); the gate cannot fire", flag)
	}
	if analysis.CanFire(g.Power) || beyondRepeats(cmps) > 0 {
		return nil
	}
	p := g.Power
	return usagef("%s: the gate cannot fire on this experiment: %d cells under %s at alpha %g need p < %.2g for a lone "+
		"regression, and %d against %d repeats reach %.2g at best (exact Mann-Whitney floor; no cell had the %d runs a side, "+
		"with no outlier deciding the call, that Welch's t-test needs); run %d repeats per target (%d for the ranks alone)",
		flag, p.Cells, p.Correction, p.Alpha, p.Threshold, p.NBase, p.NOther, p.Floor, analysis.MinWelchRepeats,
		max(analysis.MinWelchRepeats, min(p.NBase, p.NOther)+1), p.RepeatsNeeded)
}

// withLeftOut counts in each verdict's repeats the runs it left out (on a
// slow host, or disturbed): whether a gate can fire is a question of the
// repeats the experiment ran, and a run its verdict set aside does not
// make the experiment too small; the verdict itself still judges without it.
func withLeftOut(cmps []report.Comparison) []report.Comparison {
	out := make([]report.Comparison, len(cmps))
	for i, c := range cmps {
		c.Verdict.NBase, c.Verdict.NOther = c.RepeatsRun()
		out[i] = c
	}
	return out
}

// leftOutNote says how many cells the gate judged without some of their
// runs, "" when none.
func leftOutNote(cmps []report.Comparison) string {
	cells, runs := 0, 0
	for _, c := range cmps {
		b, o := c.RepeatsRun()
		if n := b + o - c.Verdict.NBase - c.Verdict.NOther; n > 0 {
			cells, runs = cells+1, runs+n
		}
	}
	if cells == 0 {
		return ""
	}
	return fmt.Sprintf("gate: %d cells judged without %d of their runs (set aside on a slow host or as disturbed; "+
		"compare's evidence names them): their verdicts have less power than the repeats run\n", cells, runs)
}

// regressions applies the gate to cmps and returns its result and the
// cells it fails on, each with the verdict decided under the gate's
// correction.
func regressions(cmps []report.Comparison, opt analysis.GateOptions) (analysis.GateResult, []report.Comparison) {
	g := analysis.Gate(report.Verdicts(cmps), opt)
	var found []report.Comparison
	for _, i := range g.Failed {
		c := cmps[i]
		c.Verdict = g.Verdicts[i]
		found = append(found, c)
	}
	return g, found
}

// errNotJudged makes a gate exit with code 1: cells it could not judge
// because every run of a side completed no operation. A stall is a failure
// to measure, neither a regression (exit 3) nor a pass (exit 0); a
// regression found in the other cells still exits 3 (docs/statistics.md).
var errNotJudged = errors.New("not judged: runs completed no operation (stalled); measure again")

// notJudgedLines prints one line per cell the gate could not judge.
func notJudgedLines(w io.Writer, unjudged []report.Unjudged) {
	for _, u := range unjudged {
		printWrapped(w, "NOT JUDGED %s: %s @%d threads: %s: a failure to measure, not a verdict\n", u.Target, u.Test,
			u.Threads, u.Why())
	}
}

// gateOutcome is the error a gate returns: errRegression when it found a
// regression, else errNotJudged when cells went unjudged, else nil.
func gateOutcome(found []report.Comparison, unjudged []report.Unjudged) error {
	switch {
	case len(found) > 0:
		return errRegression
	case len(unjudged) > 0:
		return fmt.Errorf("gate: %d cell(s) %w", len(unjudged), errNotJudged)
	}
	return nil
}

// gateReport prints the gate's decision over cmps, and the cells it could
// not judge, and returns gateOutcome's error.
func gateReport(w io.Writer, cmps []report.Comparison, unjudged []report.Unjudged, opt analysis.GateOptions) error {
	g, found := regressions(cmps, opt)
	o := g.Options
	control := "family-wise error controlled with Holm-Bonferroni"
	switch o.Correction {
	case analysis.BH:
		control = "false discovery rate controlled with Benjamini-Hochberg"
	case analysis.NoCorrection:
		control = "no multiple-comparison correction"
	}
	printWrapped(w, "gate: %s over %d cells at alpha %g; a regression is a significant slowdown of at least %g%%\n",
		control, len(cmps), o.Alpha, o.Threshold*100)
	printWrapped(w, "gate %s", g.Power)
	if n := beyondRepeats(cmps); n > 0 {
		printWrapped(w, "gate: %d of %d cells rest on a t-test on log throughput, where that floor does not apply\n", n, len(cmps))
	}
	if n := leftOutNote(cmps); n != "" {
		printWrapped(w, "%s", n)
	}
	for _, c := range found {
		v := c.Verdict
		printWrapped(w, "REGRESSION %s: %s @%d threads: x%.3f (p=%.2g, %s %.2g, n=%d/%d, evidence: %s)\n", c.Target, c.Test,
			c.Threads, v.Ratio, v.P, o.Correction, v.PAdjusted, v.NBase, v.NOther, v.Evidence)
	}
	notJudgedLines(w, unjudged)
	if err := gateOutcome(found, unjudged); err != nil {
		return err
	}
	fmt.Fprintln(w, "gate: no regression")
	return nil
}

// powerJSON is analysis.Power in compare's JSON.
type powerJSON struct {
	Cells         int     `json:"cells"`
	NBase         int     `json:"n_base"`
	NOther        int     `json:"n_other"`
	Alpha         float64 `json:"alpha"`
	Correction    string  `json:"correction"`
	Floor         float64 `json:"smallest_p"`
	Threshold     float64 `json:"needed_p"`
	Callable      bool    `json:"callable"`
	RepeatsNeeded int     `json:"repeats_needed"`
	MinChanged    int     `json:"min_changed_cells"`
}

func toPowerJSON(p analysis.Power) powerJSON {
	return powerJSON{p.Cells, p.NBase, p.NOther, p.Alpha, string(p.Correction), p.Floor, p.Threshold, p.Callable,
		p.RepeatsNeeded, p.MinChanged}
}

// beyondRepeats counts the comparisons whose verdict rests on a t-test
// rather than the Mann-Whitney test over the repeats (Welch's over the
// repeats, within-run variation, the host's noise prior), where the exact
// test's floor does not bind.
func beyondRepeats(cmps []report.Comparison) int {
	n := 0
	for _, c := range cmps {
		if c.Noise.Basis != analysis.BasisRepeats {
			n++
		}
	}
	return n
}

// powerLines are the statements compare prints under its verdict counts.
func powerLines(w io.Writer, cmps []report.Comparison, vopt report.VerdictOptions) {
	printWrapped(w, "verdicts %s\n", report.PowerOf(cmps, vopt))
	if n := beyondRepeats(cmps); n > 0 {
		printWrapped(w, "verdicts: %d of %d rest on a t-test on log throughput (Welch's over the repeats, within-run variation "+
			"or the host's noise prior), where that floor does not apply\n", n, len(cmps))
	}
}
