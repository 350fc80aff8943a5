package report

import (
	"benchlab/internal/report/section"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// sweepsOf returns the experiment's sweeps, as its stored spec's targets
// mark them (spec.Swept), never as read from the targets' names.
func sweepsOf(d *Data) []spec.SweepGroup {
	sp := d.StoredSpec()
	if sp == nil {
		return nil
	}
	return sp.Sweeps()
}

// sweepTitle titles a sweep's table and charts: "Sweep of cache_size", with
// the swept target's name when the experiment has several sweeps.
func sweepTitle(g spec.SweepGroup, n int) string {
	t := "Sweep of " + g.Setting
	if n > 1 {
		t += " on " + g.Of
	}
	return t
}

// sweepTables shows, per sweep of the experiment, each row's headline
// metric at every value (median over repeats) and its ratio to the first
// value: the table the articles plot as throughput against a cache size.
func sweepTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, groups map[cellKey]string) []Table {
	sweeps := sweepsOf(d)
	var out []Table
	for _, g := range sweeps {
		first := g.Values[0]
		t := Table{Title: sweepTitle(g, len(sweeps)),
			Legend: absoluteLegend(s, keys) + ", median over repeats, per value of " + g.Setting + " on " + g.Of +
				"; then each value's ratio to the first (" + first + "), 2 decimals; " + relativeMarks(s, keys),
			Columns: append([]string{}, g.Values...)}
		for _, v := range g.Values[1:] {
			t.Columns = append(t.Columns, v+" / "+first)
		}
		tput := func(x store.Result) float64 { return x.Throughput() }
		for _, k := range keys {
			row := Row{Group: groups[k], Label: label(k)}
			medians := make([]float64, len(g.Targets))
			for i, tg := range g.Targets {
				medians[i] = section.Median(s[tg][k], tput)
				row.Cells = append(row.Cells, section.NumberCell(medians[i]))
			}
			for _, m := range medians[1:] {
				row.Cells = append(row.Cells, section.RatioCell(analysis.Ratio(m, medians[0]), s.metricOf(k).Direction))
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out
}

// sweepCharts draws, per sweep and test, the headline metric (median over
// repeats) against the swept value, one line per thread count. The values
// are categories in the sweep's order: they need not be numbers ("128MB",
// "full").
func sweepCharts(d *Data, keys []cellKey, s samples, label func(cellKey) string) []chartDef {
	sweeps := sweepsOf(d)
	var out []chartDef
	tput := func(x store.Result) float64 { return x.Throughput() }
	for _, g := range sweeps {
		var tests []string
		byTest := map[string][]cellKey{}
		for _, k := range keys {
			if _, ok := byTest[k.test]; !ok {
				tests = append(tests, k.test)
			}
			byTest[k.test] = append(byTest[k.test], k)
		}
		for _, test := range tests {
			m := s.metricOf(byTest[test][0])
			q := m.QuantityOf()
			o := section.BaseOption(strings.ToUpper(q[:1])+q[1:]+" against "+g.Setting+": "+test, g.Setting, m.Unit+" (median over repeats)")
			categoryAxis(o, g.Values, 0)
			var series []any
			for _, k := range byTest[test] {
				var vals []any
				for _, tg := range g.Targets {
					vals = append(vals, section.Num(section.Median(s[tg][k], tput)))
				}
				series = append(series, map[string]any{"name": label(k), "type": "line", "data": vals})
			}
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: strings.ToLower(sweepTitle(g, len(sweeps))), Height: 300}, o})
		}
	}
	return out
}

// sweptOf maps each target of the experiment that a sweep made to its
// sweep's setting and value, for the exports.
func sweptOf(d *Data) map[string][2]string {
	out := map[string][2]string{}
	for _, g := range sweepsOf(d) {
		for i, t := range g.Targets {
			out[t] = [2]string{g.Setting, g.Values[i]}
		}
	}
	return out
}
