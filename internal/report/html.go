package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"benchlab/internal/analysis"
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
	// DiffFlames are each target's differential flame graphs against the
	// base, where both were profiled.
	DiffFlames []htmlFlame
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
	page.DiffFlames = diffFlamesOf(d)
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

// pageTemplate is the report on the shared HTML layout: the summary, the
// relative tables and their colour convention, the charts, the other
// tables and the flame graphs, and after the notes the runs' manifests.
var pageTemplate = NewHTMLPage(`{{define "style"}}svg.flame { display: block; margin: 8px 0 16px; } svg.flame text { fill: #111; pointer-events: none; } svg.flame rect:hover { stroke: #000; }
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
{{end}}
{{define "table"}}<h2>{{.Title}}</h2>{{if .Legend}}<p class="legend">{{.Legend}}</p>{{end}}
<table><thead><tr><th>test</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{$g := ""}}{{range .Rows}}{{if and .Group (ne .Group $g)}}{{$g = .Group}}<tr class="group"><td colspan="99">{{.Group}}</td></tr>{{end}}<tr><td>{{.Label}}</td>{{range .Cells}}<td class="{{.Class}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{define "main"}}{{if .Summary}}<section class="summary"><h2>Summary</h2><ul>{{range .Summary}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
<ul class="header">{{range .Header}}<li>{{.}}</li>{{end}}</ul>

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
{{if .DiffFlames}}<h2>Differential flame graphs</h2>
<p>Each target's call stacks against the base's, in CPU microseconds per operation: a frame is as wide as the target's
time in it, red where the target spends more of its own time (as the leaf) per operation than the base, blue where it
spends less, white where the same; the deepest colour is the largest change. Hover a frame for its inclusive times.
Frames the target no longer runs are in the CPU profile table.</p>
{{range .DiffFlames}}<details><summary>{{.Title}}</summary>{{.SVG}}</details>
{{end}}{{end}}{{end}}
{{define "appendix"}}<h2>Manifests</h2>
{{range .Manifests}}<details><summary>{{.Label}}</summary><pre>{{.JSON}}</pre></details>
{{end}}
{{end}}`)
