package runner

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// emptyWorker does no work of its own, so everything allocated while it runs
// is the runner's: its operations are kinded (as TPC-C's) so the per-kind
// path runs too.
type emptyWorker struct{ n int }

func (w *emptyWorker) Op(context.Context) (workload.Tally, error) {
	if w.n == 0 {
		sentinel.Store(new([16]byte))
	}
	w.n++
	return workload.Tally{Statements: 1, Rows: 1, Kind: w.n & 1}, nil
}
func (w *emptyWorker) Close() error    { return nil }
func (w *emptyWorker) Kinds() []string { return []string{"a", "b"} }

func emptyStep(d time.Duration, rate float64) workload.Step {
	newWorker := func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
		return &emptyWorker{}, nil
	}
	st := workload.Step{Name: "empty", Duration: d, Warmup: 100 * time.Millisecond, NewWorker: newWorker}
	if rate > 0 {
		st.NewWorker = nil
		st.Roles = []workload.Role{{Name: "paced", Rate: rate, NewWorker: newWorker}}
	}
	return st
}

// runnerAllocsPerOp measures a step of empty operations and returns the
// heap allocations per operation and the operations run.
func runnerAllocsPerOp(tb testing.TB, st workload.Step, threads int) (float64, int64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rs, err := MeasureRoles(context.Background(), nil, st, threads, 1, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		tb.Fatal(err)
	}
	var ops int64
	for _, r := range rs {
		ops += r.Events
	}
	// Warm-up operations run the same loop; count them too.
	var all int64
	for _, r := range rs {
		for _, iv := range r.Intervals {
			all += iv.Events
		}
	}
	if ops == 0 || all < ops {
		tb.Fatalf("%d measured operations, %d in the series", ops, all)
	}
	return float64(after.Mallocs-before.Mallocs) / float64(all), ops
}

// sentinel keeps the one allocation emptyWorker makes, on its first
// operation, so the test can see that it finds the worker loop's stacks.
var sentinel atomic.Pointer[[16]byte]

// loopAllocs runs st with every allocation profiled and returns the
// allocations made under the workers' loop (frames of runner.work,
// runner.workBatches or the pacer) and the operations run.
func loopAllocs(t *testing.T, st workload.Step, threads int) (allocs int64, ops int64) {
	t.Helper()
	prev := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = prev }()
	count := func() int64 {
		runtime.GC()
		runtime.GC()
		recs := make([]runtime.MemProfileRecord, 4096)
		n, ok := runtime.MemProfile(recs, true)
		for !ok {
			recs = make([]runtime.MemProfileRecord, n+1024)
			n, ok = runtime.MemProfile(recs, true)
		}
		var total int64
		for _, r := range recs[:n] {
			frames := runtime.CallersFrames(r.Stack())
			for {
				f, more := frames.Next()
				if strings.HasSuffix(f.Function, "runner.work") || strings.HasSuffix(f.Function, "runner.workBatches") ||
					strings.Contains(f.Function, "runner.(*pacer)") {
					total += r.AllocObjects
					break
				}
				if !more {
					break
				}
			}
		}
		return total
	}
	before := count()
	rs, err := MeasureRoles(context.Background(), nil, st, threads, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		for _, iv := range r.Intervals {
			ops += iv.Events
		}
	}
	return count() - before, ops
}

// TestRunnerAllocatesNothingPerOp runs closed-loop and paced steps of
// operations that allocate nothing but one sentinel per worker: everything
// else allocated under the workers' loop (clock reads, live counters,
// histograms, per-kind tallies, pacing) is the runner's, and must not grow
// with the operations. A time.Sleep's timer is made once per goroutine.
func TestRunnerAllocatesNothingPerOp(t *testing.T) {
	for _, c := range []struct {
		name    string
		st      workload.Step
		threads int
	}{
		{"closed-1", emptyStep(300*time.Millisecond, 0), 1},
		{"closed-4", emptyStep(300*time.Millisecond, 0), 4},
		{"paced", emptyStep(300*time.Millisecond, 20000), 2},
	} {
		// A loaded machine can stall a whole 300 ms step (no operation,
		// so no sentinel either): such a step says nothing and is run
		// again, up to 8 times.
		var allocs, ops int64
		for try := 1; try <= 8; try++ {
			allocs, ops = loopAllocs(t, c.st, c.threads)
			t.Logf("%s, try %d: %d ops, %d allocations under the loop", c.name, try, ops, allocs)
			if ops >= 1000 {
				break
			}
		}
		if ops < 1000 {
			t.Fatalf("%s: %d operations in each of 8 steps of 300 ms: too few to tell", c.name, ops)
		}
		if allocs < int64(c.threads) {
			t.Fatalf("%s: %d allocations under the loop, fewer than the workers' %d sentinels: the loop's frames were not found",
				c.name, allocs, c.threads)
		}
		if runner := allocs - int64(c.threads); runner > 2*int64(c.threads) {
			t.Errorf("%s: the runner allocated %d times in %d operations; want at most a timer per worker", c.name, runner, ops)
		}
	}
}

// BenchmarkRunnerLoop reports the runner's own cost per empty operation
// (ns/op from the measured part) and its allocations per operation at 1 and
// 8 workers.
func BenchmarkRunnerLoop(b *testing.B) {
	for _, threads := range []int{1, 8} {
		b.Run(map[int]string{1: "threads=1", 8: "threads=8"}[threads], func(b *testing.B) {
			for range b.N {
				st := emptyStep(time.Second, 0)
				per, ops := runnerAllocsPerOp(b, st, threads)
				b.ReportMetric(per, "runner_allocs/op")
				b.ReportMetric(float64(st.Duration.Nanoseconds())*float64(threads)/float64(ops), "runner_ns/op")
			}
		})
	}
}
