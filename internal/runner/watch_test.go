package runner

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// hanger runs 1 ms operations until its operation number stallAt, which
// stalls: it waits until release is closed, or for stall when release is
// nil, and gives up when its context ends only if honour is set (a driver
// blocked in a read that ignores its context does not).
type hanger struct {
	stallAt, n int
	stall      time.Duration
	release    chan struct{}
	honour     bool
	closed     *atomic.Int64
}

func (s *hanger) Op(ctx context.Context) (workload.Tally, error) {
	s.n++
	if s.n != s.stallAt {
		time.Sleep(time.Millisecond)
		return workload.Tally{Statements: 1}, nil
	}
	var done <-chan struct{}
	if s.honour {
		done = ctx.Done()
	}
	var over <-chan time.Time
	if s.release == nil {
		over = time.After(s.stall)
	}
	select {
	case <-s.release:
	case <-over:
	case <-done:
		return workload.Tally{}, context.Cause(ctx)
	}
	return workload.Tally{Statements: 1}, nil
}

func (s *hanger) Close() error {
	if s.closed != nil {
		s.closed.Add(1)
	}
	return nil
}

// stallStep is a step of d after a 100 ms warm-up whose one worker stalls
// at its operation stallAt (the 1,100th starts 1 s into the measured part).
func stallStep(d time.Duration, w *hanger) workload.Step {
	return workload.Step{Name: "stall", Warmup: 100 * time.Millisecond, Duration: d,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			return w, nil
		}}
}

// TestStallAtTheEndShowsInLatency stalls the worker's operation 1 s into a
// 2 s step, in fake time. An operation that ignores its context ends 3 s
// later, after the step: its full 3 s are in the latency's max (they were
// dropped before). One that honours it is cut short by the step's end: its
// 1 s so far is. Neither counts as an event or an error, and the step is ok.
func TestStallAtTheEndShowsInLatency(t *testing.T) {
	for _, c := range []struct {
		honour bool
		want   time.Duration
	}{{false, 3 * time.Second}, {true, time.Second}} {
		fake(t, func(t *testing.T, opt Options) {
			opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
			w := &hanger{stallAt: 1100, stall: 3 * time.Second, honour: c.honour}
			res, err := Measure(context.Background(), nil, stallStep(2*time.Second, w), 1, 1, opt)
			if err != nil || res.Status != store.StatusOK {
				t.Fatalf("honour %v: %v, status %s", c.honour, err, res.Status)
			}
			if !near(res.Latency.Max, c.want) || res.Latency.P999 < time.Millisecond {
				t.Errorf("honour %v: max %s p99.9 %s; want the stall's %s in max", c.honour, res.Latency.Max, res.Latency.P999, c.want)
			}
			if res.Events != 999 || res.Errors != 0 {
				t.Errorf("honour %v: %d events, %d errors; want the 999 operations before the stall, no error", c.honour, res.Events, res.Errors)
			}
		})
	}
}

// TestOpTimeoutFailsOperation stalls an operation that honours its context
// for 30 s, 1 s into a 3 s step with a 500 ms operation timeout, in fake
// time: it fails with ErrOpTimeout within the watchdog's period of the
// timeout, counts as one error, its time is in the latency's max, and the
// worker goes on with its next operations.
func TestOpTimeoutFailsOperation(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
		opt.OpTimeout = 500 * time.Millisecond
		w := &hanger{stallAt: 1100, stall: 30 * time.Second, honour: true}
		res, err := Measure(context.Background(), nil, stallStep(3*time.Second, w), 1, 1, opt)
		if err != nil || res.Status != store.StatusOK {
			t.Fatalf("%v, status %s", err, res.Status)
		}
		if res.Errors != 1 || len(res.ErrorSamples) != 1 || !strings.Contains(res.ErrorSamples[0], ErrOpTimeout.Error()) {
			t.Errorf("%d errors %q; want one timed-out operation", res.Errors, res.ErrorSamples)
		}
		if res.Latency.Max < 500*time.Millisecond || res.Latency.Max > 550*time.Millisecond {
			t.Errorf("max %s; want the timed-out operation's 500-550 ms", res.Latency.Max)
		}
		// 1,000 operations before the stall, about 1,450 after it.
		if res.Events < 2400 || res.Events > 2500 {
			t.Errorf("%d events; want the worker to go on after the timeout (about 2,450)", res.Events)
		}
	})
}

