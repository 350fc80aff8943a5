package report

import (
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// latencyTables is the table of latency percentiles per target.
func latencyTables(v *view) []Table {
	lat := Table{Title: "Latency per event", Legend: "milliseconds, from HDR histograms of the measured part (median over repeats)"}
	if importedFrom(v.d) != "" {
		lat.Legend = "milliseconds, as the imported tool printed them (median over repeats); n/a: the tool did not print it"
	}
	for _, t := range v.targets {
		lat.Columns = append(lat.Columns, t+" p50", t+" p99")
	}
	for _, k := range v.keys {
		row := Row{Group: v.groups[k], Label: v.label(k)}
		for _, t := range v.targets {
			row.Cells = append(row.Cells,
				section.NumberCell(section.Median(v.s[t][k], func(x store.Result) float64 { return latencyMS(x.Latency.P50) })),
				section.NumberCell(section.Median(v.s[t][k], func(x store.Result) float64 { return latencyMS(x.Latency.P99) })))
		}
		lat.Rows = append(lat.Rows, row)
	}
	return []Table{lat}
}
