package report

import "html/template"

// htmlLayout is the frame every HTML page of benchlab shares: the head and
// its first rules, the title, the notes, the inlined chart library and the
// script that draws each chart from its option. A page fills the blocks
// "style" (its own rules), "main" (what stands between the title and the
// notes) and "appendix" (after the notes); its data has the fields Title,
// Notes, ECharts (the library) and Options (a JSON object of ECharts
// options by the id of the element each is drawn in).
var htmlLayout = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
{{block "style" .}}{{end}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{block "main" .}}{{end}}
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{block "appendix" .}}{{end}}<script>{{.ECharts}}</script>
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

// NewHTMLPage is a page on the layout every benchlab HTML page
// shares, so that the report and the history look and load alike. parts
// defines the blocks "style", "main" and "appendix" (each may be left out)
// and any template they call; the page's data has the fields Title, Notes,
// ECharts (EChartsJS as template.JS) and Options (a JSON object of ECharts
// options keyed by the id of the element each chart is drawn in). It
// panics on a template error: parts are constants of the program.
func NewHTMLPage(parts string) *template.Template {
	return template.Must(template.Must(htmlLayout.Clone()).Parse(parts))
}
