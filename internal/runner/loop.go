package runner

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metrics"
	"benchlab/internal/workload"
)

// This file is the runner's loop: each worker's operations from the start
// of the step to its end, and how a step is told to stop. What the loop
// counts lands in a workerState (collect.go); when it runs is schedule.go's.

// stopper tells every worker of a step to stop: the flag they poll between
// operations, and the step context's cancel, which ends waits and long
// statements, at once or after drain (workload.Step.Drain).
type stopper struct {
	flag  atomic.Bool
	end   context.CancelFunc
	drain time.Duration
	once  sync.Once
	// lost is the first error that cost a worker its connection.
	lost atomic.Pointer[error]
	// stopped is when the step was first told to stop, as the time since
	// base plus one (0: not yet): the step's end for its measured time,
	// even if operations under way then end later.
	base    time.Time
	stopped atomic.Int64
}

// connLost ends the step because a worker's connection is gone.
func (s *stopper) connLost(err error) {
	s.lost.CompareAndSwap(nil, &err)
	s.Store(true)
}

// Store sets the flag; setting it to true also ends the step's context, at
// once or, with a drain time, once operations in flight have had it to
// finish (a lost connection or a dead server ends it at once).
func (s *stopper) Store(v bool) {
	if v && s.stopped.Load() == 0 {
		s.stopped.CompareAndSwap(0, int64(time.Since(s.base))+1)
	}
	s.flag.Store(v)
	if !v {
		return
	}
	if s.drain <= 0 || s.lost.Load() != nil {
		s.end()
		return
	}
	s.once.Do(func() { time.AfterFunc(s.drain, s.end) })
}

// at is when the step was first told to stop, and whether it was.
func (s *stopper) at() (time.Time, bool) {
	n := s.stopped.Load()
	return s.base.Add(time.Duration(n - 1)), n != 0
}

// Load reports whether the step is stopping.
func (s *stopper) Load() bool { return s.flag.Load() }

