package report

import (
	"benchlab/internal/analysis"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Sections are what a suite adds to the report of its experiments: tables
// and notes, and whether they stand instead of the generic tables.
type Sections struct {
	Tables []Table
	Notes  []string
	// Replace drops the generic tables (relative and absolute throughput,
	// latency, operations by kind, efficiency) for Tables; the header and
	// the notes on the host, the client and the verdicts stay.
	Replace bool
}

// Sectioner is a suite (workload.Suite) that lays out report sections of
// its own, as the Insert Benchmark's summary, SLA and response-time tables
// (docs/method.md 1.11-1.13). The report finds it through the suite registry by
// the suite its stored spec names, and knows no suite by name.
type Sectioner interface {
	ReportSections(d *Data, opt Options) Sections
}

// Charter is a suite with charts of its own in the HTML report, drawn after
// the generic ones.
type Charter interface {
	ReportCharts(d *Data) []Chart
}

// Chart is one chart of the HTML report: a title, a height in pixels and the
// ECharts option that draws it.
type Chart struct {
	Title  string
	Height int
	Option map[string]any
}

// suiteOfData returns the experiment's suite from the registry, if the
// binary links it.
func suiteOfData(d *Data) (workload.Suite, bool) {
	return workload.Lookup(suiteOf(d))
}

// sectionsOf returns the sections of d's suite, if it has any.
func sectionsOf(d *Data, opt Options) (Sections, bool) {
	s, ok := suiteOfData(d)
	if !ok {
		return Sections{}, false
	}
	sec, ok := s.(Sectioner)
	if !ok {
		return Sections{}, false
	}
	return sec.ReportSections(d, opt), true
}

// chartsOf returns the charts of d's suite, if it has any.
func chartsOf(d *Data) []Chart {
	s, ok := suiteOfData(d)
	if !ok {
		return nil
	}
	if c, ok := s.(Charter); ok {
		return c.ReportCharts(d)
	}
	return nil
}

// Targets returns the experiment's targets with the base first.
func (d *Data) Targets() []string { return d.targets() }

// Median is the median of f over the repeats rs, NaN when there are none.
func Median(rs []store.Result, f func(store.Result) float64) float64 {
	return analysis.Median(values(rs, f))
}

// Values extracts f from each of the repeats rs.
func Values(rs []store.Result, f func(store.Result) float64) []float64 { return values(rs, f) }

// RelativeCell compares a target's repeats with the base's: the ratio of
// medians, with a significance verdict when both have two or more repeats.
func RelativeCell(base, other []float64, dir analysis.Direction, opt VerdictOptions) Cell {
	return relativeCell(base, other, dir, opt)
}

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

// BaseOption returns the ECharts option every chart starts from: title,
// axes names, palette, tooltip and legend.
func BaseOption(title, xName, yName string) map[string]any { return baseOption(title, xName, yName) }

// Num is v for a chart, nil (a gap) when it is not a finite number.
func Num(v float64) any { return num(v) }

// Downsample thins a per-second series to at most the points a chart draws.
func Downsample(ivs []store.Interval) []store.Interval { return downsample(ivs) }

// IntervalRate is one second's value in its result's metric.
func IntervalRate(r store.Result, iv store.Interval) float64 { return intervalRate(r, iv) }

// MiB is b bytes in MiB, or b itself when negative (not measured).
func MiB(b int64) float64 { return mb(b) }

// SumOf adds the server's and the client's figure, keeping "not readable"
// and taking the client's alone when the server's was not measured.
func SumOf(server, client float64) float64 { return sumOf(server, client) }
