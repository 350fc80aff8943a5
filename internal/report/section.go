package report

import (
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// The report's tables are package section's, which suites build too.
type (
	// Table is a grid of typed cells with row groups (section.Table).
	Table = section.Table
	// Row is one labelled line of a table (section.Row).
	Row = section.Row
	// Cell is one value of a table (section.Cell).
	Cell = section.Cell
	// Kind says how a cell's value is formatted (section.Kind).
	Kind = section.Kind
	// Tone is the colour a table's rule gives an absolute value (section.Tone).
	Tone = section.Tone
	// Chart is one chart of the HTML report (section.Chart).
	Chart = section.Chart
)

// Cell kinds and tones, as package section names them.
const (
	Number     = section.Number
	Ratio      = section.Ratio
	Text       = section.Text
	ToneNone   = section.ToneNone
	ToneGood   = section.ToneGood
	ToneBad    = section.ToneBad
	ToneIgnore = section.ToneIgnore
	ToneMuted  = section.ToneMuted
)

// input is d as a suite's sections read it, with the report's verdict
// machinery for their relative cells.
func input(d *Data, opt Options) *section.Input {
	return &section.Input{Experiment: d.Experiment, Runs: d.Runs, Results: d.Results, Spec: d.StoredSpec(),
		Targets: d.targets(),
		Compare: func(base, other []store.Result, baseTarget, otherTarget string) Cell {
			return d.ThroughputCell(base, other, baseTarget, otherTarget, opt.Verdict)
		}}
}

// sectionsOf returns the sections of d's suite, if it registered any.
func sectionsOf(d *Data, opt Options) section.Sections {
	c, ok := section.Of(suiteOf(d))
	if !ok {
		return section.Sections{}
	}
	return c.ReportSections(input(d, opt))
}

// chartsOf returns the charts of d's suite, if it has any.
func chartsOf(d *Data) []Chart {
	c, ok := section.Of(suiteOf(d))
	if !ok {
		return nil
	}
	if ch, ok := c.(section.Charter); ok {
		return ch.ReportCharts(input(d, Options{}))
	}
	return nil
}

// Targets returns the experiment's targets with the base first.
func (d *Data) Targets() []string { return d.targets() }

// ThroughputCell compares a target's repeats of one measured step with the
// base's on their headline throughput, with all the evidence at hand as the
// generic relative table does (analysis.CompareNoise: the host's noise
// prior, within-run variance, the repeats); the cell's detail names the
// evidence. With a single run on a side and no usable prior it shows the
// plain 0.95/1.05 bands.
func (d *Data) ThroughputCell(base, other []store.Result, baseTarget, otherTarget string, opt VerdictOptions) Cell {
	if len(base) == 0 || len(other) == 0 {
		return Cell{Missing: true}
	}
	return d.throughputCell(base, other, baseTarget, otherTarget, cellKey{base[0].Test, base[0].Threads}, opt)
}
