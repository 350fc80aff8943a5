// Package across sets selections of stored runs against each other, as
// compare sets targets of one experiment: a base selection and one or more
// others (results.Selector), each one configuration, judged cell by cell
// (suite, test, threads) by the report's own verdicts (report.Compare).
// Runs imported from another tool's output take part as benchlab's own do.
package across

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/results"
	"benchlab/internal/store"
)

// Side is one selection: its label (the selector's text) and what it
// selected.
type Side struct {
	Label string
	Set   *results.Set
}

// Error is a comparison that cannot be made, naming the selector at
// fault and what was expected.
type Error struct {
	Selector, Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("selector %q: %s", e.Selector, e.Msg) }

// Comparison is what Build made of the sides: report.Data whose targets
// are the sides (the base first), for report.Compare, and the cells only
// some sides hold, which no verdict covers.
type Comparison struct {
	Data *report.Data
	// OnlyIn maps a side's label to the cells it holds and the base does
	// not (for the base: cells no other side holds).
	OnlyIn map[string][]results.Cell
	Sides  []Side
}

// Build checks that the sides can be set against each other and makes
// report.Data of them: each side one configuration (one target name), one
// suite throughout, one metric per cell, no run on two sides. The noise
// history that applies is read from st (read-only: nothing is learned).
func Build(ctx context.Context, st *store.Store, sides []Side) (*Comparison, error) {
	if len(sides) < 2 {
		return nil, fmt.Errorf("across: %d selections; want a base and at least one other", len(sides))
	}
	if err := checkUnits(sides); err != nil {
		return nil, err
	}
	c := &Comparison{OnlyIn: map[string][]results.Cell{}, Sides: sides}
	exp := store.Experiment{Name: "compare " + sides[0].Label, Base: sides[0].Label}
	d := &report.Data{Results: map[int64][]store.Result{}}
	side := map[int64]string{} // run ID -> the side that holds it
	cells := make([][]results.Cell, len(sides))
	for i, s := range sides {
		if slices.ContainsFunc(sides[:i], func(o Side) bool { return o.Label == s.Label }) {
			return nil, &Error{s.Label, "given twice; each selection is compared once"}
		}
		if ts := s.Set.Targets(); len(ts) > 1 {
			return nil, &Error{s.Label, fmt.Sprintf("matches runs of %d targets (%s); a side of a comparison is one "+
				"configuration: add target:NAME", len(ts), strings.Join(ts, ", "))}
		}
		suites := s.Set.Suites()
		if len(suites) > 1 {
			return nil, &Error{s.Label, fmt.Sprintf("matches experiments of %d suites (%s); want one suite", len(suites),
				strings.Join(suites, ", "))}
		}
		if base := sides[0].Set.Suites(); i > 0 && suites[0] != base[0] {
			return nil, &Error{s.Label, fmt.Sprintf("runs suite %s and the base (%s) suite %s: different tests; "+
				"compare runs of one suite", suites[0], sides[0].Label, base[0])}
		}
		for cell, ms := range s.Set.Mixed() {
			return nil, &Error{s.Label, fmt.Sprintf("%s is measured in %s: incomparable units within one side", cell,
				strings.Join(ms, " and "))}
		}
		if exp.Spec == "" {
			exp.Spec = s.Set.Experiments[0].Spec
		}
		exp.Targets = append(exp.Targets, s.Label)
		cs, _ := s.Set.Cells()
		cells[i] = cs
		for _, r := range s.Set.Runs() {
			if other, dup := side[r.ID]; dup {
				return nil, &Error{s.Label, fmt.Sprintf("selects run %d, which %q selects too; a run belongs to one side", r.ID, other)}
			}
			side[r.ID] = s.Label
			run := r.Run
			run.Target = s.Label
			d.Runs = append(d.Runs, run)
			d.Results[r.ID] = r.Results
		}
	}
	for i, s := range sides {
		for _, cell := range cells[i] {
			onBase := slices.Contains(cells[0], cell)
			if i > 0 && !onBase {
				c.OnlyIn[s.Label] = append(c.OnlyIn[s.Label], cell)
			}
			if i == 0 && !slices.ContainsFunc(cells[1:], func(cs []results.Cell) bool { return slices.Contains(cs, cell) }) {
				c.OnlyIn[s.Label] = append(c.OnlyIn[s.Label], cell)
			}
		}
	}
	d.Experiment = exp
	var err error
	if d.Noise, err = noise.Load(ctx, st, exp, d.Runs, d.Results); err != nil {
		return nil, fmt.Errorf("read the noise history: %w", err)
	}
	c.Data = d
	return c, nil
}

