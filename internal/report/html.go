package report

import (
	"benchlab/internal/report/section"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/store"
)

// echartsJS is Apache ECharts 5.6.0 (dist/echarts.min.js from the npm
// registry, Apache-2.0, see assets/ECHARTS-LICENSE), inlined into every HTML
// report so that it opens offline.
//
//go:embed assets/echarts.min.js
var echartsJS string

// htmlCell is a table cell as the template shows it.
type htmlCell struct {
	Text  string
	Class string
	Title string
}

type htmlRow struct {
	Group string
	Label string
	Cells []htmlCell
}

type htmlTable struct {
	Title, Legend string
	Columns       []string
	Rows          []htmlRow
}

type htmlChart struct {
	ID, Title string
	Height    int
}

// htmlConvention is the colour convention of one direction of the
// relative tables' rows: the ratios that are better and worse than the base.
type htmlConvention struct {
	Where, Better, Worse string
}

// conventionsOf are the colour conventions of the directions d's rows
// have: more is better (1.05 and up green), less is better (0.95 and down
// green), or both, each saying where it applies.
func conventionsOf(d *Data) []htmlConvention {
	s, keys, _ := d.samples()
	more := htmlConvention{Better: "1.05+", Worse: "0.95-"}
	less := htmlConvention{Where: "lower is better: ", Better: "0.95-", Worse: "1.05+"}
	lower := lowerIsBetterTests(s, keys)
	switch {
	case len(lower) == 0:
		return []htmlConvention{more}
	case len(lower) == len(uniqueTests(keys)):
		return []htmlConvention{less}
	}
	more.Where = "where more is better, "
	less.Where = "where lower is better (" + strings.Join(lower, ", ") + "), "
	return []htmlConvention{more, less}
}

type htmlManifest struct {
	Label, JSON string
}

type htmlPage struct {
	Title    string
	Summary  []string
	Header   []string
	Relative []htmlTable
	// Conventions say which ratios the relative tables colour better and
	// worse, per direction of their rows' metrics.
	Conventions []htmlConvention
	Charts      []htmlChart
	Tables      []htmlTable
	Notes       []string
	Manifests   []htmlManifest
	// Flames are the CPU flame graphs of profiled steps (run --profile).
	Flames []htmlFlame
	// Options holds every chart's ECharts option as JSON (escaped by
	// encoding/json, so no "<" can close the script element).
	Options template.JS
	ECharts template.JS
}

// WriteHTML renders r, with charts drawn from d, as one self-contained HTML
// page: the chart library is inlined, nothing is fetched when it opens, and
// the tables are plain HTML that reads without JavaScript. Everything taken
// from the store is escaped by html/template or encoding/json.
func WriteHTML(w io.Writer, d *Data, r *Report) error {
	page := htmlPage{Title: r.Title, Summary: r.Summary, Header: r.Header, Notes: uniqueNotes(r.Notes), ECharts: template.JS(echartsJS),
		Conventions: conventionsOf(d)}
	for _, t := range r.Tables {
		ht := toHTMLTable(t)
		if t.Relative {
			page.Relative = append(page.Relative, ht)
		} else {
			page.Tables = append(page.Tables, ht)
		}
	}
	options := map[string]any{}
	for i, c := range buildCharts(d) {
		id := fmt.Sprintf("chart%d", i)
		c.chart.ID = id
		page.Charts = append(page.Charts, c.chart)
		options[id] = c.option
	}
	opts, err := json.Marshal(options)
	if err != nil {
		return fmt.Errorf("html report: chart data: %w", err)
	}
	page.Options = template.JS(opts)
	page.Flames = flamesOf(d)
	for _, run := range d.Runs {
		var pretty strings.Builder
		var v any
		if json.Unmarshal([]byte(run.Manifest), &v) == nil {
			b, _ := json.MarshalIndent(v, "", "  ")
			pretty.Write(b)
		} else {
			pretty.WriteString(run.Manifest)
		}
		page.Manifests = append(page.Manifests, htmlManifest{
			Label: fmt.Sprintf("run %d: %s, repeat %d, %s, %s", run.ID, run.Target, run.Repeat, run.Status,
				run.Ended.Sub(run.Started).Round(1e9)),
			JSON: pretty.String(),
		})
	}
	return pageTemplate.Execute(w, page)
}

