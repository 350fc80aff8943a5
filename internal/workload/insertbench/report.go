package insertbench

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

func init() { section.Register(Suite{}.Name(), Suite{}) }

// The Insert Benchmark's report (docs/method.md 1.11-1.13): a summary table of
// each step's rate per target with its colouring rule, the same relative to
// the base, the background insert rates against their SLA, rows per query,
// response-time buckets per operation type, per-second rate low-watermarks
// and the per-operation efficiency with 1.12's denominators.

// ibSteps holds one experiment's Insert Benchmark results: per target, step
// and role, the results of every repeat; steps in run order.
type ibSteps struct {
	steps []string
	res   map[string]map[string]map[string][]store.Result
}

func loadIB(in *section.Input) ibSteps {
	ib := ibSteps{res: map[string]map[string]map[string][]store.Result{}}
	seq := map[string]int{}
	for _, run := range in.Runs {
		for _, r := range in.Results[run.ID] {
			if r.Action || r.Status != store.StatusOK {
				continue
			}
			if _, ok := seq[r.Test]; !ok {
				seq[r.Test] = r.Seq
				ib.steps = append(ib.steps, r.Test)
			}
			seq[r.Test] = min(seq[r.Test], r.Seq)
			if ib.res[run.Target] == nil {
				ib.res[run.Target] = map[string]map[string][]store.Result{}
			}
			if ib.res[run.Target][r.Test] == nil {
				ib.res[run.Target][r.Test] = map[string][]store.Result{}
			}
			ib.res[run.Target][r.Test][r.Role.Name] = append(ib.res[run.Target][r.Test][r.Role.Name], r)
		}
	}
	sort.SliceStable(ib.steps, func(i, j int) bool { return seq[ib.steps[i]] < seq[ib.steps[j]] })
	return ib
}

func isQueryStep(step string) bool {
	return strings.HasPrefix(step, "qr") || strings.HasPrefix(step, "qp")
}

// headline is the role whose rate a step reports: inserts for the load
// steps (indexed rows for l.x), queries for the read-write steps.
func headline(step string) string {
	switch {
	case step == "l.x":
		return "index"
	case isQueryStep(step):
		return "query"
	}
	return "insert"
}

func (ib ibSteps) role(target, step, role string) []store.Result { return ib.res[target][step][role] }

func (ib ibSteps) rate(target, step string) []float64 {
	return section.Values(ib.role(target, step, headline(step)), func(r store.Result) float64 { return r.Throughput() })
}

// sla reports whether target's background inserts of a query step reached
// 95% of their target rate (median over repeats), and the figures.
func (ib ibSteps) sla(target, step string) (met bool, ips, want float64, ok bool) {
	rs := ib.role(target, step, "insert")
	if len(rs) == 0 {
		return false, 0, 0, false
	}
	ips = section.Median(rs, func(r store.Result) float64 { return r.Throughput() })
	want = rs[0].Role.TargetRate
	return want <= 0 || ips >= SLA*want, ips, want, true
}

func (ib ibSteps) queryStepsOf() []string {
	var out []string
	for _, s := range ib.steps {
		if isQueryStep(s) {
			out = append(out, s)
		}
	}
	return out
}

// ReportSections gives the report the Insert Benchmark's tables in place
// of the generic ones, and a note for each missed SLA.
func (Suite) ReportSections(in *section.Input) section.Sections {
	tables, notes := insertTables(in)
	return section.Sections{Tables: tables, Notes: notes, Replace: true}
}

// ReportCharts gives the HTML report the background insert charts.
func (Suite) ReportCharts(in *section.Input) []section.Chart { return insertCharts(in) }

// insertTables builds the Insert Benchmark's tables.
func insertTables(in *section.Input) ([]section.Table, []string) {
	ib := loadIB(in)
	targets := in.Targets
	var tables []section.Table
	tables = append(tables, ibSummary(ib, targets))
	if len(targets) > 1 {
		tables = append(tables, ibRelative(in, ib, targets))
	}
	if qs := ib.queryStepsOf(); len(qs) > 0 {
		tables = append(tables, ibInsertRates(ib, targets, qs), ibRowsPerQuery(ib, targets, qs))
	}
	tables = append(tables, ibResponseTimes(ib, targets)...)
	tables = append(tables, ibRatePercentiles(ib, targets))
	if t, ok := ibEfficiency(ib, targets); ok {
		tables = append(tables, t)
	}
	var notes []string
	for _, t := range targets {
		for _, s := range ib.queryStepsOf() {
			if met, ips, want, ok := ib.sla(t, s); ok && !met {
				notes = append(notes, fmt.Sprintf("SLA missed: %s on %s inserted %.0f rows/s in the background, below 95%% of the %.0f target",
					s, t, ips, want))
			}
		}
	}
	return tables, notes
}

