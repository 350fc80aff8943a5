package runner

import (
	"context"
	"io"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/workload"
	"benchlab/internal/workload/sysbench"
)

// BenchmarkHarnessOverhead compares the runner's cost per point query on a
// cached SQLite table at 1 thread with a bare loop running the same prepared
// statement through the same driver, in 21 pairs of 300 ms turns in
// alternating order, and reports the medians: bare_ns/op, runner_ns/op and
// overhead_% (the median of the pairs' ratios).
// Target: overhead at most 2%, so the harness does not hide a change of a
// few percent (it was 10% before); see docs/design-notes.md#harness-overhead.
func BenchmarkHarnessOverhead(b *testing.B) {
	ctx := context.Background()
	db := enginetest.Open(b, engine.Target{Name: "bench", Engine: "sqlite"})
	p := workload.Params{Tables: 1, TableSize: 100_000, Threads: []int{1}, ReadTime: 2 * time.Second,
		WriteTime: time.Second, Tests: []string{"point-query"}, Seed: 1}
	steps, err := sysbench.Suite{}.Plan(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil { // load
		b.Fatal(err)
	}
	// The measured point-query step (the plan puts actions such as the
	// postload cleanup between the load and it).
	var point workload.Step
	for _, st := range steps[1:] {
		if st.Family == "point-query" && st.NewWorker != nil {
			point = st
		}
	}
	if point.NewWorker == nil {
		b.Fatal("no measured point-query step in the plan")
	}

	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.Prepare(ctx, "SELECT c FROM sbtest1 WHERE id=?", engine.Short)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	bare := func(d time.Duration) float64 {
		r := rand.New(rand.NewPCG(1, 2))
		n := 0
		start := time.Now()
		for time.Since(start) < d {
			for i := 0; i < 1000; i++ {
				if _, err := stmt.Query(ctx, r.Int64N(100_000)+1); err != nil {
					b.Fatal(err)
				}
			}
			n += 1000
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	harness := func() float64 {
		res, err := Measure(ctx, db, point, 1, 1, Options{})
		if err != nil {
			b.Fatal(err)
		}
		return res.Seconds * 1e9 / float64(res.Events)
	}
	// Short pairs in alternating order: this VM slows a CPU for 0.5-1.5 s
	// at a time, so 2-second rounds of one then the other put such a spell
	// on one side (overheads of -1% to 15% from run to run); a spell now
	// falls on both halves of a pair more often, and the median of the
	// pairs' ratios leaves out the ones it split.
	const pairs, turn = 21, 300 * time.Millisecond
	point.Warmup, point.Duration = 50*time.Millisecond, turn
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var bs, hs, ratios []float64
		for round := 0; round < pairs; round++ {
			var bn, hn float64
			if round%2 == 0 {
				bn = bare(turn)
				hn = harness()
			} else {
				hn = harness()
				bn = bare(turn)
			}
			bs, hs, ratios = append(bs, bn), append(hs, hn), append(ratios, hn/bn)
		}
		sort.Float64s(bs)
		sort.Float64s(hs)
		sort.Float64s(ratios)
		b.ReportMetric(bs[pairs/2], "bare_ns/op")
		b.ReportMetric(hs[pairs/2], "runner_ns/op")
		b.ReportMetric(100*(ratios[pairs/2]-1), "overhead_%")
	}
}
