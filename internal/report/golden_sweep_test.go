package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// TestGoldenSweep is a sweep of innodb_io_capacity over 50, 100 and 2000
// on MariaDB, three repeats each, with the engine's internals per second.
// 50 did not take effect (the server clamped it to 100: the run's manifest
// reads 100 back), so its column is marked, a note says what ran, and the
// best value is picked among 100 and 2000: 2000, faster than 100. At
// update-index 2000 is faster, with a lower checkpoint age and four times
// the pages flushed per statement; the text names that change.
func TestGoldenSweep(t *testing.T) {
	sp := spec.Default()
	sp.Name, sp.Workload.Suite, sp.Workload.Tests, sp.Workload.Threads, sp.Workload.Repeats =
		"golden-sweep", "sysbench", []string{"point-query", "update-index"}, []int{4}, 3
	values := []string{"50", "100", "2000"}
	var names []string
	for _, v := range values {
		name := spec.SweptName("m", "innodb_io_capacity", v)
		names = append(names, name)
		sp.Targets = append(sp.Targets, spec.Target{Name: name, Engine: "mariadb",
			Settings: map[string]any{"innodb_io_capacity": v},
			Swept:    &spec.Swept{Of: "m", Setting: "innodb_io_capacity", Value: v}})
	}
	d := &report.Data{Experiment: store.Experiment{ID: 11, Name: "golden-sweep", Base: names[0], Targets: names,
		Created: goldenDay, Spec: sp.TOML()}, Results: map[int64][]store.Result{}}
	id := int64(0)
	for ti, name := range names {
		// What the server ran: 50 is clamped to 100.
		ran := map[string]string{"50": "100", "100": "100", "2000": "2000"}[values[ti]]
		for rep := 1; rep <= 3; rep++ {
			id++
			m := store.Manifest{Host: store.Host{Hostname: "h", CPUModel: "cpu", Cores: 2}}
			m.Target.Name, m.Target.Engine = name, "mariadb"
			m.Target.Settings = map[string]string{"innodb_io_capacity": values[ti]}
			m.Engine.Version, m.Engine.Settings = "10.11.6", map[string]string{"innodb_io_capacity": ran}
			d.Runs = append(d.Runs, store.Run{ID: id, Target: name, Engine: "mariadb", Version: "10.11.6", Repeat: rep,
				Status: store.StatusOK, Started: goldenDay, Ended: goldenDay.Add(time.Minute), Manifest: m.JSON()})
			for seq, test := range []string{"point-query", "update-index"} {
				qps, flushedPerOp, age := int64(10_000+20*rep), 0.01, 1e6
				if test == "update-index" {
					qps, flushedPerOp, age = int64(1_500+10*rep), 0.3, 60e6
					if ran == "2000" {
						qps, flushedPerOp, age = int64(2_000+10*rep), 1.2, 10e6
					}
				}
				res := store.Result{RunID: id, Seq: seq + 1, Test: test, Family: test, Group: "writes", Threads: 4, Metric: "qps",
					Status: store.StatusOK, Started: goldenDay, Seconds: 20, Events: 20 * qps, Statements: 20 * qps,
					Latency: store.Latency{P50: 400 * time.Microsecond, P95: 900 * time.Microsecond, P99: 2 * time.Millisecond,
						Max: 40 * time.Millisecond},
					Eff: &store.Efficiency{Seconds: 20, ServerCPU: 0.3 * 20, ClientCPU: 0.1 * 20},
					Facts: map[string]float64{
						store.EngineStatFact("status.Innodb_buffer_pool_pages_flushed"): flushedPerOp * float64(20*qps),
						store.EngineStatFact("status.Com_update"):                       float64(20 * qps),
					}}
				if test == "point-query" {
					res.Group = "point queries"
				}
				age0 := store.EngineSeries{Name: "status.Innodb_checkpoint_age", Gauge: true}
				flushed := store.EngineSeries{Name: "status.Innodb_buffer_pool_pages_flushed"}
				for sec := range 20 {
					res.Intervals = append(res.Intervals, store.Interval{Sec: sec, Seconds: 1, Events: qps, Statements: qps,
						Max: 3 * time.Millisecond})
					// Checkpoint age saws up and down around its level.
					age0.Points = append(age0.Points, store.EnginePoint{Sec: sec, Value: age * (0.5 + float64(sec%5)/4)})
					flushed.Points = append(flushed.Points, store.EnginePoint{Sec: sec, Value: flushedPerOp * float64(qps)})
				}
				res.Internals = []store.EngineSeries{flushed, age0}
				d.Results[id] = append(d.Results[id], res)
			}
		}
	}
	r := checkGolden(t, "sweep", d)
	sweep := findTable(r, "Sweep of innodb_io_capacity")
	if sweep == nil {
		t.Fatal("no sweep table")
	}
	if want := "50 (!),100,2000,100 / 50,2000 / 50,best,best / next"; strings.Join(sweep.Columns, ",") != want {
		t.Errorf("sweep columns %q, want %q", strings.Join(sweep.Columns, ","), want)
	}
	for _, row := range sweep.Rows {
		best, next := row.Cells[5], row.Cells[6]
		if row.Label == "update-index" && (best.Text != "2000" || next.Verdict != "faster") {
			t.Errorf("update-index: best %q, against the next %+v; want 2000, faster", best.Text, next)
		}
	}
	var txt bytes.Buffer
	if err := report.WriteText(&txt, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"innodb_io_capacity = 50 did not take effect: the server runs 100",
		"engine internals: update-index on m.innodb_io_capacity=2000",
		"the largest change is Innodb_checkpoint_age mean per second 0.17x",
		"next Innodb_buffer_pool_pages_flushed per op 4.00x",
	} {
		if !strings.Contains(strings.Join(strings.Fields(txt.String()), " "), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, d, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Engine internals per second: update-index", "Innodb_checkpoint_age (value)",
		"Innodb_buffer_pool_pages_flushed (per second)"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
}