// ibSummary is tput.tab: rows are targets, columns the steps. Per column,
// with gap = (max - min)/4 where max counts only targets that met the SLA:
// red at or below min + gap (not when min >= 0.8 max), grey when the SLA
// failed, green at or above max - gap.
func ibSummary(ib ibSteps, targets []string) section.Table {
	t := section.Table{Title: "Insert Benchmark summary: throughput per step",
		Legend: "l.i0, l.i1, l.i2: inserted rows/s; l.x: indexed rows/s; qr*, qp*: queries/s; median over repeats. " +
			"Per column (docs/method.md 1.13): - red at or below min + (max-min)/4, + green at or above max - (max-min)/4 " +
			"(max over targets that met the SLA), x grey: the SLA was missed; no red when min >= 0.8 max",
		Columns: ib.steps}
	for _, tg := range targets {
		t.Rows = append(t.Rows, section.Row{Label: tg})
	}
	for _, s := range ib.steps {
		vals := make([]float64, len(targets))
		met := make([]bool, len(targets))
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, tg := range targets {
			vals[i] = analysis.Median(ib.rate(tg, s))
			met[i] = true
			if isQueryStep(s) {
				met[i], _, _, _ = ib.sla(tg, s)
			}
			if math.IsNaN(vals[i]) {
				continue
			}
			lo = min(lo, vals[i])
			if met[i] {
				hi = max(hi, vals[i])
			}
		}
		gap := (hi - lo) / 4
		top, bottom := hi-gap, lo+gap
		if lo >= 0.8*hi {
			bottom = math.Inf(-1)
		}
		for i := range targets {
			c := section.NumberCell(vals[i])
			if !c.Missing && len(targets) > 1 {
				switch {
				case vals[i] <= bottom:
					c.Tone = section.ToneBad
				case !met[i]:
					c.Tone = section.ToneIgnore
				case vals[i] >= top && gap > 0:
					c.Tone = section.ToneGood
				}
			} else if !c.Missing && !met[i] {
				c.Tone = section.ToneIgnore
			}
			t.Rows[i].Cells = append(t.Rows[i].Cells, c)
		}
	}
	return t
}

