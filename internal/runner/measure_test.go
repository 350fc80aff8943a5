package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// sleeper is a worker whose events take a fixed time; every tenth fails.
type sleeper struct {
	d    time.Duration
	n    int
	msgs int
}

func (s *sleeper) Op(ctx context.Context) (workload.Tally, error) {
	time.Sleep(s.d)
	s.n++
	if s.n%10 == 0 {
		return workload.Tally{Statements: 1}, fmt.Errorf("boom %d", s.n%(10*max(s.msgs, 1)))
	}
	return workload.Tally{Statements: 3, Rows: 2}, nil
}

func (s *sleeper) Close() error { return nil }

func sleeperStep(d time.Duration, msgs int) workload.Step {
	return workload.Step{Name: "sleep", Warmup: 300 * time.Millisecond, Duration: 1200 * time.Millisecond,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			return &sleeper{d: d, msgs: msgs}, nil
		}}
}

// TestMeasureCountsAndSeries runs 2 workers of 2 ms operations, every
// tenth failing, for a 300 ms warm-up and 1.2 s in fake time: each worker
// runs 150 operations in the warm-up, which are not counted, then 600, of
// which 60 fail (its 160th, 170th, ... 750th). The 750th ends at the
// deadline itself, where it races the deadline's timer: it counts as an
// error, or is cut short and not counted at all.
func TestMeasureCountsAndSeries(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		res, err := Measure(context.Background(), nil, sleeperStep(2*time.Millisecond, 1), 2, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != store.StatusOK {
			t.Fatalf("status %s", res.Status)
		}
		if res.Events != 1080 || res.Errors < 118 || res.Errors > 120 || res.Seconds != 1.2 {
			t.Errorf("%d events, %d errors in %.3f s; want 1080 and 118-120 in 1.2 s", res.Events, res.Errors, res.Seconds)
		}
		// A failed operation counts as an error, but no event, and neither
		// it nor its statement count in any throughput; it has no rows.
		if res.Statements != 3*res.Events || res.Rows != 2*res.Events {
			t.Errorf("statements %d rows %d for %d done and %d failed operations", res.Statements, res.Rows, res.Events, res.Errors)
		}
		if len(res.ErrorSamples) != 1 || res.ErrorSamples[0] != "boom 0" {
			t.Errorf("error samples %q, want one distinct message", res.ErrorSamples)
		}
		if !near(res.Latency.P50, 2*time.Millisecond) || !near(res.Latency.Max, 2*time.Millisecond) {
			t.Errorf("p50 %s max %s, want 2 ms", res.Latency.P50, res.Latency.Max)
		}
		// Second -1 holds the warm-up's 300 operations (it is 300 ms
		// long: seconds are aligned to the end of the warm-up), seconds 0
		// and 1 the measured ones; the operation that ends at the end of
		// the warm-up may land on either side.
		var warm, measured int64
		for _, iv := range res.Intervals {
			n := iv.Events + iv.Errors
			if iv.Sec < 0 {
				warm += n
			} else {
				measured += n
			}
			if iv.Events > 0 && (iv.P95 <= 0 || iv.Max < iv.P95) {
				t.Errorf("interval %d: p95 %s max %s", iv.Sec, iv.P95, iv.Max)
			}
		}
		if warm < 298 || warm > 300 || warm+measured < 1498 || len(res.Intervals) != 3 {
			t.Errorf("series %+v: %d warm-up and %d measured operations, want 300 and 1200 in 3 seconds", res.Intervals, warm, measured)
		}
	})
}

func TestMeasureManyErrorMessages(t *testing.T) {
	res, _ := Measure(context.Background(), nil, sleeperStep(time.Millisecond, 50), 1, 1, Options{})
	if len(res.ErrorSamples) != maxErrorSamples {
		t.Errorf("%d samples kept, want %d", len(res.ErrorSamples), maxErrorSamples)
	}
}

