package report

import (
	"testing"
	"time"

	"benchlab/internal/metric"
	"benchlab/internal/store"
)

// TestKindTable checks the per-kind table: one row per test, thread count
// and target whose result has kinds, each kind's share of the events and
// its p99; none when no result has kinds.
func TestKindTable(t *testing.T) {
	started := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "k", Base: "a", Targets: []string{"a"}},
		Runs:       []store.Run{{ID: 1, Target: "a", Engine: "sqlite", Status: "ok"}},
		Results: map[int64][]store.Result{1: {
			{RunID: 1, Seq: 1, Test: "tpcc", Family: "tpcc", Group: "tpcc", Threads: 2, Metric: "tpmc", Status: "ok",
				Started: started, Seconds: 10, Events: 200, Statements: 3000, Rows: 90,
				Facts: map[string]float64{"new_order_ops": 90, "new_order_p99_ms": 8, "payment_ops": 110,
					"payment_p99_ms": 2, "client_gomaxprocs": 2, "client_ops_per_call": 1}},
		}},
	}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	r := Build(d)
	var kt *Table
	for i := range r.Tables {
		if r.Tables[i].Title == "Operations by kind" {
			kt = &r.Tables[i]
		}
	}
	if kt == nil {
		t.Fatal("no per-kind table")
	}
	// The more frequent kind (payment) comes first.
	want := []string{"target", "payment %", "payment p99", "new_order %", "new_order p99"}
	if len(kt.Columns) != len(want) || len(kt.Rows) != 1 {
		t.Fatalf("columns %v rows %d, want %v and 1 row", kt.Columns, len(kt.Rows), want)
	}
	for i, c := range want {
		if kt.Columns[i] != c {
			t.Errorf("column %d = %q, want %q", i, kt.Columns[i], c)
		}
	}
	c := kt.Rows[0].Cells
	if c[0].Text != "a" || c[1].Value != 55 || c[2].Value != 2 || c[3].Value != 45 || c[4].Value != 8 {
		t.Errorf("row %+v", c)
	}
	d.Results[1][0].Facts = map[string]float64{"client_gomaxprocs": 2}
	for _, tb := range Build(d).Tables {
		if tb.Title == "Operations by kind" {
			t.Error("a per-kind table without kinds")
		}
	}
}