func toHTMLTable(t Table) htmlTable {
	ht := htmlTable{Title: t.Title, Legend: t.Legend, Columns: t.Columns}
	for _, r := range t.Rows {
		hr := htmlRow{Group: r.Group, Label: r.Label}
		for _, c := range r.Cells {
			hc := htmlCell{Text: strings.TrimSpace(plain(c)), Title: c.Detail}
			if c.Kind == Ratio && !c.Missing {
				switch c.Band {
				case analysis.Better:
					hc.Class = "better"
				case analysis.Worse:
					hc.Class = "worse"
				default:
					hc.Class = "neutral"
				}
			}
			if c.Kind != Ratio && !c.Missing {
				switch c.Tone {
				case ToneGood:
					hc.Class = "better"
				case ToneBad:
					hc.Class = "worse"
				case ToneIgnore, ToneMuted:
					hc.Class = "neutral"
				}
			}
			if c.Kind != Text {
				hc.Class += " num"
			}
			hr.Cells = append(hr.Cells, hc)
		}
		ht.Rows = append(ht.Rows, hr)
	}
	return ht
}

type chartDef struct {
	chart  htmlChart
	option map[string]any
}

// buildCharts makes the charts of METHOD.md-style reports: relative
// throughput per group, throughput per second, throughput against threads,
// box plots of the steady part, CPU per operation against the base, and
// latency percentiles.
func buildCharts(d *Data) []chartDef {
	s, keys, groups := d.samples()
	targets := d.targets()
	var out []chartDef
	label, threadCounts := labeler(keys)
	tput := func(r store.Result) float64 { return r.Throughput() }
	var groupNames []string
	byGroup := map[string][]cellKey{}
	for _, k := range keys {
		g := groups[k]
		if _, ok := byGroup[g]; !ok {
			groupNames = append(groupNames, g)
		}
		byGroup[g] = append(byGroup[g], k)
	}
	// Relative throughput (or the group's metrics' quantity) per group, one
	// bar per non-base target.
	if len(targets) > 1 {
		for _, g := range groupNames {
			q := orDefault(quantityOf(s, byGroup[g]), "values")
			o := section.BaseOption("Relative "+q+": "+orDefault(g, "tests")+" (target / "+targets[0]+")",
				"test", "relative "+q+" (1 = base)")
			var cats []string
			for _, k := range byGroup[g] {
				cats = append(cats, label(k))
			}
			categoryAxis(o, cats, 30)
			var series []any
			for ti, t := range targets[1:] {
				var vals []any
				for _, k := range byGroup[g] {
					vals = append(vals, section.Num(analysis.Ratio(analysis.Median(section.Values(s[t][k], tput)),
						analysis.Median(section.Values(s[targets[0]][k], tput)))))
				}
				ser := map[string]any{"name": t, "type": "bar", "data": vals}
				if ti == 0 {
					ser["markLine"] = map[string]any{"silent": true, "symbol": "none",
						"label": map[string]any{"formatter": targets[0]},
						"data":  []any{map[string]any{"yAxis": 1}}}
				}
				series = append(series, ser)
			}
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "relative " + q, Height: 380}, o})
		}
	}
	// Throughput per second, all targets of a test on one chart (first
	// repeat); seconds before 0 are warm-up and are shaded.
	for _, k := range keys {
		o := section.BaseOption("Throughput per second: "+label(k), "second of the step (shaded: warm-up)", unitOf(s, k)+" per second")
		o["xAxis"].(map[string]any)["type"] = "value"
		var series []any
		first := 0
		for _, t := range targets {
			rs := s[t][k]
			if len(rs) == 0 {
				continue
			}
			var pts []any
			for _, iv := range section.Downsample(rs[0].Intervals) {
				first = min(first, iv.Sec)
				pts = append(pts, []any{iv.Sec, section.Num(section.IntervalRate(rs[0], iv))})
			}
			// Dots only for short series, where single seconds matter.
			series = append(series, map[string]any{"name": t, "type": "line", "showSymbol": len(pts) <= 30, "data": pts})
		}
		if first < 0 && len(series) > 0 {
			series[0].(map[string]any)["markArea"] = warmupArea(first)
		}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "per second", Height: 300}, o})
	}
	out = append(out, speedCharts(keys, targets, s, label)...)
	// Throughput against thread count.
	if len(threadCounts) > 1 {
		tests := map[string][]cellKey{}
		var names []string
		for _, k := range keys {
			if _, ok := tests[k.test]; !ok {
				names = append(names, k.test)
			}
			tests[k.test] = append(tests[k.test], k)
		}
		for _, name := range names {
			if len(tests[name]) < 2 {
				continue // this test ran at one thread count only
			}
			// The axis is the test's headline metric: throughput, or
			// connect's latency.
			m := s.metricOf(tests[name][0])
			q := m.QuantityOf()
			o := section.BaseOption(strings.ToUpper(q[:1])+q[1:]+" against threads: "+name, "threads (log 2 scale)", m.Unit+" (median over repeats)")
			lo, hi := tests[name][0].threads, tests[name][len(tests[name])-1].threads
			x := o["xAxis"].(map[string]any)
			x["type"], x["logBase"], x["min"], x["max"] = "log", 2, lo, hi
			var series []any
			for _, t := range targets {
				var pts []any
				for _, k := range tests[name] {
					pts = append(pts, []any{k.threads, section.Num(analysis.Median(section.Values(s[t][k], tput)))})
				}
				series = append(series, map[string]any{"name": t, "type": "line", "data": pts})
			}
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "threads", Height: 300}, o})
		}
	}
	out = append(out, sweepCharts(d, keys, s, label)...)
	// Box plots of per-second throughput over the last half of each run.
	for _, k := range keys {
		o := section.BaseOption("Per-second throughput, last half of the measured time: "+label(k), "target", unitOf(s, k)+" per second")
		o["tooltip"] = map[string]any{"trigger": "item"}
		o["xAxis"].(map[string]any)["type"] = "category"
		o["xAxis"].(map[string]any)["data"] = targets
		var boxes []any
		for _, t := range targets {
			var xs []float64
			for _, r := range s[t][k] {
				var measured []store.Interval
				for _, iv := range r.Intervals {
					if iv.Sec >= 0 && iv.Seconds >= 0.5 {
						measured = append(measured, iv)
					}
				}
				for _, iv := range measured[len(measured)/2:] {
					xs = append(xs, section.IntervalRate(r, iv))
				}
			}
			boxes = append(boxes, fiveNumbers(xs))
		}
		o["series"] = []any{map[string]any{"name": "per-second throughput", "type": "boxplot", "data": boxes}}
		out = append(out, chartDef{htmlChart{Title: "box plot", Height: 300}, o})
	}
	// Cost per operation relative to the base (METHOD.md 2.7, sum_met.sh's
	// relative block), one chart per cost, only for costs that were measured.
	if len(targets) > 1 {
		var cats []string
		for _, k := range keys {
			cats = append(cats, label(k))
		}
		for _, m := range effMetrics {
			if !effCharted[m.column] {
				continue
			}
			series, measured := effRelative(s, keys, targets, m.value)
			if !measured {
				continue
			}
			o := section.BaseOption("Relative "+m.column+" (target / "+targets[0]+"): lower is better",
				"test", "relative "+m.column+" (1 = base)")
			categoryAxis(o, cats, 45)
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "efficiency", Height: 420}, o})
		}
	}
	// Latency percentiles per test (median over repeats), log scale.
	for _, g := range groupNames {
		o := section.BaseOption("Latency per event: "+orDefault(g, "tests")+" (p50 and p99)", "test", "milliseconds (log scale)")
		o["yAxis"].(map[string]any)["type"] = "log"
		var cats []string
		for _, k := range byGroup[g] {
			cats = append(cats, label(k))
		}
		categoryAxis(o, cats, 30)
		var series []any
		lowest := math.Inf(1)
		for ti, t := range targets {
			colour := section.Colour(ti)
			for qi, q := range []struct {
				name string
				f    func(store.Result) float64
			}{
				{"p50", func(r store.Result) float64 { return latencyMS(r.Latency.P50) }},
				{"p99", func(r store.Result) float64 { return latencyMS(r.Latency.P99) }},
			} {
				var vals []any
				for _, k := range byGroup[g] {
					v := analysis.Median(section.Values(s[t][k], q.f))
					if v > 0 {
						lowest = min(lowest, v)
					}
					vals = append(vals, section.Num(v))
				}
				// A target keeps its colour; p99 is the paler bar with a border.
				style := map[string]any{"color": colour, "borderColor": colour}
				if qi == 1 {
					style["opacity"] = 0.45
				}
				series = append(series, map[string]any{"name": t + " " + q.name, "type": "bar", "data": vals, "itemStyle": style})
			}
		}
		// Bars on a log axis grow from its start value (1 by default), so
		// start it at the power of 10 below the smallest latency.
		if !math.IsInf(lowest, 1) {
			o["yAxis"].(map[string]any)["startValue"] = math.Pow(10, math.Floor(math.Log10(lowest)))
		}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "latency", Height: 380}, o})
	}
	for _, c := range chartsOf(d) {
		out = append(out, chartDef{htmlChart{Title: c.Title, Height: c.Height}, c.Option})
	}
	return out
}

