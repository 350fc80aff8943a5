package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report"
	"benchlab/internal/store"
)

// errRegression makes compare exit with code 3.
var errRegression = errors.New("significant regression found")

func runCompare(env Env, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	storeFlag := fs.String("store", "", "results database: a SQLite file or a postgres:// URL (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	id := fs.Int64("experiment", 0, "experiment ID (default: the most recent)")
	alpha := fs.Float64("alpha", analysis.DefaultAlpha, "significance level of each Mann-Whitney test")
	minEffect := fs.Float64("min-effect", analysis.DefaultMinEffect, "smallest relative change that counts (0.02 = 2%)")
	sequence := fs.Bool("sequence", false, "treat the targets as a release sequence and locate where each metric changed")
	gate := fs.Bool("fail-on-regression", false, "exit with code 3 when a significant regression beyond --threshold is found")
	threshold := fs.Float64("threshold", 0.05, "with --fail-on-regression: the smallest slowdown that fails (0.05 = 5%)")
	format := fs.String("format", "text", "text, markdown or html (one self-contained page with the charts)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.Stdout, "Usage: benchlab compare [--experiment N] [--sequence] [--fail-on-regression] [flags]\n\n"+
				"Judges every target against the base, cell by cell, with a Mann-Whitney test over the repeats.")
			fs.SetOutput(env.Stdout)
			fs.PrintDefaults()
			return errHelp
		}
		return usagef("%v", err)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"alpha", *alpha}, {"min-effect", *minEffect}, {"threshold", *threshold}} {
		if !(c.v > 0 && c.v < 1) {
			return usagef("flag --%s: %v is not allowed; want a number between 0 and 1", c.name, c.v)
		}
	}
	if *format != "text" && *format != "markdown" && *format != "html" {
		return usagef("flag --format: %q is not allowed; want text, markdown or html", *format)
	}
	if *format == "html" && *gate {
		return usagef("flag --format: html is a page for reading; the gate (--fail-on-regression) prints text")
	}
	d, err := loadData(storePath(env, *storeFlag), *id)
	if err != nil {
		return err
	}
	vopt := report.VerdictOptions{Alpha: *alpha, MinEffect: *minEffect}
	r := report.BuildWith(d, report.Options{Verdict: vopt, Sequence: *sequence})
	var keep []report.Table // the relative and sequence tables; `report` shows the rest
	for _, t := range r.Tables {
		if strings.HasPrefix(t.Title, "Relative throughput") || strings.HasPrefix(t.Title, "Changes across") ||
			strings.HasPrefix(t.Title, "Insert Benchmark relative") {
			keep = append(keep, t)
		}
	}
	cmps := report.Compare(d, vopt)
	r.Tables = append(keep, report.ComparisonTable(cmps, d.Experiment.Base))
	switch *format {
	case "markdown":
		err = report.WriteMarkdown(env.Stdout, r)
	case "html":
		// The page is the whole output: the verdict counts and the gate's
		// lines below would not be valid HTML after it.
		return report.WriteHTML(env.Stdout, d, r)
	default:
		err = report.WriteText(env.Stdout, r, report.TextOptions{Color: isTerminal(env.Stdout)})
	}
	if err != nil {
		return err
	}
	counts := map[analysis.Outcome]int{}
	ps := make([]float64, len(cmps))
	for i, c := range cmps {
		counts[c.Verdict.Outcome]++
		ps[i] = c.Verdict.P
	}
	fmt.Fprintf(env.Stdout, "\nverdicts over %d cells: %d slower, %d faster, %d same, %d unknown\n", len(cmps),
		counts[analysis.Slower], counts[analysis.Faster], counts[analysis.Same], counts[analysis.Unknown])
	if !*gate {
		return nil
	}
	reject := analysis.HolmBonferroni(ps, *alpha)
	var found []report.Comparison
	for i, c := range cmps {
		if reject[i] && c.Verdict.Outcome == analysis.Slower && c.Verdict.Ratio <= 1-*threshold {
			found = append(found, c)
		}
	}
	fmt.Fprintf(env.Stdout, "gate: family-wise error controlled with Holm-Bonferroni over %d cells at alpha %g; "+
		"a regression is a significant slowdown of at least %g%%\n", len(cmps), *alpha, *threshold*100)
	for _, c := range found {
		fmt.Fprintf(env.Stdout, "REGRESSION %s: %s @%d threads: x%.3f (p=%.2g, n=%d/%d)\n", c.Target, c.Test, c.Threads,
			c.Verdict.Ratio, c.Verdict.P, c.Verdict.NBase, c.Verdict.NOther)
	}
	if len(found) > 0 {
		return errRegression
	}
	fmt.Fprintln(env.Stdout, "gate: no regression")
	return nil
}
