package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"benchlab/internal/across"
	"benchlab/internal/analysis"
	"benchlab/internal/report"
	selection "benchlab/internal/results"
	"benchlab/internal/store"
)

// openReadOnly opens the results database at path for reading only; a
// missing file is a usage error.
func openReadOnly(path string) (*store.Store, error) {
	if !store.IsPostgres(path) {
		if _, err := os.Stat(path); err != nil {
			return nil, usagef("no results database at %s (run an experiment first, or give --store)", path)
		}
	}
	return store.OpenReadOnly(path)
}

// selectRuns parses a selector given to flag and loads what it selects;
// bad selectors and selectors that match nothing are usage errors naming
// the flag.
func selectRuns(ctx context.Context, st *store.Store, flag, text string) (*selection.Set, error) {
	sel, err := selection.ParseSelector(text)
	if err != nil {
		return nil, usagef("flag %s: %v", flag, err)
	}
	set, err := selection.Load(ctx, st, sel)
	var nm *selection.NoMatch
	if errors.As(err, &nm) {
		return nil, usagef("flag %s: %v", flag, err)
	}
	return set, err
}

// runCompareAcross is compare with --base and --vs: the selections' runs
// judged cell by cell by the verdicts compare gives one experiment's
// targets.
func runCompareAcross(env Env, f *compareFlags, vopt report.VerdictOptions, gopt analysis.GateOptions, color bool) error {
	switch {
	case f.baseSel == "":
		return usagef("flag --vs: needs --base, the selection it is compared with (e.g. --base experiment:3)")
	case len(f.vs) == 0:
		return usagef("flag --base: needs --vs, a selection to compare with it (e.g. --vs experiment:5)")
	case f.id != 0:
		return usagef("flag --experiment: compares one experiment's targets; with --base and --vs, select it there (experiment:%d)", f.id)
	case f.sequence:
		return usagef("flag --sequence: orders one experiment's targets; it does not apply to --base and --vs")
	case f.format == "html":
		return usagef("flag --format: html is the page of one experiment; with --base and --vs want text, markdown or json")
	}
	st, err := openReadOnly(storePath(env, f.store))
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	sides := []across.Side{{Label: strings.TrimSpace(f.baseSel)}}
	for _, v := range f.vs {
		sides = append(sides, across.Side{Label: strings.TrimSpace(v)})
	}
	for i := range sides {
		flag := "--vs"
		if i == 0 {
			flag = "--base"
		}
		if sides[i].Set, err = selectRuns(ctx, st, flag, sides[i].Label); err != nil {
			return err
		}
	}
	c, err := across.Build(ctx, st, sides)
	var ae *across.Error
	if errors.As(err, &ae) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	cmps, unjudged := report.Compare(c.Data, vopt), report.NotJudged(c.Data)
	if len(cmps) == 0 && len(unjudged) == 0 {
		return usagef("flag --vs: no cell (test at a thread count) is on both sides; want selections that ran the same tests")
	}
	if f.gate {
		if err := gateCheck("flag --fail-on-regression", cmps, unjudged, gopt); err != nil {
			return err
		}
	}
	if f.format == "json" {
		return writeCompareJSON(env.Stdout, c.Data, cmps, unjudged, f, vopt, gopt)
	}
	// The notes are the report's own on stalled steps (report.StallNotes).
	verdicts := report.ComparisonTableWith(cmps, c.Data.Experiment.Base, vopt)
	verdicts.Rows = append(verdicts.Rows, report.NotJudgedRows(unjudged)...)
	r := &report.Report{Title: "benchlab compare across experiments", Header: c.Header(),
		Tables: []report.Table{verdicts}, Notes: report.StallNotes(c.Data)}
	if t := c.OnlyTable(); t != nil {
		r.Tables = append(r.Tables, *t)
	}
	if f.format == "markdown" {
		err = report.WriteMarkdown(env.Stdout, r)
	} else {
		err = report.WriteText(env.Stdout, r, report.TextOptions{Color: color})
	}
	if err != nil {
		return err
	}
	verdictLines(env.Stdout, cmps, unjudged, vopt)
	if !f.gate {
		return nil
	}
	return gateReport(env.Stdout, cmps, unjudged, gopt)
}

// unknownLines says, for each unknown verdict whose interval lies beyond
// the minimum effect, why it was not called (report.UnknownWhy).
func unknownLines(w io.Writer, cmps []report.Comparison, vopt report.VerdictOptions) {
	for _, c := range cmps {
		if _, why := report.UnknownWhy(c, vopt); why != "" {
			printWrapped(w, "unknown although the interval [%.3f-%.3f] lies beyond +-%g%%: %s: %s @%d: %s\n",
				c.Verdict.RatioLo, c.Verdict.RatioHi, 100*effectOf(vopt), c.Target, c.Test, c.Threads, why)
		}
	}
}
