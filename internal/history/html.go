package history

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report"
)

// chartColours are Okabe and Ito's colour-blind-safe blue, vermillion and
// grey, as the report's charts use them.
var chartColours = []string{"#0072B2", "#D55E00", "#999999"}

// changed says whether a series has something to draw: a change point, or
// a newest point called slower or faster.
func changed(s Series) bool {
	o := s.Judged.Newest.Outcome
	return len(s.Judged.ChangePoints) > 0 || (len(s.Points) > 1 && (o == analysis.Slower || o == analysis.Faster))
}

// chartOption is one changed series as an ECharts line chart: each point's
// value over its experiments, the runs as dots, a vertical line at each
// change point and the newest point marked when it was called.
func chartOption(s Series) map[string]any {
	h := s.Judged
	var cats []string
	var line, dots []any
	for i, p := range s.Points {
		cats = append(cats, fmt.Sprintf("#%d %s", p.Experiment.ID, p.Experiment.Created.UTC().Format("01-02")))
		line = append(line, jsonNum(h.Values[i]))
		for _, r := range p.Runs {
			dots = append(dots, []any{cats[i], jsonNum(r.Throughput())})
		}
	}
	var marks []any
	for _, c := range h.ChangePoints {
		marks = append(marks, map[string]any{"xAxis": cats[c.Index], "name": fmt.Sprintf("%+.1f%%", c.ForwardChangePercent)})
	}
	lineSeries := map[string]any{"name": "experiment (geometric mean)", "type": "line", "data": line, "symbolSize": 7,
		"markLine": map[string]any{"symbol": "none", "data": marks, "lineStyle": map[string]any{"color": chartColours[1], "type": "dashed"},
			"label": map[string]any{"formatter": "{b}"}}}
	if v := h.Newest; len(s.Points) > 1 && (v.Outcome == analysis.Slower || v.Outcome == analysis.Faster) {
		lineSeries["markPoint"] = map[string]any{"data": []any{map[string]any{"coord": []any{cats[len(cats)-1], jsonNum(h.Values[len(cats)-1])},
			"name": v.Outcome.String(), "value": fmt.Sprintf("%s x%.2f", v.Outcome, v.Ratio)}},
			"itemStyle": map[string]any{"color": chartColours[1]}}
	}
	return map[string]any{
		"animation": false, "color": chartColours,
		"title":   map[string]any{"text": s.Target + ": " + s.Cell.String(), "left": "center", "textStyle": map[string]any{"fontSize": 14}},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"top": 24},
		"grid":    map[string]any{"top": 64, "left": 70, "right": 30, "bottom": 60, "containLabel": true},
		"xAxis":   map[string]any{"type": "category", "data": cats, "name": "experiment", "nameLocation": "middle", "nameGap": 40},
		"yAxis":   map[string]any{"type": "value", "scale": true, "name": s.Metric.Unit, "nameLocation": "middle", "nameGap": 55},
		"series": []any{lineSeries,
			map[string]any{"name": "runs", "type": "scatter", "data": dots, "symbolSize": 4, "itemStyle": map[string]any{"color": chartColours[2]}}},
	}
}

// jsonNum is v, or nil (null) when it is not finite.
func jsonNum(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// WriteHTML writes r as one self-contained page with a small chart of each
// changed series (change points as dashed lines, a called newest point
// marked), the chart library inlined as the report inlines it.
func WriteHTML(w io.Writer, r *report.Report, series []Series) error {
	type table struct {
		Title, Legend string
		Columns       []string
		Rows          [][]string
	}
	type chart struct{ ID, Title string }
	page := struct {
		Title   string
		Header  []string
		Tables  []table
		Charts  []chart
		Notes   []string
		Options template.JS
		ECharts template.JS
	}{Title: r.Title, Header: r.Header, Notes: r.Notes, ECharts: template.JS(report.EChartsJS())}
	for _, t := range r.Tables {
		ht := table{Title: t.Title, Legend: t.Legend, Columns: append([]string{"cell"}, t.Columns...)}
		for _, row := range t.Rows {
			cells := []string{row.Label}
			for _, c := range row.Cells {
				cells = append(cells, strings.TrimSpace(c.Text))
			}
			ht.Rows = append(ht.Rows, cells)
		}
		page.Tables = append(page.Tables, ht)
	}
	options := map[string]any{}
	for _, s := range series {
		if !changed(s) {
			continue
		}
		id := fmt.Sprintf("chart%d", len(page.Charts))
		page.Charts = append(page.Charts, chart{id, s.Target + ": " + s.Cell.String()})
		options[id] = chartOption(s)
	}
	b, err := json.Marshal(options)
	if err != nil {
		return fmt.Errorf("history html: chart data: %w", err)
	}
	page.Options = template.JS(b)
	if err := htmlPage.Execute(w, page); err != nil {
		return fmt.Errorf("history html: %w", err)
	}
	return nil
}

// htmlPage is the history on the report's HTML layout: a chart of each
// changed cell, then the tables.
var htmlPage = report.NewHTMLPage(`{{define "style"}}table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; } th { background: #f3f3f3; }
.legend { color: #555; font-size: 13px; }
.chart { width: 100%; max-width: 900px; height: 320px; margin: 8px 0 24px; }
{{end}}
{{define "main"}}<ul>{{range .Header}}<li>{{.}}</li>{{end}}</ul>
<h2>Changed cells</h2>
{{if .Charts}}<noscript><p>The charts need JavaScript; every number is also in the tables.</p></noscript>
{{range .Charts}}<div class="chart" id="{{.ID}}" role="img" aria-label="{{.Title}}"></div>
{{end}}{{else}}<p>No cell changed: no change point, and no newest point called slower or faster.</p>{{end}}
{{range .Tables}}<h2>{{.Title}}</h2>{{if .Legend}}<p class="legend">{{.Legend}}</p>{{end}}
<table><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}{{end}}`)
