package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"benchlab/internal/analysis"
	"benchlab/internal/history"
	"benchlab/internal/report"
)

// historyFlags are the flags of `benchlab history`.
type historyFlags struct {
	store, format, color, correction, gateCorrection, by string
	alpha, minEffect, threshold, changeP                 float64
	gate                                                 bool
}

func newHistoryCmd(env Env) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history [selector...]",
		Short: "each cell of an experiment run again and again as a series: change points, the newest point judged, a gate",
		Long: "Follows the experiments a selector picks (default: every experiment named as the most recent one) as one\n" +
			"series per target, test and thread count, a point per experiment in order of creation; finds change points\n" +
			"(E-Divisive means with Otava's t-test) and judges the newest point against the points since the last one:\n" +
			"by their own spread with 3 or more, else by its runs against theirs with compare's verdicts and the host's\n" +
			"noise history.",
		Example: "  benchlab history experiment:nightly\n  benchlab history experiment:nightly target:pg16 since:2026-11-01\n" +
			"  benchlab history --fail-on-regression --threshold 0.05",
		RunE: body(func(_ *cobra.Command, args []string) error { return runHistory(env, f, args) }),
	}
	fs := cmd.Flags()
	addStoreFlag(fs, &f.store)
	fs.Float64Var(&f.alpha, "alpha", analysis.DefaultAlpha, "significance level of the newest point's verdict")
	fs.Float64Var(&f.minEffect, "min-effect", analysis.DefaultMinEffect, "smallest relative change that counts (0.02 = 2%)")
	fs.Float64Var(&f.changeP, "change-p", analysis.DefaultChangePValue, "largest t-test p of a change point (the default is Otava's)")
	fs.BoolVar(&f.gate, "fail-on-regression", false, "exit with code 3 when a newest point is a significant regression beyond --threshold")
	fs.Float64Var(&f.threshold, "threshold", analysis.DefaultGateThreshold, "with --fail-on-regression: the smallest slowdown that fails (0.05 = 5%)")
	fs.StringVar(&f.correction, "correction", string(analysis.BH), "correction of the newest points' verdicts over the cells: bh, holm or none")
	fs.StringVar(&f.gateCorrection, "gate-correction", string(analysis.Holm), "with --fail-on-regression: the gate's correction, holm (default), bh or none")
	fs.StringVar(&f.by, "by", "experiment", "a point per experiment, or per engine version (version: every run of a version, versions in the order they first ran)")
	fs.StringVar(&f.format, "format", "text", "text, markdown, json (every point, change point and verdict) or html (one page, a chart per changed cell)")
	addColorFlag(fs, &f.color)
	return cmd
}

func runHistory(env Env, f *historyFlags, args []string) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"alpha", f.alpha}, {"min-effect", f.minEffect}, {"threshold", f.threshold}, {"change-p", f.changeP}} {
		if !(c.v > 0 && c.v < 1) {
			return usagef("flag --%s: %v is not allowed; want a number between 0 and 1", c.name, c.v)
		}
	}
	corr, err := analysis.ParseCorrection(strings.ToLower(f.correction), analysis.BH)
	if err != nil {
		return usagef("flag --correction: %v", err)
	}
	gcorr, err := analysis.ParseCorrection(strings.ToLower(f.gateCorrection), analysis.Holm)
	if err != nil {
		return usagef("flag --gate-correction: %v", err)
	}
	format := strings.ToLower(f.format)
	if format != "text" && format != "markdown" && format != "json" && format != "html" {
		return usagef("flag --format: %q is not allowed; want text, markdown, json or html", f.format)
	}
	if format == "html" && f.gate {
		return usagef("flag --format: html is a page for reading; the gate (--fail-on-regression) prints text or json")
	}
	by := strings.ToLower(f.by)
	if by != "experiment" && by != "version" {
		return usagef("flag --by: %q is not allowed; want experiment or version", f.by)
	}
	color, err := useColor(env, env.Stdout, f.color)
	if err != nil {
		return err
	}
	st, err := openReadOnly(storePath(env, f.store))
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	text := strings.Join(args, " ")
	if strings.TrimSpace(text) == "" {
		last, err := st.Experiment(ctx, 0)
		if err != nil {
			return usagef("%v", err)
		}
		text = "experiment:" + last.Name
		switch {
		case strings.ContainsAny(last.Name, `"*?[\`):
			text = fmt.Sprintf("experiment:%d", last.ID) // a name the selector cannot spell
		case strings.ContainsAny(last.Name, " ,\t\n"):
			text = `experiment:"` + last.Name + `"`
		}
	}
	set, err := selectRuns(ctx, st, "selector", text)
	if err != nil {
		return err
	}
	for _, e := range set.Experiments {
		if e.Suite != set.Experiments[0].Suite {
			return usagef("selector %q: matches experiments of suites %s and %s; want one suite (add suite:NAME)",
				text, set.Experiments[0].Suite, e.Suite)
		}
	}
	for cell, ms := range set.Mixed() {
		return usagef("selector %q: %s is measured in %s: incomparable units in one series", text, cell, strings.Join(ms, " and "))
	}
	vopt := report.VerdictOptions{Alpha: f.alpha, MinEffect: f.minEffect, Correction: corr}
	opt := history.Options{Verdict: vopt, Change: analysis.ChangeOptions{PValue: f.changeP}, Effect: f.threshold, ByVersion: by == "version"}
	series, err := history.Build(ctx, st, set, opt)
	if err != nil {
		return err
	}
	gopt := analysis.GateOptions{Alpha: f.alpha, MinEffect: f.minEffect, Threshold: f.threshold, Correction: gcorr}
	var cmps []report.Comparison
	var unjudged []report.Unjudged
	for _, s := range series {
		if s.NotJudged {
			n := s.Newest().Stalled
			unjudged = append(unjudged, report.Unjudged{Target: s.Target + " #" + fmt.Sprint(s.Newest().Experiment.ID),
				Test: s.Cell.Test, Threads: s.Cell.Threads, Stalled: [2]int{0, n}, Runs: [2]int{0, n}})
			continue
		}
		if len(s.Points) > 1 {
			cmps = append(cmps, report.Comparison{Target: s.Target + " #" + fmt.Sprint(s.Newest().Experiment.ID), Test: s.Cell.Test,
				Threads: s.Cell.Threads, Verdict: s.Judged.Newest, Metric: s.Metric, Noise: s.Judged.NewestEvidence})
		}
	}
	if f.gate {
		if len(cmps) == 0 && len(unjudged) == 0 {
			return usagef("flag --fail-on-regression: selector %q gives every cell one point; the gate needs a history of 2 or more", text)
		}
		if err := gateCheck("flag --fail-on-regression", cmps, unjudged, gopt); err != nil {
			return err
		}
	}
	if format == "json" {
		if err := history.WriteJSON(env.Stdout, text, series); err != nil {
			return err
		}
		if f.gate {
			_, found := regressions(cmps, gopt)
			return gateOutcome(found, unjudged)
		}
		return nil
	}
	r := history.Report(text, len(set.Experiments), series, opt)
	if format == "html" {
		return history.WriteHTML(env.Stdout, r, series)
	}
	if format == "markdown" {
		err = report.WriteMarkdown(env.Stdout, r)
	} else {
		err = report.WriteText(env.Stdout, r, report.TextOptions{Color: color})
	}
	if err != nil || !f.gate {
		return err
	}
	fmt.Fprintln(env.Stdout)
	return gateReport(env.Stdout, cmps, unjudged, gopt)
}