// TestMeasureCancel cancels a step of a minute 800 ms after it starts, in
// fake time: it stops then, interrupted, with the 500 ms measured after its
// 300 ms warm-up.
func TestMeasureCancel(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		ctx, cancel := context.WithCancel(context.Background())
		st := sleeperStep(time.Millisecond, 1)
		st.Duration = time.Minute
		time.AfterFunc(800*time.Millisecond, cancel)
		start := time.Now()
		res, err := Measure(ctx, nil, st, 2, 1, opt)
		if !errors.Is(err, context.Canceled) || res.Status != store.StatusInterrupted {
			t.Fatalf("err %v status %s", err, res.Status)
		}
		// A worker may start one more operation at the instant of the
		// cancel, which ends 1 ms later.
		if el := time.Since(start); el < 800*time.Millisecond || el > 801*time.Millisecond {
			t.Errorf("took %s to stop, want the 800 ms to the cancel", el)
		}
		if n := res.Events + res.Errors; n < 998 || n > 1002 || res.Seconds < 0.5 || res.Seconds > 0.501 {
			t.Errorf("partial result: %d operations in %.3f s, want 1000 of 1 ms by 2 workers in 0.5 s", n, res.Seconds)
		}
	})
}

func TestWorkerFailsToStart(t *testing.T) {
	st := workload.Step{Name: "x", Duration: time.Second,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			if id == 1 {
				return nil, errors.New("no connection")
			}
			return &sleeper{d: time.Millisecond}, nil
		}}
	res, err := Measure(context.Background(), nil, st, 2, 1, Options{})
	if err == nil || res.Status != store.StatusFailed || res.ErrorSamples[0] != "no connection" {
		t.Fatalf("err %v result %+v", err, res)
	}
}

func TestWorkerSeedsDiffer(t *testing.T) {
	seen := map[uint64]bool{}
	for _, step := range []string{"a", "b"} {
		for th := 1; th <= 2; th++ {
			for w := 0; w < th; w++ {
				s := WorkerSeed(7, step, th, w)
				if seen[s] {
					t.Fatalf("duplicate seed for %s/%d/%d", step, th, w)
				}
				seen[s] = true
			}
		}
	}
	if WorkerSeed(7, "a", 1, 0) != WorkerSeed(7, "a", 1, 0) {
		t.Fatal("seeds not deterministic")
	}
}

// dyingDB is an engine whose process "dies" at a given time.
type dyingDB struct{ at time.Time }

func (d dyingDB) Info(ctx context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (d dyingDB) Close() error                                  { return nil }
func (d dyingDB) Died() error {
	if time.Now().After(d.at) {
		return errors.New("server process 42 exited unexpectedly")
	}
	return nil
}

// TestStepStopsWhenServerDies checks that a step whose engine process dies
// 800 ms in ends at the next second's check, at 1.3 s (seconds are aligned
// to the end of the 300 ms warm-up), failed, with the cause first among its
// errors.
func TestStepStopsWhenServerDies(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		st := sleeperStep(time.Millisecond, 1)
		st.Duration = time.Minute
		start := time.Now()
		res, err := Measure(context.Background(), dyingDB{at: time.Now().Add(800 * time.Millisecond)}, st, 1, 1, opt)
		if err == nil || res.Status != store.StatusFailed {
			t.Fatalf("err %v status %s, want a failure", err, res.Status)
		}
		// The operation under way at the check ends 1 ms later.
		if el := time.Since(start); el < 1300*time.Millisecond || el > 1301*time.Millisecond {
			t.Errorf("step ran %s, want to its first check after the death, at 1.3 s", el)
		}
		if !strings.Contains(res.ErrorSamples[0], "exited unexpectedly") {
			t.Errorf("error samples %q", res.ErrorSamples)
		}
	})
}

// kindDB is a DB that only says what kind of engine it is: reached over a
// socket (Remote) or called through cgo (CallsC), for the runner's choices of
// IO mode and processors.
type kindDB struct{ remote, callsC bool }

func (kindDB) Info(context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (kindDB) Close() error                              { return nil }
func (d kindDB) Remote() bool                            { return d.remote }
func (d kindDB) CallsC() bool                            { return d.callsC }

// TestPolledIOWhenWorkersOutnumberProcs checks that workers of a remote DB
// are told to wait through the poller only when they outnumber both
// GOMAXPROCS and spreadPerCPU per CPU, and never those of other engines (in fake
// time, as TestSpareProcessorForCWorkers).
func TestPolledIOWhenWorkersOutnumberProcs(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		procs := runtime.GOMAXPROCS(0)
		many := max(procs, spreadPerCPU*runtime.NumCPU()) + 1
		for _, c := range []struct {
			db      engine.DB
			threads int
			want    bool
		}{{kindDB{remote: true}, procs, false}, {kindDB{remote: true}, many - 1, false}, {kindDB{remote: true}, many, true},
			{kindDB{}, many, false}, {kindDB{callsC: true}, many, false}} {
			var polled, other atomic.Int32
			st := workload.Step{Name: "io", Duration: 50 * time.Millisecond,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					if engine.PolledIO(ctx) {
						polled.Add(1)
					} else {
						other.Add(1)
					}
					return &sleeper{d: time.Millisecond}, nil
				}}
			res, err := Measure(context.Background(), c.db, st, c.threads, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := res.Facts["client_polled_io"]; ok != c.db.(kindDB).remote || (ok && (f == 1) != c.want) {
				t.Errorf("db %+v, %d threads: client_polled_io fact %v (present %v)", c.db, c.threads, f, ok)
			}
			if got := polled.Load() == int32(c.threads); got != c.want || polled.Load()+other.Load() != int32(c.threads) {
				t.Errorf("db %+v, %d threads on %d procs: %d polled, %d not; want polled %v", c.db, c.threads, procs,
					polled.Load(), other.Load(), c.want)
			}
		}
	})
}

