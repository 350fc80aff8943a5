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
// given metrics, one test each, base "a" and "b" taking twice as long.
func relativeData(metrics ...string) *Data {
	started := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "rel", Base: "a", Targets: []string{"a", "b"}},
		Runs: []store.Run{{ID: 1, Target: "a", Engine: "sqlite", Status: "ok"},
			{ID: 2, Target: "b", Engine: "sqlite", Status: "ok"}},
		Results: map[int64][]store.Result{},
	}
	for run, slow := range map[int64]int64{1: 1, 2: 2} {
		for i, m := range metrics {
			r := store.Result{RunID: run, Seq: i + 1, Test: "t-" + m, Family: "f", Group: "g", Threads: 1, Metric: m,
				Status: "ok", Started: started, Seconds: 10, Events: 1000 / slow, Statements: 1000 / slow}
			r.Latency.Mean = time.Duration(slow) * time.Millisecond
			d.Results[run] = append(d.Results[run], r)
		}
	}
	return d
}

// TestRelativeTitle checks that the relative table names what its rows
// measure in every renderer: a latency headline is not called throughput,
// its ratios read lower-is-better, and queries per second keep the title
// sysbench's reports always had.
func TestRelativeTitle(t *testing.T) {
	for _, c := range []struct {
		metrics []string
		title   string
		marks   string
	}{
		{[]string{waitMS.Name}, "Relative latency: ms(target) / ms(a)", "lower is better: + (green) <= 0.95 better"},
		{[]string{metric.QPS.Name}, "Relative throughput: QPS(target) / QPS(a)", "+ (green) >= 1.05 better"},
		{[]string{metric.QPS.Name, waitMS.Name}, "Relative values: target / a",
			"lower is better for t-test_wait_ms: + (green) <= 0.95 better"},
	} {
		d := relativeData(c.metrics...)
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
		if rel.Title != c.title || !strings.Contains(rel.Legend, c.marks) {
			t.Errorf("%v: title %q legend %q, want %q and %q", c.metrics, rel.Title, rel.Legend, c.title, c.marks)
		}
		for _, row := range rel.Rows {
			cell := row.Cells[0]
			want := analysis.Worse // b is twice as slow: half the queries, twice the wait
			if cell.Band != want {
				t.Errorf("%v %s: band %v ratio %.2f, want worse", c.metrics, row.Label, cell.Band, cell.Value)
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
		tb := ComparisonTable(Compare(relativeData(c.metrics...), VerdictOptions{}), "a")
		if tb.Title != c.title || !strings.Contains(tb.Legend, c.logsOf) {
			t.Errorf("%v: title %q legend %q, want %q and %q", c.metrics, tb.Title, tb.Legend, c.title, c.logsOf)
		}
	}
}