// TestOverrunEndsStep stalls an operation that ignores its context and
// never ends by itself, 1 s into a 2 s step, in fake time: the step ends
// overrunBound after its time, failed with ErrOverrun naming the stuck
// operation, with the stall so far in its latency; the worker's session is
// closed by its goroutine once the operation returns, not under it.
func TestOverrunEndsStep(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
		opt.OpTimeout = time.Second
		var closed atomic.Int64
		w := &hanger{stallAt: 1100, release: make(chan struct{}), closed: &closed}
		start := time.Now()
		res, err := Measure(context.Background(), nil, stallStep(2*time.Second, w), 1, 1, opt)
		took := time.Since(start)
		bound := overrunBound(opt.OpTimeout, 0)
		if !errors.Is(err, ErrOverrun) || res.Status != store.StatusFailed {
			t.Fatalf("%v, status %s; want the overrun", err, res.Status)
		}
		if want := 2100*time.Millisecond + bound; took < want || took > want+time.Second {
			t.Errorf("step took %s; want its 2.1 s and the %s bound", took, bound)
		}
		if !strings.Contains(err.Error(), "1 operation(s) still under way") || !strings.Contains(res.ErrorSamples[0], "overran") {
			t.Errorf("error %v, samples %q", err, res.ErrorSamples)
		}
		if res.Latency.Max < bound {
			t.Errorf("max %s; want the stall so far, over %s", res.Latency.Max, bound)
		}
		if closed.Load() != 0 {
			t.Error("the session was closed under its stuck operation")
		}
		close(w.release)
		for closed.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
	})
}

// TestInterruptWithHungWorker cancels a minute's step 1.5 s in, while its
// worker is stuck in an operation that ignores its context, in fake time:
// the step returns interruptGrace after the cancel, interrupted, with the
// operations measured before the stall.
func TestInterruptWithHungWorker(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
		ctx, cancel := context.WithCancel(context.Background())
		w := &hanger{stallAt: 1100, release: make(chan struct{})}
		time.AfterFunc(1500*time.Millisecond, cancel)
		start := time.Now()
		res, err := Measure(ctx, nil, stallStep(time.Minute, w), 1, 1, opt)
		if took := time.Since(start); took != 1500*time.Millisecond+interruptGrace {
			t.Errorf("took %s to stop; want the cancel's 1.5 s and %s", took, interruptGrace)
		}
		if !errors.Is(err, context.Canceled) || res.Status != store.StatusInterrupted {
			t.Fatalf("%v, status %s", err, res.Status)
		}
		if res.Events != 999 || res.Latency.Max < 2*time.Second {
			t.Errorf("%d events, max %s; want the 999 before the stall, and the stall so far in max", res.Events, res.Latency.Max)
		}
		close(w.release)
	})
}

// TestOverrunEndsCell runs a step that overruns (its operation hangs,
// ignoring its context) before another step on a real SQLite target, in
// fake time: the cell fails with ErrOverrun and does not start the next
// step, which would only hang on the same server.
func TestOverrunEndsCell(t *testing.T) {
	drv, ok := engine.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
		w := &hanger{stallAt: 1100, release: make(chan struct{})}
		var sink memSink
		out := RunCell(context.Background(), Cell{Target: engine.Target{Name: "t", Engine: "sqlite"}, Driver: drv,
			Steps: []workload.Step{stallStep(2*time.Second, w), sleeperStep(time.Millisecond, 1)}, Threads: []int{1},
			DataDir: t.TempDir() + "/data", Seed: 1, Options: opt}, &sink)
		close(w.release)
		if out.Status != store.StatusFailed || !errors.Is(out.Err, ErrOverrun) {
			t.Fatalf("cell %s: %v; want failed by the overrun", out.Status, out.Err)
		}
		if len(sink.results) != 1 || sink.results[0].Test != "stall" {
			t.Errorf("%d results; want the overrun step's alone", len(sink.results))
		}
	})
}

// TestOverrunEndsInterleavedStep hangs target 1's worker (its 300th
// operation waits, ignoring its context) in an interleaved step of two
// targets in 50 ms turns, in fake time: the turns end, the step ends
// overrunBound after its time, and each target's result is failed with
// ErrOverrun, target 1's with the stall so far in its max latency.
func TestOverrunEndsInterleavedStep(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
		release := make(chan struct{})
		st := workload.Step{Name: "turns", Warmup: 100 * time.Millisecond, Duration: time.Second,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				w := &hanger{}
				if db.(turnDB) == 1 {
					w.stallAt, w.release = 300, release
				}
				return w, nil
			}}
		parts := []stepPart{{db: turnDB(0)}, {db: turnDB(1)}}
		rs, errs := measureParts(context.Background(), parts, st, 1, 50*time.Millisecond, opt)
		close(release)
		for i := range parts {
			if !errors.Is(errs[i], ErrOverrun) || rs[i][0].Status != store.StatusFailed {
				t.Errorf("target %d: %v, status %s; want failed by the overrun", i, errs[i], rs[i][0].Status)
			}
		}
		if max := rs[1][0].Latency.Max; max < overrunBound(0, 0) {
			t.Errorf("target 1: max %s; want the stall so far, over %s", max, overrunBound(0, 0))
		}
	})
}