// TestSpareProcessorForCWorkers checks that a step of an engine called
// through cgo runs with one processor more than its workers when they would
// otherwise take every processor, as do server clients that block in their
// reads while outnumbering the processors, and that GOMAXPROCS is restored
// after. It runs in fake time, so that every worker runs operations however
// loaded the machine (in 50 ms of real time under -race on a loaded machine
// one did not).
func TestSpareProcessorForCWorkers(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		procs := runtime.GOMAXPROCS(0)
		type tc struct {
			db      engine.DB
			threads int
			want    int
		}
		cases := []tc{{kindDB{callsC: true}, procs, procs + 1}, {kindDB{callsC: true}, procs + 2, procs + 3},
			{kindDB{remote: true}, procs, procs}}
		// Server clients between GOMAXPROCS and spreadPerCPU per CPU block
		// in their reads with a processor each and one spare; beyond, they
		// share the processors through the poller.
		if spread := spreadPerCPU * runtime.NumCPU(); spread > procs {
			cases = append(cases, tc{kindDB{remote: true}, spread, spread + 1})
		}
		cases = append(cases, tc{kindDB{remote: true}, max(procs, spreadPerCPU*runtime.NumCPU()) + 1, procs})
		if procs > 1 { // fewer workers than processors: one is idle already
			cases = append(cases, tc{kindDB{callsC: true}, procs - 1, procs})
		}
		for _, c := range cases {
			var seen atomic.Int32
			st := workload.Step{Name: "c", Duration: 50 * time.Millisecond,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					return opHook{&sleeper{d: time.Millisecond}, func() { seen.Store(int32(runtime.GOMAXPROCS(0))) }}, nil
				}}
			res, err := Measure(context.Background(), c.db, st, c.threads, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Facts["client_gomaxprocs"]; int(got) != c.want {
				t.Errorf("db %+v, %d threads: client_gomaxprocs fact %v, want %d", c.db, c.threads, got, c.want)
			}
			if int(seen.Load()) != c.want {
				t.Errorf("db %+v, %d threads: GOMAXPROCS %d during the step, want %d", c.db, c.threads, seen.Load(), c.want)
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Fatalf("GOMAXPROCS %d after the step, want %d restored", got, procs)
			}
		}
	})
}

// opHook calls f before each operation of w.
type opHook struct {
	workload.Worker
	f func()
}

func (h opHook) Op(ctx context.Context) (workload.Tally, error) {
	h.f()
	return h.Worker.Op(ctx)
}

// batcher is a workload.Batcher whose operations take d each: every fourth
// finds no row, and every tenth batch fails at its fifth operation. It counts
// what it did, and which entry point ran it.
type batcher struct {
	d                   time.Duration
	ops, rows, failures int64
	batches, singles    int64
}

func (b *batcher) Op(ctx context.Context) (workload.Tally, error) {
	b.singles++
	time.Sleep(b.d)
	b.ops++
	return workload.Tally{Statements: 1, Rows: 1}, nil
}

func (b *batcher) OpBatch(ctx context.Context, lat []int64) (int, workload.Tally, error) {
	b.batches++
	var t workload.Tally
	for i := range lat {
		start := time.Now()
		time.Sleep(b.d)
		lat[i] = int64(time.Since(start))
		b.ops++
		t.Statements++
		if b.ops%4 != 0 {
			t.Rows++
		}
		if b.batches%10 == 0 && i == 4 {
			if ctx.Err() != nil {
				// The step ended while this batch ran: the runner takes
				// an error then for cancelled work and counts none of
				// the batch, so neither does the worker's own tally.
				b.ops -= int64(i + 1)
				return i + 1, t, errors.New("batch failed")
			}
			b.failures++
			return i + 1, t, errors.New("batch failed")
		}
	}
	b.rows += t.Rows
	return len(lat), t, nil
}

