package report

import (
	"math"
	"strings"

	"benchlab/internal/report/section"

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
// metric at every value (median over repeats), its ratio to the first
// value, and the best value with its verdict against the next best: the
// table the articles plot as throughput against a cache size. A value the
// server did not run (sweepChecks) is marked in its column's name and
// never picked as the best.
func sweepTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, groups map[cellKey]string, opt VerdictOptions) []Table {
	sweeps := sweepsOf(d)
	var out []Table
	for _, g := range sweeps {
		first := g.Values[0]
		checks := sweepChecks(d, g)
		t := Table{Title: sweepTitle(g, len(sweeps)), Sweep: true,
			Legend: absoluteLegend(s, keys) + ", median over repeats, per value of " + g.Setting + " on " + g.Of +
				"; then each value's ratio to the first (" + first + "), 2 decimals; " + relativeMarks(s, keys) +
				"; best: the value with the best median, and its ratio to the next best with the verdict of the two"}
		flagged := false
		for i, v := range g.Values {
			if checks[i].Outcome != spec.SettingTook {
				v += " (!)"
				flagged = true
			}
			t.Columns = append(t.Columns, v)
		}
		if flagged {
			t.Legend += "; (!) = the server did not run the value (the notes say what it ran)"
		}
		for _, v := range g.Values[1:] {
			t.Columns = append(t.Columns, v+" / "+first)
		}
		t.Columns = append(t.Columns, "best", "best / next")
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
			best, next := bestTwo(medians, checks, s.metricOf(k).Direction)
			if best < 0 || next < 0 {
				row.Cells = append(row.Cells, Cell{Missing: true}, Cell{Missing: true})
			} else {
				row.Cells = append(row.Cells, section.TextCell(g.Values[best]),
					d.throughputCell(s[g.Targets[next]][k], s[g.Targets[best]][k], g.Targets[next], g.Targets[best], k, opt))
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out
}

// bestTwo are the indexes of the best and the next best of medians in the
// metric's direction, among the values the server ran; -1 when there are
// not two.
func bestTwo(medians []float64, checks []spec.SettingCheck, dir analysis.Direction) (best, next int) {
	best, next = -1, -1
	better := func(a, b float64) bool {
		if dir == analysis.LowerIsBetter {
			return a < b
		}
		return a > b
	}
	for i, m := range medians {
		if math.IsNaN(m) || checks[i].Outcome != spec.SettingTook {
			continue
		}
		switch {
		case best < 0 || better(m, medians[best]):
			best, next = i, best
		case next < 0 || better(m, medians[next]):
			next = i
		}
	}
	return best, next
}

// sweepChecks reads back, for each value of sweep g, whether the server
// ran it: the setting asked (the run's target settings) against the
// settings the engine reported once started (the run's manifest), as the
// runner checked it (spec.CheckSetting); SettingTook where no run says
// (memory and cpus sweeps, runs stored before the engine reported its
// settings).
func sweepChecks(d *Data, g spec.SweepGroup) []spec.SettingCheck {
	out := make([]spec.SettingCheck, len(g.Targets))
	for i, tg := range g.Targets {
		out[i] = spec.SettingCheck{Setting: g.Setting, Asked: g.Values[i]}
		w := spec.Swept{Of: g.Of, Setting: g.Setting, Value: g.Values[i]}
		if !w.SweepsSetting() {
			continue
		}
		for _, run := range d.Runs {
			if run.Target != tg {
				continue
			}
			m := store.ParseManifest(run.Manifest)
			if len(m.Engine.Settings) == 0 {
				continue
			}
			out[i] = spec.CheckSetting(g.Setting, w.Asked(m.Target.Settings), m.Engine.Settings, m.Engine.SettingUnits)
			break
		}
	}
	return out
}

// sweepNotes say which swept values the server did not run, and what it
// ran instead.
func sweepNotes(d *Data) []string {
	var out []string
	for _, g := range sweepsOf(d) {
		for i, c := range sweepChecks(d, g) {
			if c.Outcome != spec.SettingTook {
				out = append(out, "sweep of "+g.Setting+" on "+g.Of+": "+g.Targets[i]+": "+c.String()+
					"; its column measures that, and the best value is picked without it")
			}
		}
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
