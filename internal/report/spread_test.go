package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestSpreadTable checks the run-to-run spread: the coefficient of
// variation of each cell's throughput over its repeats, per target, worked
// by hand; no table when nothing was repeated.
func TestSpreadTable(t *testing.T) {
	if cv := CV([]float64{90, 100, 110}); math.Abs(cv-0.1) > 1e-12 {
		t.Errorf("CV(90, 100, 110) = %v, want 0.1", cv)
	}
	if !math.IsNaN(CV([]float64{5})) {
		t.Error("CV of one value is a number")
	}
	started := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	res := func(run int64, stmts int64) store.Result {
		return store.Result{RunID: run, Seq: 1, Test: "point-query", Family: "point-query", Group: "point queries",
			Threads: 4, Metric: "qps", Status: "ok", Started: started, Seconds: 10, Events: stmts, Statements: stmts}
	}
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "s", Base: "a", Targets: []string{"a", "b"}},
		Runs: []store.Run{{ID: 1, Target: "a", Repeat: 1, Status: "ok"}, {ID: 2, Target: "b", Repeat: 1, Status: "ok"},
			{ID: 3, Target: "a", Repeat: 2, Status: "ok"}, {ID: 4, Target: "b", Repeat: 2, Status: "ok"},
			{ID: 5, Target: "a", Repeat: 3, Status: "ok"}, {ID: 6, Target: "b", Repeat: 3, Status: "ok"}},
		Results: map[int64][]store.Result{
			1: {res(1, 900)}, 3: {res(3, 1000)}, 5: {res(5, 1100)}, // a: 90, 100, 110 qps: cv 10%
			2: {res(2, 1000)}, 4: {res(4, 1000)}, 6: {res(6, 1000)}, // b: no spread
		},
	}
	r := Build(d)
	var sp *Table
	for i := range r.Tables {
		if r.Tables[i].Title == "Run-to-run spread" {
			sp = &r.Tables[i]
		}
	}
	if sp == nil {
		t.Fatal("no spread table")
	}
	if len(sp.Rows) != 1 || len(sp.Columns) != 2 || sp.Columns[0] != "a cv %" {
		t.Fatalf("columns %v, %d rows", sp.Columns, len(sp.Rows))
	}
	if c := sp.Rows[0].Cells; math.Abs(c[0].Value-10) > 1e-9 || c[1].Value != 0 {
		t.Errorf("cv cells %+v, want 10 and 0", c)
	}
	found := false
	for _, n := range r.Notes {
		found = found || strings.Contains(n, "largest run-to-run spread: 10.0%") && strings.Contains(n, "point-query on a")
	}
	if !found {
		t.Errorf("notes lack the largest spread: %q", r.Notes)
	}
	d.Runs, d.Results = d.Runs[:2], map[int64][]store.Result{1: {res(1, 900)}, 2: {res(2, 1000)}}
	for _, tb := range Build(d).Tables {
		if tb.Title == "Run-to-run spread" {
			t.Error("a spread table without repeats")
		}
	}
}