func (b *batcher) Close() error { return nil }

// TestBatcherCountsEveryOperation checks that the runner runs a Batcher's
// operations in batches in an unpaced, unbounded step and counts each one:
// events, statements, rows, errors, latencies and the 1-second series agree
// with what the worker did; paced and bounded roles still run one operation
// at a time.
func TestBatcherCountsEveryOperation(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		var workers []*batcher
		newBatcher := func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			b := &batcher{d: 200 * time.Microsecond}
			workers = append(workers, b)
			return b, nil
		}
		st := workload.Step{Name: "batch", Duration: 1200 * time.Millisecond, NewWorker: newBatcher}
		res, err := Measure(context.Background(), nil, st, 2, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		var ops, failures, batches, singles int64
		for _, w := range workers {
			ops, failures, batches, singles = ops+w.ops, failures+w.failures, batches+w.batches, singles+w.singles
		}
		if singles != 0 || batches == 0 {
			t.Fatalf("%d single operations and %d batches; want batches only", singles, batches)
		}
		// A failed operation is an error, not an event, and its statement
		// counts in no throughput.
		if res.Events != ops-failures || res.Statements != ops-failures || res.Errors != failures || failures == 0 {
			t.Errorf("events %d statements %d errors %d; the workers did %d operations, %d failed", res.Events, res.Statements,
				res.Errors, ops, failures)
		}
		if res.Rows < ops*7/10 || res.Rows > ops*8/10 {
			t.Errorf("rows %d of %d operations, want about 3 in 4", res.Rows, ops)
		}
		if res.Latency.P50 < 200*time.Microsecond || res.Latency.P50 > 5*time.Millisecond {
			t.Errorf("p50 %s, want the 200 us of one operation, not a batch's", res.Latency.P50)
		}
		if got := res.Facts["client_ops_per_call"]; got != batchSize {
			t.Errorf("client_ops_per_call fact %v, want %d", got, batchSize)
		}
		var series int64
		for _, iv := range res.Intervals {
			series += iv.Events
		}
		if series != ops-failures {
			t.Errorf("1-second series count %d operations, the workers did %d, %d failed", series, ops, failures)
		}

		// A paced role and a bounded one: one operation per call.
		workers = nil
		st = workload.Step{Name: "single", Duration: 300 * time.Millisecond, Roles: []workload.Role{
			{Name: "paced", Threads: 1, Rate: 200, NewWorker: newBatcher},
			{Name: "bounded", Threads: 1, Ops: 50, NewWorker: newBatcher}}}
		rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if got := r.Facts["client_ops_per_call"]; got != 1 {
				t.Errorf("role %s: client_ops_per_call fact %v, want 1", r.Role.Name, got)
			}
		}
		for _, w := range workers {
			if w.batches != 0 || w.singles == 0 {
				t.Errorf("paced or bounded worker ran %d batches and %d single operations; want singles only", w.batches, w.singles)
			}
		}
	})
}

// TestPauseYieldsJustUnderPreemption checks when a worker passes through the
// scheduler: once yieldEvery has passed since the last time, which must stay
// under the 10 ms after which Go's monitor preempts a goroutine by force, and
// never while the step's deadline has passed.
func TestPauseYieldsJustUnderPreemption(t *testing.T) {
	if yieldEvery >= int64(10*time.Millisecond) || yieldEvery < int64(time.Millisecond) {
		t.Fatalf("yieldEvery = %v, want between 1 ms and Go's 10 ms preemption", time.Duration(yieldEvery))
	}
	stop := &stopper{end: func() {}}
	const start, deadline = int64(1e9), int64(2e9)
	yielded := start
	if !pause(start+yieldEvery-1, deadline, &yielded, stop, false) || yielded != start {
		t.Fatalf("yielded moved to %d before yieldEvery passed", yielded)
	}
	at := start + yieldEvery
	if !pause(at, deadline, &yielded, stop, false) || yielded != at {
		t.Fatalf("yielded = %d after yieldEvery, want %d", yielded, at)
	}
	// A polled worker (nil) never yields, and still stops at the deadline.
	if !pause(at+10*yieldEvery, deadline, nil, stop, false) {
		t.Fatal("pause without yields ended the step before the deadline")
	}
	if pause(deadline, deadline, &yielded, stop, false) || !stop.Load() {
		t.Fatal("pause at the deadline did not end the step")
	}
	if yielded != at {
		t.Fatalf("pause yielded at the deadline (yielded = %d)", yielded)
	}
}