// checkUnits refuses a test at a thread count that the sides report in
// different metrics (a pgbench tps against a sysbench qps): their ratio
// would mean nothing. It looks past the suites, so that the message names
// the units when they are what differs.
func checkUnits(sides []Side) error {
	for _, s := range sides[1:] {
		cells, _ := s.Set.Cells()
		for _, cell := range cells {
			b, o := unit(sides[0].Set, cell), unit(s.Set, cell)
			if b != "" && b != o {
				return &Error{s.Label, fmt.Sprintf("%s is measured in %s and in the base (%s) in %s: incomparable units",
					cell, o, sides[0].Label, b)}
			}
		}
	}
	return nil
}

// unit is the stored metric name of the results of set at cell's test and
// threads, whatever their suite; "" when set has none.
func unit(set *results.Set, cell results.Cell) string {
	for _, e := range set.Experiments {
		for _, r := range e.Runs {
			for _, res := range r.Results {
				if res.Test == cell.Test && res.Threads == cell.Threads {
					return results.MetricName(res)
				}
			}
		}
	}
	return ""
}

// Header describes each side for a report's header: the selector, the
// experiments it matched, the runs, target, engine and versions, and
// whether the runs were imported.
func (c *Comparison) Header() []string {
	var out []string
	for i, s := range c.Sides {
		role := "other"
		if i == 0 {
			role = "base"
		}
		var exps, versions []string
		imported := 0
		runs := s.Set.Runs()
		for _, e := range s.Set.Experiments {
			exps = append(exps, fmt.Sprintf("%d %s (%s)", e.ID, e.Name, e.Created.UTC().Format("2006-01-02 15:04")))
		}
		for _, r := range runs {
			if v := r.Engine + " " + r.Version; !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
			if r.Manifest.Imported() {
				imported++
			}
		}
		from := "experiment"
		if len(exps) > 1 {
			from = "experiments"
		}
		line := fmt.Sprintf("%s %s: %d runs of target %s (%s) from %s %s", role, s.Label, len(runs),
			runs[0].Target, strings.TrimSpace(strings.Join(versions, ", ")), from, strings.Join(exps, ", "))
		if imported > 0 {
			line += fmt.Sprintf("; %d imported from %s output", imported, runs[0].Manifest.Import.Tool)
		}
		out = append(out, line)
	}
	return out
}

// OnlyTable lists the cells some sides hold and others lack, nil when
// every side holds the same cells.
func (c *Comparison) OnlyTable() *report.Table {
	t := &report.Table{Title: "Cells on one side only (no verdict)", Columns: []string{"held by", "missing from"}}
	for i, s := range c.Sides {
		for _, cell := range c.OnlyIn[s.Label] {
			missing := c.Sides[0].Label
			if i == 0 {
				var others []string
				for _, o := range c.Sides[1:] {
					others = append(others, o.Label)
				}
				missing = strings.Join(others, ", ")
			}
			t.Rows = append(t.Rows, report.Row{Label: cell.String(), Cells: []report.Cell{textCell(s.Label), textCell(missing)}})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// textCell is a table cell holding s.
func textCell(s string) report.Cell { return report.Cell{Kind: report.Text, Text: s} }
