package tpcc

import (
	"strings"
	"testing"
	"time"

	"benchlab/internal/metric"
	"benchlab/internal/report"
	"benchlab/internal/store"
	"benchlab/internal/workload/tpcc/tpccdoc"
)

// TestHeaderDescribesTPCC checks the report header's workload line for a
// tpcc experiment: the suite's own words, with the protocol and the tries.
func TestHeaderDescribesTPCC(t *testing.T) {
	spec := "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"tpcc\"" +
		"\nthreads = [1, 4]\nwrite_time = \"30s\"\nwarmup = \"5s\"\nrepeats = 3\n[workload.tpcc]\nwarehouses = 2\nmax_tries = 10\nisolation = \"\"\n"
	d := &report.Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a"}, Spec: spec}}
	want := "workload: TPC-C, 2 warehouse(s), terminals [1 4], 30s measured each after a 5s warm-up, no think time, " +
		"prepared statements, up to 10 tries per transaction on conflicts (isolation the server's default, per target in the TPC-C table), repeats 3"
	if h := strings.Join(report.Build(d).Header, "\n"); !strings.Contains(h, want) {
		t.Errorf("header\n%s\nlacks %q", h, want)
	}
	// Set per session, the level is in the header.
	d.Experiment.Spec = strings.Replace(spec, `isolation = ""`, `isolation = "RR"`, 1)
	if h := strings.Join(report.Build(d).Header, "\n"); !strings.Contains(h, "(isolation repeatable read set on each terminal's session)") {
		t.Errorf("header\n%s\nlacks the isolation set per session", h)
	}
	// A spec stored before max_tries existed ran without retries and
	// counted failed transactions: the header says both (a stored run reads
	// back as it ran).
	d.Experiment.Spec = "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"tpcc\"\nwarehouses = 2\n"
	h := strings.Join(report.Build(d).Header, "\n")
	for _, want := range []string{"conflicts not retried", "workload as run: stored before max_tries existed"} {
		if !strings.Contains(h, want) {
			t.Errorf("header of an old stored spec\n%s\nlacks %q", h, want)
		}
	}
}

// TestTPCCTable checks the TPC-C table: each target's isolation and
// protocol, its committed mix, retries per 100 transactions and failures,
// and a mix skewed by failed Payments marked red with a note.
func TestTPCCTable(t *testing.T) {
	started := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	res := func(run int64, target string, facts map[string]float64, events, errors int64) store.Result {
		return store.Result{RunID: run, Seq: 1, Test: "tpcc", Family: "tpcc", Group: "tpcc", Threads: 4, Metric: "tpmc",
			Status: "ok", Started: started, Seconds: 10, Events: events, Errors: errors, Rows: int64(facts["new_order_ops"]),
			Facts: facts}
	}
	d := &report.Data{
		Experiment: store.Experiment{ID: 1, Name: "k", Base: "a", Targets: []string{"a", "b"},
			Spec: "name = \"k\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n[workload]\nsuite = \"tpcc\"\n"},
		Runs: []store.Run{{ID: 1, Target: "a", Engine: "postgres", Status: "ok"}, {ID: 2, Target: "b", Engine: "postgres", Status: "ok"}},
		Results: map[int64][]store.Result{
			1: {res(1, "a", map[string]float64{"new_order_ops": 4500, "payment_ops": 4300, "order_status_ops": 400,
				"delivery_ops": 400, "stock_level_ops": 400, "retries": 500, "retried": 300,
				"tpcc_isolation": 3, "tpcc_prepared": 1}, 10000, 2)},
			2: {res(2, "b", map[string]float64{"new_order_ops": 4500, "payment_ops": 2000, "order_status_ops": 400,
				"delivery_ops": 400, "stock_level_ops": 400,
				"tpcc_isolation": 2, "tpcc_prepared": 0}, 7700, 2300)},
		},
	}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	r := report.Build(d)
	var tt *report.Table
	for i := range r.Tables {
		if r.Tables[i].Title == "TPC-C: isolation, protocol and committed mix" {
			tt = &r.Tables[i]
		}
	}
	if tt == nil || len(tt.Rows) != 2 {
		t.Fatalf("TPC-C table %+v", tt)
	}
	a, b := tt.Rows[0].Cells, tt.Rows[1].Cells
	if a[0].Text != "a" || a[1].Text != "repeatable read" || a[2].Text != "prepared" || a[3].Value != 45 || a[4].Value != 43 ||
		a[8].Value != 5 || a[9].Value != 2 || a[3].Tone != report.ToneNone || a[4].Tone != report.ToneNone {
		t.Errorf("standard mix row %+v", a)
	}
	// 2000 Payments of 7700: every share departs (New-Order 58%, 5.2% for
	// the others, where 1 point is the allowance at this count).
	if b[1].Text != "read committed" || b[2].Text != "text" || b[4].Tone != report.ToneBad || b[3].Tone != report.ToneBad ||
		b[5].Tone != report.ToneBad || b[9].Value != 2300 {
		t.Errorf("skewed mix row %+v: want the shares marked, 2300 failed", b)
	}
	found := false
	for _, n := range r.Notes {
		if strings.Contains(n, "TPC-C on b at 4 terminals") && strings.Contains(n, "payment 26.0%") {
			found = true
		}
		if strings.Contains(n, "TPC-C on a") {
			t.Errorf("note for the standard mix: %s", n)
		}
	}
	if !found {
		t.Errorf("no note on b's mix in %q", r.Notes)
	}
}

// TestDocColumns checks the TPC-C table's columns of a document target
// (no transactions, the model, findAndModify) and of an SQL one, each with
// its scale factor when it is not 1, and the note that says such a run is
// not TPC-C.
func TestDocColumns(t *testing.T) {
	row := func(f map[string]float64) (string, string) {
		c := mixRow("x", 1, []store.Result{{Facts: f}}).Cells
		return c[1].Text, c[2].Text
	}
	iso, proto := row(map[string]float64{tpccdoc.FactDocument: 1, tpccdoc.FactDenormalized: 1,
		tpccdoc.FactFindAndModify: 1, tpccdoc.FactScaleFactor: 10})
	if iso != "none (each write alone)" || proto != "MongoDB, lines in orders, findAndModify, scale factor 10" {
		t.Errorf("columns %q, %q", iso, proto)
	}
	if _, proto := row(map[string]float64{tpccdoc.FactDocument: 1, tpccdoc.FactScaleFactor: 1}); proto != "MongoDB, normalized" {
		t.Errorf("protocol at the full scale: %q", proto)
	}
	if _, proto := row(map[string]float64{FactIsolation: 2, FactPrepared: 1, tpccdoc.FactScaleFactor: 100}); proto != "prepared, scale factor 100" {
		t.Errorf("protocol of an SQL target at scale factor 100: %q", proto)
	}
	if _, proto := row(map[string]float64{FactIsolation: 2, FactPrepared: 1}); proto != "prepared" {
		t.Errorf("protocol of an SQL target stored before the scale factor: %q", proto)
	}
	notes := scaleNotes(map[float64][]string{100: {"pg-sql", "ferretdb-pg"}})
	if len(notes) != 1 || !strings.Contains(notes[0], "pg-sql, ferretdb-pg ran at scale factor 100") ||
		!strings.Contains(notes[0], "not a TPC-C-compliant run") {
		t.Errorf("scale notes %q", notes)
	}
}
