package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"benchlab/internal/engine"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
	"benchlab/internal/workload/sysbench"
)

// memSink keeps the results a cell saves.
type memSink struct{ results []*store.Result }

func (m *memSink) SaveResult(ctx context.Context, r *store.Result) error {
	m.results = append(m.results, r)
	return nil
}

// TestCellEfficiencySQLite runs prepare and point-query on real SQLite and
// checks the per-operation figures: SQLite is in-process, so the client's
// CPU is the engine's and must be > 0 and plausible, and the server's is
// not measured; the database size after load is stored with prepare.
func TestCellEfficiencySQLite(t *testing.T) {
	drv, ok := engine.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	p := workload.Params{Tables: 1, TableSize: 10_000, Threads: []int{1}, ReadTime: 1500 * time.Millisecond,
		WriteTime: time.Second, Tests: []string{"point-query"}, Seed: 1}
	steps, err := sysbench.Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	// prepare, the postload cleanup, point-query: keep the load and the test.
	if len(steps) != 3 || steps[0].Name != "prepare" || steps[2].Family != "point-query" {
		t.Fatalf("plan: want prepare, postload, point-query, got %d steps", len(steps))
	}
	steps = []workload.Step{steps[0], steps[2]}
	steps[1].Warmup = 300 * time.Millisecond
	var sink memSink
	start := time.Now()
	out := RunCell(context.Background(), Cell{Target: engine.Target{Name: "t", Engine: "sqlite"}, Driver: drv,
		Steps: steps, Threads: []int{1}, DataDir: t.TempDir() + "/data", Seed: 1}, &sink)
	took := time.Since(start)
	if out.Err != nil || len(sink.results) != 2 {
		t.Fatalf("cell: %v, %d results", out.Err, len(sink.results))
	}
	prep, res := sink.results[0], sink.results[1]
	// 10,000 rows of sysbench's 120+60 character columns: well over 1 MB.
	if prep.DBBytes < 1<<20 || prep.DBBytes > 100<<20 {
		t.Errorf("database size after load %d bytes, want a few MB", prep.DBBytes)
	}
	// The load's cost per inserted row (docs/method.md 2.2 sb.prepare.met): CPU
	// and bytes written, each > 0 and plausible.
	le := prep.Eff
	if le == nil {
		t.Fatal("prepare has no efficiency")
	}
	cpuRow := le.ClientCPU / float64(prep.Rows) * 1e6
	kbRow := float64(le.ClientWriteBytes) / float64(prep.Rows) / 1024
	t.Logf("load: %d rows, client %.1f us and %.3f KB written per row", prep.Rows, cpuRow, kbRow)
	if prep.Rows != 10_000 || cpuRow <= 0 || cpuRow > 10_000 || kbRow <= 0.05 || kbRow > 100 {
		t.Errorf("load: %d rows, %.3f us cpu and %.3f KB written per row; want 10000, 0-10000 us, 0.05-100 KB",
			prep.Rows, cpuRow, kbRow)
	}
	e := res.Eff
	if e == nil {
		t.Fatal("point-query has no efficiency")
	}
	us := e.PerOp(e.ClientCPU, res.QPS(), res.Seconds) * 1e6
	t.Logf("qps %.0f, client %.1f us/op over %.2f s, steal %.1f%%, foreign %.1f%%, device %q",
		res.QPS(), us, e.Seconds, e.StealPct(), e.ForeignPct(), e.Device)
	// A cached point query through database/sql costs microseconds to tens
	// of microseconds; a second per op would mean a wrong denominator.
	if us <= 0 || us >= 1e6 {
		t.Errorf("client cpu %.3f us/op, want > 0 and < 1 s", us)
	}
	// Nor can the client use more CPU than the machine had.
	if e.ClientCPU > e.MachineCPU {
		t.Errorf("client cpu %.2f s > machine cpu %.2f s", e.ClientCPU, e.MachineCPU)
	}
	if e.ServerCPU != store.NotMeasured || e.ServerCS != store.NotMeasured {
		t.Errorf("in-process engine: server cpu %v cs %v, want not measured", e.ServerCPU, e.ServerCS)
	}
	// The sampled window lies inside the cell's run, however slow the
	// machine is. It opens when the step's tick goroutine marks the end of
	// the warm-up, which a busy machine may run late: only when other
	// processes left the test a CPU (under half the machine's CPU time)
	// must it cover nearly all of the measured part.
	quiet := e.ForeignPct() >= 0 && e.ForeignPct() < 50
	if e.Seconds <= 0 || e.Seconds > took.Seconds() || (quiet && e.Seconds < 0.9*res.Seconds) {
		t.Errorf("sampled window %.2f s, want at most the cell's %.2f s and, with other processes at %.0f%% of the CPU, at least 0.9 of the %.2f s measured",
			e.Seconds, took.Seconds(), e.ForeignPct(), res.Seconds)
	}
	// benchlab's memory, split: the point queries read the 10,000-row table
	// (a few MB) into the connection's page cache, which is SQLite's, not
	// benchlab's own; own + SQLite's cannot exceed the resident set's peak
	// by more than the samples' drift.
	own, goPeak, eng := res.Facts[store.FactClientOwnPeakRSS], res.Facts[store.FactClientGoPeak], res.Facts[store.FactEnginePeakMemory]
	t.Logf("peak RSS %.1f MB: own %.1f (Go %.1f), SQLite %.1f", float64(e.ClientPeakRSS)/(1<<20), own/(1<<20), goPeak/(1<<20), eng/(1<<20))
	if eng < float64(prep.DBBytes)/2 || own <= 0 || goPeak <= 0 || own >= float64(e.ClientPeakRSS) || goPeak >= float64(e.ClientPeakRSS) {
		t.Errorf("memory facts own %.0f, Go %.0f, SQLite %.0f bytes, peak RSS %d, database %d bytes: want SQLite's >= half "+
			"the database (its pages cached), 0 < own and Go < RSS", own, goPeak, eng, e.ClientPeakRSS, prep.DBBytes)
	}
	// The CPU speed probes ran over the measured part: a sample every 75
	// ms on each CPU (1.5 s / SpeedProbeMinSamples), none from before it,
	// and their CPU time is a small part of the window's. A probe thread
	// pinned to a busy CPU waits for it (one run at a load of 26 got 15% of
	// its samples): at least 3 only when other processes left a CPU free.
	speed, n, probeCPU := res.Facts[store.FactCPUSpeed], res.Facts[store.FactCPUSpeedSamples], res.Facts[store.FactCPUSpeedCPU]
	maxN := float64(runtime.NumCPU()) * (e.Seconds/meter.SpeedProbeEveryFor(1500*time.Millisecond).Seconds() + 2)
	if !(speed > 0) || (quiet && n < 3) || n > maxN || !(probeCPU > 0) || probeCPU > 0.1*e.Seconds*float64(runtime.NumCPU()) {
		t.Errorf("speed facts: %v rounds/us from %v samples (want 1 to %.0f, 3 with a CPU free) taking %v s of CPU", speed, n, maxN, probeCPU)
	}
	if lim, ok := res.Facts[store.FactClientGoMemLimit]; ok && lim < goPeak/4 {
		t.Errorf("Go memory limit %.0f bytes for a step whose Go runtime held %.0f", lim, goPeak)
	}
	var sampled int
	for _, iv := range res.Intervals {
		if iv.Load != nil && iv.Load.ClientCPU >= 0 {
			sampled++
		}
	}
	if sampled < 2 {
		t.Errorf("%d of %d seconds carry CPU samples", sampled, len(res.Intervals))
	}
}