// work is one worker's loop: closed-loop, or paced when p is set.
// Operations that start during the warm-up are run but not counted; the loop
// ends at the deadline, when stop is set, when ctx (the step's context) is
// done, when the worker has done its quota of an op-bounded role, or when
// the step's watchdog abandoned its goroutine (ln). Operations run in ln's
// context, which the watchdog cancels when one runs past the operation
// timeout: that one fails, an error. An operation cut short by the end of
// the step, or that ends after it, counts neither as done nor as failed,
// but its latency (so far) is recorded, so a stall at the end shows.
//
// Longer than 120 lines on purpose: it is the per-operation hot loop, whose
// state (clock readings, counters, pacing) stays in one frame; helpers
// would add a call or a closure to every operation.
func work(ctx context.Context, w workload.Worker, s *workerState, clock metrics.Clock, measureFromNs, deadlineNs int64,
	stop *stopper, errs *errorLog, p *pacer, rr *roleRun, quota int64, finishOne func(), ln *lane) {
	waiter, _ := w.(workload.Waiter)
	if rr.role.Ops > 0 && quota == 0 {
		return
	}
	limit := rr.limit
	if b, ok := batcherOf(w, rr.role, limit != nil); ok {
		workBatches(ctx, b, s, rr, clock, measureFromNs, deadlineNs, stop, errs, ln)
		return
	}
	yielded := clock.Now()
	yp := &yielded
	if rr.passesElsewhere {
		yp = nil
	}
	var mine int64
	// A closed-loop operation that follows the previous one straight on
	// starts at the clock reading that ended it (chained): one clock read
	// per operation instead of two, about 40 ns of a ~4 us embedded point
	// query on this VM's clock. Its latency then includes the loop's own
	// bookkeeping since the previous operation, a few tens of ns. Anything
	// that may take longer in between (a pacer's or waiter's wait, a yield,
	// a histogram handover) reads the clock again.
	var next int64
	chained := false
	for !stop.Load() {
		if g := rr.turns; g != nil && int(g.active.Load()) != rr.target {
			return // the target's turn is over (turns.go)
		}
		var intendedNs int64
		if p != nil {
			intended, ok := p.wait(ctx, stop)
			if !ok {
				return
			}
			intendedNs = clock.At(intended)
		}
		if waiter != nil && !waiter.Wait(ctx) {
			return
		}
		var t0 int64
		if chained {
			t0 = next
		} else {
			t0 = clock.Now()
		}
		chained = p == nil && waiter == nil
		if p != nil {
			p.started(clock.Time(t0))
		}
		from := t0
		if p != nil {
			from = intendedNs
		}
		if !ln.begin(s, t0, from) {
			return // abandoned by the watchdog
		}
		tally, err := w.Op(ln.ctx)
		t1 := clock.Now()
		timedOut, kept := false, ln.op.CompareAndSwap(t0+1, 0)
		if !kept {
			timedOut, kept = ln.endLate(t0)
		}
		if !kept {
			w.Close() // the step ended without it: its session is the goroutine's to close
			return
		}
		lat := time.Duration(t1 - from)
		if timedOut {
			err = timeoutError(err, time.Duration(t1-t0))
		}
		if !timedOut && ((err != nil && ctx.Err() != nil) || t1 > deadlineNs) {
			// Cut short by the end of the step, or ended after it: no
			// event and no error, but its latency so far is a lower
			// bound of its own, and shows a stall the end would hide.
			if from >= measureFromNs {
				metrics.RecordLatency(s.hist, lat)
			}
			stop.Store(true)
			return
		}
		failed := err != nil
		last := false
		if limit != nil && from >= measureFromNs {
			var ok bool
			if ok, last = limit.take(); !ok {
				// Past the event limit, which another worker reached
				// first: not counted, as if cut short by the end.
				stop.Store(true)
				return
			}
		}
		// A failed operation counts as an error, and is no event: neither
		// it nor its statements add to any throughput (a target whose
		// operations fail must not look faster), and its latency is not
		// that of a done operation.
		done := tally.Statements
		if failed {
			done = 0
		}
		s.live.Record(lat, done, tally.Rows, failed)
		if from >= measureFromNs {
			s.statements += int64(done)
			s.retries += int64(tally.Retries)
			if tally.Retries > 0 {
				s.retried++
			}
			if failed {
				s.errors++
				if timedOut {
					// A timed-out operation's latency is at least the
					// timeout: the stall it was belongs in the latency.
					metrics.RecordLatency(s.hist, lat)
				}
			} else {
				s.events++
				s.rows += tally.Rows
				metrics.RecordLatency(s.hist, lat)
				if s.svc != nil {
					metrics.RecordLatency(s.svc, time.Duration(t1-t0))
				}
			}
			if k := tally.Kind; k >= 0 && k < len(s.kinds) {
				ks := &s.kinds[k]
				ks.retries += int64(tally.Retries)
				if failed {
					ks.errors++
				} else {
					ks.ops++
					metrics.RecordLatency(ks.hist, lat)
				}
			}
		}
		if failed && !errs.keep(err, stop) {
			return
		}
		if s.handoff.Load() {
			s.handOver(rr)
			chained = false
		}
		if last {
			stop.Store(true)
			return
		}
		if quota > 0 {
			if mine++; mine == quota {
				if p != nil {
					// A paced worker's share lasts until its schedule
					// ends, so a met rate measures as the rate itself.
					p.sleepUntil(ctx, stop, p.end(quota))
				}
				if rr.finished.Add(1) == rr.bounded {
					finishOne()
				}
				return
			}
		}
		if !pause(t1, deadlineNs, yp, stop, rr.locked) {
			return
		}
		if yp != nil && *yp == t1 {
			chained = false // it yielded
		}
		next = t1
	}
}

// keep logs a failed operation's error and says whether the worker may go
// on: not once the connection is lost, which stops the step.
func (l *errorLog) keep(err error, stop *stopper) bool {
	l.add(err)
	if errors.Is(err, engine.ErrConnLost) {
		stop.connLost(err)
		return false
	}
	return true
}

