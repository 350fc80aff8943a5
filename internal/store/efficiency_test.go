package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestEfficiencyRoundTrip stores results with and without efficiency and
// checks that numbers, zeros and both sentinels come back as they went in.
func TestEfficiencyRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := Experiment{Name: "x", Base: "a", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	run := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite"}
	if err := s.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	eff := &Efficiency{Seconds: 10.02, ServerCPU: NotMeasured, ClientCPU: 3.25,
		ServerReadBytes: NotMeasured, ServerWriteBytes: NotMeasured, ServerReadCalls: NotMeasured, ServerWriteCalls: NotMeasured,
		ClientReadBytes: 0, ClientWriteBytes: 8192, ClientReadCalls: 12345, ClientWriteCalls: 7,
		Device: "vda", DevReads: NotReadable, DevWrites: 3, DevReadBytes: 0, DevWriteBytes: 1 << 40,
		ServerCS: NotMeasured, ClientCS: 99, ServerPeakRSS: NotMeasured, ClientPeakRSS: 50 << 20,
		MachineCPU: 20.04, MachineBusy: 7.5, MachineSteal: 0.1}
	withEff := Result{RunID: run.ID, Seq: 2, Test: "point-query", Threads: 1, Metric: "qps", Status: StatusOK,
		Started: time.Now().UTC().Truncate(time.Microsecond), Seconds: 10, Statements: 1000, Eff: eff,
		Intervals: []Interval{
			{Sec: 0, Seconds: 1, Events: 5, Load: &IntervalLoad{ServerCPU: NotMeasured, ClientCPU: 0.31, StealPct: 0, ForeignPct: NotReadable, CPUSpeed: 152.25}},
			{Sec: 1, Seconds: 1, Events: 5, Load: &IntervalLoad{ServerCPU: 0.5, ClientCPU: 0.25}}, // no speed probe
			{Sec: 2, Seconds: 1, Events: 5}, // not sampled
		}}
	action := Result{RunID: run.ID, Seq: 1, Test: "prepare", Action: true, Metric: "qps", Status: StatusOK,
		Started: withEff.Started, DBBytes: 123456789}
	unreadable := Result{RunID: run.ID, Seq: 3, Test: "cleanup", Action: true, Metric: "qps", Status: StatusOK,
		Started: withEff.Started, DBBytes: NotReadable}
	for _, r := range []*Result{&action, &withEff, &unreadable} {
		if err := s.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Results(ctx, run.ID, true)
	if err != nil || len(got) != 3 {
		t.Fatalf("results %v %v", got, err)
	}
	if got[0].Eff != nil || got[0].DBBytes != 123456789 {
		t.Errorf("prepare: eff %+v db bytes %d", got[0].Eff, got[0].DBBytes)
	}
	if got[2].DBBytes != NotReadable {
		t.Errorf("unreadable db size came back as %d", got[2].DBBytes)
	}
	if !reflect.DeepEqual(got[1].Eff, eff) {
		t.Errorf("efficiency round trip:\n got %+v\nwant %+v", got[1].Eff, eff)
	}
	if !reflect.DeepEqual(got[1].Intervals, withEff.Intervals) {
		t.Errorf("interval load round trip:\n got %+v\nwant %+v", got[1].Intervals[0].Load, withEff.Intervals[0].Load)
	}
	// The derived figures of the stored record.
	if p := got[1].Eff.StealPct(); p < 0.49 || p > 0.51 {
		t.Errorf("steal %% = %v, want 0.5", p)
	}
	// Foreign = busy - client (server not measured counts as none) = 4.25 s of 20.04.
	if f := got[1].Eff.ForeignPct(); f < 21.1 || f > 21.3 {
		t.Errorf("foreign %% = %v, want 21.2", f)
	}
	// 3.25 s over 10.02 s at 100 qps: 3243 us per op.
	if us := got[1].Eff.PerOp(got[1].Eff.ClientCPU, 100, 0) * 1e6; us < 3243 || us > 3244 {
		t.Errorf("client us/op = %v", us)
	}
	// Measured for 8 s of the 10.02 s window (the rest start-up and
	// drain): 800 operations, 4062.5 us per op.
	if us := got[1].Eff.PerOp(got[1].Eff.ClientCPU, 100, 8) * 1e6; us < 4062 || us > 4063 {
		t.Errorf("client us/op over 8 measured seconds = %v, want 4062.5", us)
	}
	// A window shorter than the measured time counts the window's operations.
	if us := got[1].Eff.PerOp(got[1].Eff.ClientCPU, 100, 20) * 1e6; us < 3243 || us > 3244 {
		t.Errorf("client us/op with a shorter window = %v, want 3243", us)
	}
	if v := got[1].Eff.PerOp(NotMeasured, 100, 8); v != NotMeasured {
		t.Errorf("PerOp passes sentinels through: got %v", v)
	}
}

// TestEfficiencyMigration opens a results file made before the efficiency
// columns existed: the migration adds them, and its old results read back
// with no efficiency (not measured) rather than zeros.
func TestEfficiencyMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	const before = 6 // statements of the schema before efficiency
	for _, q := range schema[:before] {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`PRAGMA user_version = 6`,
		`INSERT INTO experiments VALUES (1, 'x', 'a', '', '', 'a', '')`,
		`INSERT INTO runs VALUES (1, 1, 'a', 'sqlite', '', 1, 'ok', '', '', '', '{}')`,
		`INSERT INTO results (id, run_id, seq, test, family, grp, threads, warm, action, metric, rows_per_op, status, started,
			seconds, events, statements, errors, rows, lat_mean_ns, lat_p50_ns, lat_p95_ns, lat_p99_ns, lat_p999_ns, lat_max_ns,
			histogram, error_samples) VALUES (1, 1, 1, 'point-query', '', '', 1, 0, 0, 'qps', 1, 'ok', '', 1, 5, 5, 0, 5, 0, 0, 0, 0, 0, 0, NULL, '[]')`,
		`INSERT INTO intervals VALUES (1, 0, 1, 5, 5, 0, 5, 0, 0)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Results(ctx, 1, true)
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %v %v", rs, err)
	}
	if rs[0].Eff != nil || rs[0].DBBytes != 0 || len(rs[0].Intervals) != 1 || rs[0].Intervals[0].Load != nil {
		t.Errorf("old result came back with efficiency: %+v", rs[0])
	}
	if rs[0].Unit != "" || rs[0].Throughput() != 5 {
		t.Errorf("old result came back with a headline %v %q; want none (metric.Fill computes it)", rs[0].Headline, rs[0].Unit)
	}
}
