package metric

import (
	"context"
	"path/filepath"
	"testing"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

var rowsPerMin = Register(Metric{Name: "stamp_test_rows_per_min", Unit: "rows/min", Direction: analysis.LowerIsBetter,
	Value: func(c Counts) float64 { return 60 * PerSecond(c.Rows, c.Seconds) }})

// TestStampAndFill: a stamped result carries its metric's value, unit and
// direction into the store; a result stored without them (as every result
// before headlines were kept) is filled from the registry when read, and a
// metric no linked suite declares reads as QPS.
func TestStampAndFill(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &store.Experiment{Name: "x", Base: "a", Targets: []string{"a"}}
	if err := st.CreateExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	run := &store.Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Repeat: 1, Status: store.StatusOK}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	stamped := store.Result{RunID: run.ID, Seq: 1, Test: "a", Metric: rowsPerMin.Name, Status: store.StatusOK,
		Seconds: 2, Rows: 30, Statements: 10}
	Stamp(&stamped)
	if stamped.Headline != 900 || stamped.Unit != "rows/min" || stamped.Direction != analysis.LowerIsBetter {
		t.Fatalf("stamped %v %q %v; want 900 rows/min, lower is better", stamped.Headline, stamped.Unit, stamped.Direction)
	}
	old := store.Result{RunID: run.ID, Seq: 2, Test: "b", Metric: rowsPerMin.Name, Status: store.StatusOK,
		Seconds: 2, Rows: 60, Statements: 10}
	unknown := store.Result{RunID: run.ID, Seq: 3, Test: "c", Metric: "not_linked", Status: store.StatusOK,
		Seconds: 2, Rows: 60, Statements: 10}
	for _, r := range []*store.Result{&stamped, &old, &unknown} {
		if err := st.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := st.Results(ctx, run.ID, false)
	if err != nil || len(rs) != 3 {
		t.Fatalf("results %+v, %v", rs, err)
	}
	if rs[1].Unit != "" {
		t.Fatalf("a result stored unstamped came back with unit %q", rs[1].Unit)
	}
	Fill(rs)
	for i, want := range []struct {
		v    float64
		unit string
	}{{900, "rows/min"}, {1800, "rows/min"}, {5, "queries/s"}} {
		if rs[i].Throughput() != want.v || rs[i].Unit != want.unit {
			t.Errorf("%s: %v %q after Fill; want %v %q", rs[i].Test, rs[i].Throughput(), rs[i].Unit, want.v, want.unit)
		}
	}
}