// unitOf names what a row's per-second charts count.
func unitOf(s samples, k cellKey) string {
	for _, byKey := range s {
		for _, r := range byKey[k] {
			return metric.Of(r.Metric).SeriesUnit
		}
	}
	return metric.QPS.SeriesUnit
}

// categoryAxis makes o's x axis a category axis of cats with labels turned by
// rotate degrees, and moves the axis name below the longest turned label so
// the two do not overlap.
func categoryAxis(o map[string]any, cats []string, rotate float64) {
	longest := 0
	for _, c := range cats {
		longest = max(longest, utf8.RuneCountInString(c))
	}
	gap := min(20+int(float64(longest)*6.5*math.Sin(rotate*math.Pi/180)), 160)
	x := o["xAxis"].(map[string]any)
	x["type"], x["data"], x["nameGap"] = "category", cats, gap
	x["axisLabel"] = map[string]any{"rotate": rotate}
	o["grid"].(map[string]any)["bottom"] = gap + 20
}

// effCharted names the per-operation costs drawn relative to the base; the
// issue asks for CPU and KB per operation, the tables hold the rest.
var effCharted = map[string]bool{"cpu us/op total": true, "KB read/op": true, "KB written/op": true}

// effRelative returns one bar series per non-base target of the ratio of a
// cost per operation to the base's (medians over repeats), and whether any
// ratio could be computed: results without efficiency figures give none.
func effRelative(s samples, keys []cellKey, targets []string, f func(store.Result) float64) ([]any, bool) {
	measured := false
	var series []any
	for _, t := range targets[1:] {
		var vals []any
		for _, k := range keys {
			base, bc := effValues(s[targets[0]][k], f)
			other, oc := effValues(s[t][k], f)
			if bc != nil || oc != nil {
				vals = append(vals, nil)
				continue
			}
			v := analysis.Ratio(analysis.Median(other), analysis.Median(base))
			measured = measured || !math.IsNaN(v)
			vals = append(vals, section.Num(v))
		}
		series = append(series, map[string]any{"name": t, "type": "bar", "data": vals})
	}
	return series, measured
}

