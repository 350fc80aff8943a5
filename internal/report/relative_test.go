package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/store"
)

// waitMS is a latency headline, lower is better, as connect's is; the
// report package cannot import the suite, so the test declares its own.
var waitMS = metric.Register(metric.Metric{
	Name: "test_wait_ms", Unit: "ms", Legend: "mean milliseconds of one wait",
	Direction: analysis.LowerIsBetter, Quantity: "latency", Symbol: "ms",
	Value: func(c metric.Counts) float64 { return float64(c.Mean) / 1e6 },
})

// relativeData is one experiment of two targets whose rows report the
// given metrics, one test each, base "a" and "b" taking twice as long, each
// target run repeats times (with a little run-to-run variation).
func relativeData(repeats int, metrics ...string) *Data {
	started := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "rel", Base: "a", Targets: []string{"a", "b"}},
		Results:    map[int64][]store.Result{},
	}
	for rep := range repeats {
		for i, target := range []string{"a", "b"} {
			run := int64(len(d.Runs) + 1)
			slow := int64(i + 1)
			d.Runs = append(d.Runs, store.Run{ID: run, Target: target, Engine: "sqlite", Status: "ok", Repeat: rep + 1})
			for j, m := range metrics {
				r := store.Result{RunID: run, Seq: j + 1, Test: "t-" + m, Family: "f", Group: "g", Threads: 1, Metric: m,
					Status: "ok", Started: started, Seconds: 10, Events: 1000/slow + int64(rep), Statements: 1000/slow + int64(rep)}
				r.Latency.Mean = time.Duration(slow)*time.Millisecond + time.Duration(rep)*time.Microsecond
				d.Results[run] = append(d.Results[run], r)
			}
		}
	}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	return d
}

// TestRelativeTitle checks that the relative table names what its rows
// measure in every renderer: a latency headline is not called throughput,
// its ratios read lower-is-better (with a single run: the colour bands;
// with repeats: the side of 1 a slower verdict lies on; in HTML: the colour
// convention's swatches), and queries per second keep the title sysbench's
// reports always had.
func TestRelativeTitle(t *testing.T) {
	for _, c := range []struct {
		metrics  []string
		title    string
		marks    string // the legend of single runs
		verdicts string // the legend of repeats
		swatches string // the HTML colour convention
	}{
		{[]string{waitMS.Name}, "Relative latency: ms(target) / ms(a)", "lower is better: + (green) <= 0.95 better",
			"significant verdicts, lower is better: - (slower, red) above 1, + (faster, green) below 1",
			`Colour convention: lower is better: <span class="swatch better">0.95-</span>`},
		{[]string{metric.QPS.Name}, "Relative throughput: QPS(target) / QPS(a)", "+ (green) >= 1.05 better",
			"significant verdicts, - (slower, red) below 1, + (faster, green) above 1",
			`Colour convention: <span class="swatch better">1.05+</span>`},
		{[]string{metric.QPS.Name, waitMS.Name}, "Relative values: target / a",
			"lower is better for t-test_wait_ms: + (green) <= 0.95 better",
			"significant verdicts, - (slower, red) below 1, + (faster, green) above 1; lower is better for t-test_wait_ms: " +
				"- (slower, red) above 1, + (faster, green) below 1",
			`where lower is better (t-test_wait_ms), <span class="swatch better">0.95-</span>`},
	} {
		for _, repeats := range []int{1, 6} {
			d := relativeData(repeats, c.metrics...)
			r := Build(d)
			var rel *Table
			for i := range r.Tables {
				if r.Tables[i].Relative {
					rel = &r.Tables[i]
				}
			}
			if rel == nil {
				t.Fatalf("%v: no relative table", c.metrics)
			}
			legend := c.marks
			if repeats > 1 {
				legend = c.verdicts
			}
			if rel.Title != c.title || !strings.Contains(rel.Legend, legend) {
				t.Errorf("%v x%d: title %q legend %q, want %q and %q", c.metrics, repeats, rel.Title, rel.Legend, c.title, legend)
			}
			for _, row := range rel.Rows {
				// b is twice as slow: half the queries, twice the wait;
				// over 6 repeats each that is a significant slower.
				cell := row.Cells[0]
				if cell.Band != analysis.Worse || (repeats > 1 && (cell.Mark != "-" || cell.Verdict != analysis.Slower.String())) {
					t.Errorf("%v x%d %s: band %v mark %q verdict %q ratio %.2f, want worse, - slower", c.metrics, repeats,
						row.Label, cell.Band, cell.Mark, cell.Verdict, cell.Value)
				}
			}
			var text, md, html bytes.Buffer
			if err := WriteText(&text, r, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&html, d, r); err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
				if !strings.Contains(out, c.title) {
					t.Errorf("%v: %s report lacks %q", c.metrics, name, c.title)
				}
				if c.metrics[0] == waitMS.Name && strings.Contains(out, "Relative throughput") {
					t.Errorf("%v: %s report calls a latency throughput", c.metrics, name)
				}
			}
			// html/template writes + as &#43;, which reads as +.
			if page := strings.ReplaceAll(html.String(), "&#43;", "+"); !strings.Contains(page, c.swatches) {
				i := strings.Index(page, "Colour convention")
				t.Errorf("%v: HTML colour convention lacks %q:\n%s", c.metrics, c.swatches, page[i:min(len(page), i+600)])
			}
		}
	}
}

// TestComparisonTitle checks that compare's verdicts table names the
// quantity its rows compare, in its title and in the legend's t-test.
func TestComparisonTitle(t *testing.T) {
	for _, c := range []struct {
		metrics       []string
		title, logsOf string
	}{
		{[]string{waitMS.Name}, "Verdicts cell by cell (latency)", "t-test on log latency"},
		{[]string{metric.QPS.Name}, "Verdicts cell by cell (throughput)", "t-test on log throughput"},
		{[]string{metric.QPS.Name, waitMS.Name}, "Verdicts cell by cell (throughput and latency)", "t-test on log values"},
	} {
		tb := ComparisonTable(Compare(relativeData(1, c.metrics...), VerdictOptions{}), "a")
		if tb.Title != c.title || !strings.Contains(tb.Legend, c.logsOf) {
			t.Errorf("%v: title %q legend %q, want %q and %q", c.metrics, tb.Title, tb.Legend, c.title, c.logsOf)
		}
	}
}
