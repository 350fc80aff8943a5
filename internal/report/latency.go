package report

import (
	"time"

	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// percentile is one latency column: its name and where a result stores it.
type percentile struct {
	name string
	of   func(store.Latency) time.Duration
}

// percentiles are the latency figures a result can store, in the order
// the table shows them.
var percentiles = []percentile{
	{"p50", func(l store.Latency) time.Duration { return l.P50 }},
	{"p95", func(l store.Latency) time.Duration { return l.P95 }},
	{"p99", func(l store.Latency) time.Duration { return l.P99 }},
	{"p99.9", func(l store.Latency) time.Duration { return l.P999 }},
	{"max", func(l store.Latency) time.Duration { return l.Max }},
}

// storedPercentiles are the percentiles some measured result of the rows
// holds: benchlab's histograms store them all, an imported tool's output
// only those it printed (sysbench: p95 and max), so every stored figure
// gets a column and none is shown as n/a.
func storedPercentiles(v *view) []percentile {
	var out []percentile
	for _, p := range percentiles {
		found := false
		for _, t := range v.targets {
			for _, k := range v.keys {
				for _, r := range v.s[t][k] {
					found = found || p.of(r.Latency) > 0
				}
			}
		}
		if found {
			out = append(out, p)
		}
	}
	return out
}

// latencyTables is the table of latency percentiles per target, one
// column per stored percentile, and each target's failed operations.
func latencyTables(v *view) []Table {
	ps := storedPercentiles(v)
	// Every results table says how many operations failed: a throughput
	// alone hides a target whose operations fail (they count in none).
	const errLegend = "; err %: failed operations in percent of those attempted"
	lat := Table{Title: "Latency per event", Legend: "milliseconds, from HDR histograms of the measured part (median over repeats)" + errLegend}
	if importedFrom(v.d) != "" {
		lat.Legend = "milliseconds, as the imported tool printed them (median over repeats); a column for every " +
			"percentile it printed; n/a: not printed for that test" + errLegend
	}
	for _, t := range v.targets {
		for _, p := range ps {
			lat.Columns = append(lat.Columns, t+" "+p.name)
		}
		lat.Columns = append(lat.Columns, t+" err %")
	}
	if len(ps) == 0 {
		// No step stored a latency (a program's regex steps): the failed
		// operations alone, with no latency column to fill with n/a.
		lat.Title, lat.Legend = "Failed operations", "median over repeats"+errLegend
	}
	for _, k := range v.keys {
		row := Row{Group: v.groups[k], Label: v.label(k)}
		for _, t := range v.targets {
			for _, p := range ps {
				row.Cells = append(row.Cells, section.NumberCell(section.Median(v.s[t][k],
					func(x store.Result) float64 { return latencyMS(p.of(x.Latency)) })))
			}
			row.Cells = append(row.Cells, section.NumberCell(section.Median(v.s[t][k],
				func(x store.Result) float64 { return 100 * x.ErrorRate() })))
		}
		lat.Rows = append(lat.Rows, row)
	}
	return []Table{lat}
}