// ibRelative is tputr.tab: every target's rate over the base's, each cell
// judged with the evidence at hand (section.Data.ThroughputCell). It is the
// report's relative table (section.Table.Relative): titled after its steps'
// metrics (IPS for the load steps, QPS for the query steps) and marked for
// their direction.
func ibRelative(in *section.Input, ib ibSteps, targets []string) section.Table {
	var lower []string
	for _, s := range ib.steps {
		if ib.metricOf(targets, s).Direction == analysis.LowerIsBetter {
			lower = append(lower, s)
		}
	}
	t := section.Table{Title: ibRelativeTitle(ib, targets),
		Legend: "2 decimals; " + section.RelativeMarks(ib.steps, lower) + ", when a single run per target " +
			"has no noise history; otherwise " + section.VerdictLegend(ib.steps, lower) + ", resting on the repeats, " +
			"their within-run variance or the host's noise history (a cell's detail names its evidence)",
		Columns: ib.steps, Relative: true}
	for _, tg := range targets[1:] {
		row := section.Row{Label: tg}
		for _, s := range ib.steps {
			h := headline(s)
			row.Cells = append(row.Cells, in.Compare(ib.role(targets[0], s, h), ib.role(tg, s, h), targets[0], tg))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// metricOf is the metric step's headline role reports (its first result's
// on any target), QPS when none ran.
func (ib ibSteps) metricOf(targets []string, step string) metric.Metric {
	for _, tg := range targets {
		if rs := ib.role(tg, step, headline(step)); len(rs) > 0 {
			return metric.Of(rs[0].Metric)
		}
	}
	return metric.QPS
}

// ibRelativeTitle names what the relative table's ratios are, per metric
// of its steps: "Insert Benchmark relative throughput: IPS(target) /
// IPS(base) for l.i0, l.x; QPS(target) / QPS(base) for qp100".
func ibRelativeTitle(ib ibSteps, targets []string) string {
	var ms []metric.Metric
	stepsOf := map[string][]string{}
	quantity := ""
	for _, s := range ib.steps {
		m := ib.metricOf(targets, s)
		if _, ok := stepsOf[m.Name]; !ok {
			ms = append(ms, m)
		}
		stepsOf[m.Name] = append(stepsOf[m.Name], s)
		switch q := m.QuantityOf(); {
		case quantity == "":
			quantity = q
		case quantity != q:
			quantity = "values"
		}
	}
	var parts []string
	for _, m := range ms {
		part := m.SymbolOf() + "(target) / " + m.SymbolOf() + "(" + targets[0] + ")"
		if len(ms) > 1 {
			part += " for " + strings.Join(stepsOf[m.Name], ", ")
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "Insert Benchmark relative throughput: target / " + targets[0]
	}
	return "Insert Benchmark relative " + quantity + ": " + strings.Join(parts, "; ")
}

// ibInsertRates is iput.tab: the background inserts/s of each query step,
// red when below 95% of the target (the SLA failed), and the target row.
func ibInsertRates(ib ibSteps, targets, qsteps []string) section.Table {
	t := section.Table{Title: "Insert Benchmark background insert rate and SLA",
		Legend: "inserted rows/s of the background writers over the whole step (median over repeats); " +
			"- red: below 95% of the target, the SLA failed; the target row is clients x rate", Columns: qsteps}
	want := make([]float64, len(qsteps))
	for _, tg := range targets {
		row := section.Row{Label: tg}
		for i, s := range qsteps {
			met, ips, w, ok := ib.sla(tg, s)
			if !ok {
				row.Cells = append(row.Cells, section.Cell{Missing: true})
				continue
			}
			want[i] = max(want[i], w)
			c := section.NumberCell(ips)
			if !met {
				c.Tone = section.ToneBad
			}
			row.Cells = append(row.Cells, c)
		}
		t.Rows = append(t.Rows, row)
	}
	row := section.Row{Label: "target"}
	for _, w := range want {
		c := section.NumberCell(w)
		c.Tone = section.ToneMuted
		row.Cells = append(row.Cells, c)
	}
	t.Rows = append(t.Rows, row)
	return t
}

// ibRowsPerQuery is the original client's "fetched/query": rows returned
// per query against the 10 expected.
func ibRowsPerQuery(ib ibSteps, targets, qsteps []string) section.Table {
	t := section.Table{Title: "Insert Benchmark rows fetched per query",
		Legend: "expected 10 for range queries; point queries pick ids between the delete frontier and the newest id, " +
			"so a few race the deleter, and on PostgreSQL the sequence cache of 1000 leaves a gap of ids per connection " +
			"(visible in small runs), as with the original client",
		Columns: qsteps}
	for _, tg := range targets {
		row := section.Row{Label: tg}
		for _, s := range qsteps {
			row.Cells = append(row.Cells, section.NumberCell(section.Median(ib.role(tg, s, "query"), func(r store.Result) float64 {
				if r.Events == 0 {
					return math.NaN()
				}
				return float64(r.Rows) / float64(r.Events)
			})))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// insertCharts draws, for each query step, every target's background
// inserts per second against the target rate (the SLA line at 95%), from
// each target's first repeat.
func insertCharts(in *section.Input) []section.Chart {
	ib := loadIB(in)
	var out []section.Chart
	for _, step := range ib.queryStepsOf() {
		o := section.BaseOption("Background inserts per second: "+step, "second of the step", "inserted rows per second")
		o["xAxis"].(map[string]any)["type"] = "value"
		var series []any
		want := 0.0
		for _, t := range in.Targets {
			rs := ib.role(t, step, "insert")
			if len(rs) == 0 {
				continue
			}
			want = max(want, rs[0].Role.TargetRate)
			var pts []any
			for _, iv := range section.Downsample(rs[0].Intervals) {
				if iv.Sec >= 0 {
					pts = append(pts, []any{iv.Sec, section.Num(section.IntervalRate(rs[0], iv))})
				}
			}
			series = append(series, map[string]any{"name": t, "type": "line", "showSymbol": len(pts) <= 30, "data": pts})
		}
		if len(series) == 0 {
			continue
		}
		if want > 0 {
			series[0].(map[string]any)["markLine"] = map[string]any{"silent": true, "symbol": "none",
				"data": []any{
					map[string]any{"yAxis": want, "label": map[string]any{"formatter": "target"}},
					map[string]any{"yAxis": SLA * want, "label": map[string]any{"formatter": "SLA (95%)"},
						"lineStyle": map[string]any{"type": "dashed"}},
				}}
		}
		o["series"] = series
		out = append(out, section.Chart{Title: "background inserts", Height: 300, Option: o})
	}
	return out
}