// kinded is a worker with two kinds of operation: "fast" (1 in 4, no
// wait) and "slow" (3 in 4, a 3 ms sleep, every third of which fails).
type kinded struct{ n, fast, slow, slowFailed int64 }

func (k *kinded) Kinds() []string { return []string{"fast", "slow"} }

func (k *kinded) Op(ctx context.Context) (workload.Tally, error) {
	k.n++
	if k.n%4 == 0 {
		k.fast++
		return workload.Tally{Statements: 1, Kind: 0}, nil
	}
	k.slow++
	time.Sleep(3 * time.Millisecond)
	if k.slow%3 == 0 {
		k.slowFailed++
		return workload.Tally{Statements: 1, Kind: 1}, errors.New("slow failed")
	}
	return workload.Tally{Statements: 1, Kind: 1}, nil
}

func (k *kinded) Close() error { return nil }

// TestKindFacts checks that a Kinded worker's operations are counted and
// timed per kind, as facts of the step's result.
func TestKindFacts(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		var workers []*kinded
		st := workload.Step{Name: "mix", Duration: 600 * time.Millisecond,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				k := &kinded{}
				workers = append(workers, k)
				return k, nil
			}}
		res, err := Measure(context.Background(), nil, st, 2, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		var fast, slow, failed int64
		for _, w := range workers {
			fast, slow, failed = fast+w.fast, slow+w.slow, failed+w.slowFailed
		}
		// The operation each worker had under way when the step ended is not
		// counted (at most one per worker).
		near := func(got float64, did int64) bool { return int64(got) <= did && int64(got) >= did-int64(len(workers)) }
		f := res.Facts
		if !near(f["fast_ops"], fast) || !near(f["slow_ops"], slow-failed) || !near(f["slow_errors"], failed) || f["fast_errors"] != 0 ||
			int64(f["fast_ops"]+f["slow_ops"]) != res.Events {
			t.Errorf("facts %v; the workers did %d fast, %d slow (%d failed), the result counts %d", f, fast, slow, failed, res.Events)
		}
		if f["fast_p50_ms"] >= 1 || f["slow_p50_ms"] < 2.9 || f["slow_max_ms"] < f["slow_p99_ms"] {
			t.Errorf("per-kind latency: fast p50 %v ms, slow p50 %v p99 %v max %v ms; want fast well under slow's 3 ms",
				f["fast_p50_ms"], f["slow_p50_ms"], f["slow_p99_ms"], f["slow_max_ms"])
		}
	})
}

// slowOp takes d unless its context ends first.
type slowOp struct {
	d                   time.Duration
	finished, cancelled *atomic.Int64
}

func (s *slowOp) Op(ctx context.Context) (workload.Tally, error) {
	select {
	case <-time.After(s.d):
		s.finished.Add(1)
		return workload.Tally{Statements: 1}, nil
	case <-ctx.Done():
		s.cancelled.Add(1)
		return workload.Tally{Statements: 1}, ctx.Err()
	}
}

func (s *slowOp) Close() error { return nil }

// TestDrainLetsOperationsFinish runs 400 ms operations in a 1 s step: the
// third is under way when the step ends. With a drain time it finishes
// instead of being cancelled; either way it is not counted.
func TestDrainLetsOperationsFinish(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		for _, drain := range []time.Duration{0, 2 * time.Second} {
			var finished, cancelled atomic.Int64
			st := workload.Step{Name: "drain", Duration: time.Second, Drain: drain,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					return &slowOp{d: 400 * time.Millisecond, finished: &finished, cancelled: &cancelled}, nil
				}}
			res, err := Measure(context.Background(), nil, st, 1, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := [2]int64{2, 1} // finished, cancelled without a drain
			if drain > 0 {
				want = [2]int64{3, 0}
			}
			if got := [2]int64{finished.Load(), cancelled.Load()}; got != want || res.Events != 2 || res.Errors != 0 {
				t.Errorf("drain %s: %d finished, %d cancelled, %d events, %d errors; want %v finished/cancelled, 2 events, 0 errors",
					drain, got[0], got[1], res.Events, res.Errors, want)
			}
		}
	})
}
