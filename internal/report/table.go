// Package report turns stored results into typed tables and renders them as
// text (with terminal colours) or Markdown. Building a table and formatting it
// are separate: renderers only format.
package report

import (
	"math"

	"benchlab/internal/analysis"
)

// Report is everything shown for one experiment.
type Report struct {
	Title string
	// Header lines describe what ran: experiment, targets, host, preset.
	Header []string
	Tables []Table
	// Notes are warnings and caveats shown after the tables.
	Notes []string
}

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
	// verdict is the comparison behind Verdict, kept until the table's
	// correction decides it again (correctTable).
	verdict *analysis.Verdict
}

// NumberCell returns an absolute value cell.
func NumberCell(v float64) Cell {
	if math.IsNaN(v) {
		return Cell{Missing: true}
	}
	return Cell{Kind: Number, Value: v}
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

// toneMark is the sign shown after a toned value, so the tone does not rely
// on colour alone.
func toneMark(t Tone) string {
	switch t {
	case ToneGood:
		return "+"
	case ToneBad:
		return "-"
	case ToneIgnore:
		return "x"
	}
	return ""
}