// pause ends the step when now passes the deadline (returning false), and
// otherwise passes through the Go scheduler if the worker has not for
// yieldEvery. A nil yielded never yields (ioPlan.passesElsewhere): a worker
// whose reads go through Go's network poller passes through the scheduler
// whenever one waits, and a yield there only wakes an idle processor's
// thread for nothing (at 64 polled workers, 8,000 thread wake-ups a second);
// a server client on swapped threads passes in its connection (package
// blockconn), which also covers operations longer than 10 ms. A worker locked to its
// thread (locked) unlocks it for the yield and locks the thread it comes
// back on: a locked goroutine's yield makes the runtime hand its processor
// to another thread, which finds the goroutine, hands the processor back and
// wakes the locked thread, which costs more than twice the futex calls of
// this hand-over (docs/design-notes.md#how-workers-wait-for-a-server). Moving
// thread once per yieldEvery costs a locked worker nothing that matters.
func pause(now, deadlineNs int64, yielded *int64, stop *stopper, locked bool) bool {
	if now >= deadlineNs {
		stop.Store(true)
		return false
	}
	if yielded != nil && now-*yielded >= yieldEvery {
		*yielded = now
		if locked {
			runtime.UnlockOSThread()
			runtime.Gosched()
			runtime.LockOSThread()
		} else {
			runtime.Gosched()
		}
	}
	return true
}

// workBatches is work for a Batcher in a step that is neither paced nor
// bounded: operations run batchSize at a time, and a batch that starts
// before measureFrom counts as warm-up.
func workBatches(ctx context.Context, b workload.Batcher, s *workerState, rr *roleRun, clock metrics.Clock,
	measureFromNs, deadlineNs int64, stop *stopper, errs *errorLog, ln *lane) {
	lat := make([]int64, batchSize)
	yielded := clock.Now()
	yp := &yielded
	if rr.passesElsewhere {
		yp = nil
	}
	for !stop.Load() {
		if g := rr.turns; g != nil && int(g.active.Load()) != rr.target {
			return // the target's turn is over (turns.go)
		}
		t0 := clock.Now()
		if !ln.begin(s, t0, t0) {
			return // abandoned by the watchdog
		}
		n, tally, err := b.OpBatch(ln.ctx, lat)
		t1 := clock.Now()
		timedOut, kept := false, ln.op.CompareAndSwap(t0+1, 0)
		if !kept {
			timedOut, kept = ln.endLate(t0)
		}
		if !kept {
			if c, ok := b.(interface{ Close() error }); ok {
				c.Close() // the step ended without it: its session is the goroutine's to close
			}
			return
		}
		if timedOut && n > 0 {
			err = timeoutError(err, time.Duration(t1-t0))
		}
		if err != nil && !timedOut && ctx.Err() != nil {
			return
		}
		failed := err != nil
		// The failed operation, the batch's last, is no event, and its
		// statements (its share of the batch's) count in no throughput.
		done, statements := n, tally.Statements
		if failed && n > 0 {
			done--
			statements -= tally.Statements / n
		}
		s.live.RecordBatch(lat[:n], statements, tally.Rows, failed)
		if t0 >= measureFromNs {
			if failed && n > 0 {
				s.errors++
			}
			s.events += int64(done)
			s.statements += int64(statements)
			s.rows += tally.Rows
			for _, ns := range lat[:done] {
				metrics.RecordLatency(s.hist, time.Duration(ns))
			}
		}
		if failed && !errs.keep(err, stop) {
			return
		}
		if s.handoff.Load() {
			s.handOver(rr)
		}
		if !pause(t1, deadlineNs, yp, stop, rr.locked) {
			return
		}
	}
}

// diedSoon waits up to a second for an engine's process to be seen gone,
// after an error that a server's death would cause, and returns why it died
// (nil when it lives on or has no process).
func diedSoon(db engine.DB) error {
	l, ok := db.(engine.Liveness)
	if !ok {
		return nil
	}
	for i := 0; i < 20; i++ {
		if err := l.Died(); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
