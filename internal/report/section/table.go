// Package section is what a suite hands the report: typed tables, notes and
// charts over a read-only view of one experiment's results. It depends on
// nothing of the report's internals, so a suite lays out its own sections
// without importing the renderer, and the report finds them here by the
// suite its stored spec names, without the suite registry.
package section

import (
	"math"

	"benchlab/internal/analysis"
)

// Table is a grid of typed cells with row groups.
type Table struct {
	Title string
	// Legend explains units and colours, printed under the title.
	Legend  string
	Columns []string
	Rows    []Row
	// Relative marks the headline table of ratios to the base, whatever
	// its title names: the HTML page shows it first and compare keeps it.
	Relative bool
	// Sweep marks a sweep's table (each test against the swept value, the
	// best value picked), which compare keeps beside the relative one.
	Sweep bool
}

// Row is one labelled line of a table; Group starts a new section when it
// differs from the previous row's.
type Row struct {
	Group string
	Label string
	Cells []Cell
}

// Kind says how a cell's value is formatted.
type Kind int

const (
	// Number is an absolute value shown with a precision that fits its size.
	Number Kind = iota
	// Ratio is a relative value shown with 2 decimals and coloured by Band.
	Ratio
	// Text is shown as is.
	Text
)

// Cell is one value of a table.
type Cell struct {
	Kind  Kind
	Value float64
	Text  string
	// Unit follows a number when the column does not name it (a row of
	// facts of several units: "ms", "s", "%").
	Unit string
	// Band colours ratios: better (green), worse (red) or neutral (grey).
	Band analysis.Band
	// Missing marks a cell with no measurement.
	Missing bool
	// Tone colours an absolute cell by its table's rule (docs/method.md 1.13);
	// ratios use Band instead.
	Tone Tone
	// Verdict is the significance outcome behind a ratio ("slower",
	// "faster", "same", "unknown"), empty when no test was made; Mark is its
	// sign and Detail the figures behind it (ratio CI, p, repeats).
	Verdict, Mark, Detail string
	// Judged is the comparison behind Verdict, kept until the table's
	// multiple-comparison correction decides it again; renderers ignore it.
	Judged *analysis.Verdict
}

// NumberCell returns an absolute value cell.
func NumberCell(v float64) Cell {
	if math.IsNaN(v) {
		return Cell{Missing: true}
	}
	return Cell{Kind: Number, Value: v}
}

// UnitCell returns an absolute value cell with its unit, for tables whose
// columns do not name one.
func UnitCell(v float64, unit string) Cell {
	c := NumberCell(v)
	if !c.Missing {
		c.Unit = unit
	}
	return c
}

// RatioCell returns a relative value cell banded for the metric's direction.
func RatioCell(ratio float64, dir analysis.Direction) Cell {
	if math.IsNaN(ratio) {
		return Cell{Missing: true}
	}
	return Cell{Kind: Ratio, Value: ratio, Band: analysis.BandOf(ratio, dir)}
}

// TextCell returns a cell holding s.
func TextCell(s string) Cell { return Cell{Kind: Text, Text: s} }

// Tone is the colour a table's rule gives an absolute value: the Insert
// Benchmark's summary marks each column's best and worst values and its
// insert-rate table the steps that missed their SLA (docs/method.md 1.13).
type Tone int

const (
	// ToneNone leaves the cell plain.
	ToneNone Tone = iota
	// ToneGood is green, marked +.
	ToneGood
	// ToneBad is red, marked -.
	ToneBad
	// ToneIgnore is grey, marked x: the value does not count (SLA missed).
	ToneIgnore
	// ToneMuted is grey without a mark: a reference value (the target row).
	ToneMuted
)

// Chart is one chart of the HTML report: a title, a height in pixels and the
// ECharts option that draws it.
type Chart struct {
	Title  string
	Height int
	Option map[string]any
}