// warmupArea shades the warm-up seconds, from first (negative) to 0.
func warmupArea(first int) map[string]any {
	return map[string]any{
		"silent":    true,
		"itemStyle": map[string]any{"color": "rgba(120, 120, 120, 0.15)"},
		"label":     map[string]any{"position": "insideTop", "color": "#555"},
		"data":      []any{[]any{map[string]any{"name": "warm-up", "xAxis": first}, map[string]any{"xAxis": 0}}},
	}
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// fiveNumbers returns min, lower quartile, median, upper quartile and max.
func fiveNumbers(xs []float64) []any {
	if len(xs) == 0 {
		return []any{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		pos := p * float64(len(s)-1)
		lo := int(math.Floor(pos))
		hi := int(math.Ceil(pos))
		return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
	}
	return []any{section.Num(s[0]), section.Num(q(0.25)), section.Num(q(0.5)), section.Num(q(0.75)), section.Num(s[len(s)-1])}
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
svg.flame { display: block; margin: 8px 0 16px; } svg.flame text { fill: #111; pointer-events: none; } svg.flame rect:hover { stroke: #000; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.group td { background: #fafafa; font-weight: 600; }
/* Tints of Okabe and Ito's bluish green and vermillion, which colour-blind
   readers still tell apart (by lightness too); the sign repeats the verdict. */
.better { background: #a9dcc8; } .worse { background: #f5b48f; } .neutral { color: #555; background: #eee; }
.swatch { padding: 1px 6px; border: 1px solid #ccc; font-variant-numeric: tabular-nums; }
.legend { color: #555; font-size: 13px; }
.chart { width: 100%; max-width: 1100px; margin: 8px 0 24px; }
pre { background: #f6f6f6; padding: 8px; overflow: auto; font-size: 12px; }
ul.header li { margin: 2px 0; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Summary}}<section class="summary"><h2>Summary</h2><ul>{{range .Summary}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
<ul class="header">{{range .Header}}<li>{{.}}</li>{{end}}</ul>
{{define "table"}}<h2>{{.Title}}</h2>{{if .Legend}}<p class="legend">{{.Legend}}</p>{{end}}
<table><thead><tr><th>test</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{$g := ""}}{{range .Rows}}{{if and .Group (ne .Group $g)}}{{$g = .Group}}<tr class="group"><td colspan="99">{{.Group}}</td></tr>{{end}}<tr><td>{{.Label}}</td>{{range .Cells}}<td class="{{.Class}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{range .Relative}}{{template "table" .}}{{end}}
<p class="legend">Colour convention: {{range $i, $c := .Conventions}}{{if $i}}; {{end}}{{$c.Where}}<span class="swatch better">{{$c.Better}}</span> green with + is better than the base,
<span class="swatch worse">{{$c.Worse}}</span> red (vermillion) with - is worse{{end}}; <span class="swatch neutral">1.00</span> grey is within
the band (or not significant when repeats allow a test). The colours come from Okabe and Ito's colour-blind-safe palette and
the sign repeats the verdict, so the table reads without telling colours apart.</p>
<h2>Charts</h2>
<noscript><p>The charts need JavaScript; every number is also in the tables.</p></noscript>
{{range .Charts}}<div class="chart" id="{{.ID}}" style="height: {{.Height}}px" role="img" aria-label="{{.Title}}"></div>
{{end}}
{{range .Tables}}{{template "table" .}}{{end}}
{{if .Flames}}<h2>CPU flame graphs</h2>
<p>Call stacks sampled over each step's measured part (run --profile), callers above callees; a frame's width is its share
of the samples. Hover a frame for its name and samples.</p>
{{range .Flames}}<details><summary>{{.Title}}</summary>{{.SVG}}</details>
{{end}}{{end}}
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Manifests</h2>
{{range .Manifests}}<details><summary>{{.Label}}</summary><pre>{{.JSON}}</pre></details>
{{end}}
<script>{{.ECharts}}</script>
<script type="application/json" id="chart-options">{{.Options}}</script>
<script>
(function () {
  var options = JSON.parse(document.getElementById("chart-options").textContent);
  Object.keys(options).forEach(function (id) {
    var el = document.getElementById(id);
    if (!el) { return; }
    echarts.init(el, null, { renderer: "canvas" }).setOption(options[id]);
  });
})();
</script>
</body>
</html>
`))

// speedCharts draws, for each test whose first repeats have per-second CPU
// speed (the speed probes' mean rate in each second), that speed against
// the second, as a share of the median second of all the targets drawn:
// a dip in throughput that the CPU speed shares came from the machine
// (the host slowed its CPUs), not the database.
func speedCharts(keys []cellKey, targets []string, s samples, label func(cellKey) string) []chartDef {
	var out []chartDef
	for _, k := range keys {
		pts := map[string][][2]float64{}
		var all []float64
		for _, t := range targets {
			rs := s[t][k]
			if len(rs) == 0 {
				continue
			}
			pts[t] = secondSpeeds(rs[0].Intervals)
			for _, p := range pts[t] {
				all = append(all, p[1])
			}
		}
		if len(all) == 0 {
			continue
		}
		med := analysis.Median(all)
		o := section.BaseOption("CPU speed per second: "+label(k)+" (the speed probes' rate / the median second's)",
			"second of the step", "CPU speed (1 = median second)")
		o["xAxis"].(map[string]any)["type"] = "value"
		o["yAxis"].(map[string]any)["scale"] = true
		var series []any
		for _, t := range targets {
			if len(pts[t]) == 0 {
				continue
			}
			var data []any
			for _, p := range pts[t] {
				data = append(data, []any{p[0], section.Num(p[1] / med)})
			}
			series = append(series, map[string]any{"name": t, "type": "line", "showSymbol": len(data) <= 30, "data": data})
		}
		series[0].(map[string]any)["markLine"] = map[string]any{"silent": true, "symbol": "none",
			"label": map[string]any{"formatter": fmt.Sprintf("slow below x%.2f", noise.SlowCPUFactor)},
			"data":  []any{map[string]any{"yAxis": noise.SlowCPUFactor}}}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "CPU speed", Height: 260}, o})
	}
	return out
}

// secondSpeeds are the measured seconds of ivs that have a CPU speed, as
// (second, speed) pairs; a long series is averaged down to
// section.MaxSeriesPoints points.
func secondSpeeds(ivs []store.Interval) [][2]float64 {
	var pts [][2]float64
	for _, iv := range ivs {
		if iv.Sec >= 0 && iv.Load != nil && iv.Load.CPUSpeed > 0 {
			pts = append(pts, [2]float64{float64(iv.Sec), iv.Load.CPUSpeed})
		}
	}
	if len(pts) <= section.MaxSeriesPoints {
		return pts
	}
	step := (len(pts) + section.MaxSeriesPoints - 1) / section.MaxSeriesPoints
	var out [][2]float64
	for i := 0; i < len(pts); i += step {
		group := pts[i:min(i+step, len(pts))]
		var sum float64
		for _, p := range group {
			sum += p[1]
		}
		out = append(out, [2]float64{group[0][0], sum / float64(len(group))})
	}
	return out
}
