package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestErrorRateColumn checks that the results tables of every format show
// each target's share of failed operations (errors / attempted): a target
// whose operations failed must not read as a clean one.
func TestErrorRateColumn(t *testing.T) {
	started := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "errs", Base: "a", Targets: []string{"a", "b"}},
		Runs: []store.Run{{ID: 1, Target: "a", Engine: "sqlite", Status: "ok"},
			{ID: 2, Target: "b", Engine: "sqlite", Status: "ok"}},
		Results: map[int64][]store.Result{
			1: {{RunID: 1, Seq: 1, Test: "insert", Threads: 1, Metric: "qps", Status: "ok", Started: started,
				Seconds: 10, Events: 1000, Statements: 1000}},
			// 1 of 8 attempted failed: 12.5%.
			2: {{RunID: 2, Seq: 1, Test: "insert", Threads: 1, Metric: "qps", Status: "ok", Started: started,
				Seconds: 10, Events: 700, Errors: 100, Statements: 700, ErrorSamples: []string{"disk full"}}},
		},
	}
	r := Build(d)
	// No result stored a latency, so the latency table has no percentile
	// column to fill with n/a: it is the failed operations alone.
	var lat *Table
	for i := range r.Tables {
		if r.Tables[i].Title == "Failed operations" {
			lat = &r.Tables[i]
		}
	}
	if lat == nil {
		t.Fatal("no failed operations table")
	}
	want := []string{"a err %", "b err %"}
	if strings.Join(lat.Columns, "|") != strings.Join(want, "|") {
		t.Fatalf("columns %q, want %q", lat.Columns, want)
	}
	if c := lat.Rows[0].Cells; c[0].Value != 0 || c[1].Value != 12.5 {
		t.Errorf("error rates %v and %v, want 0 and 12.5", c[0].Value, c[1].Value)
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
		if !strings.Contains(out, "b err %") || !strings.Contains(out, "12.5") {
			t.Errorf("%s report lacks the error rate column or its value 12.5", name)
		}
		if !strings.Contains(out, "12.5% of operations attempted") {
			t.Errorf("%s report's notes lack the error share", name)
		}
	}
}
