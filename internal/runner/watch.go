package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"benchlab/internal/meter"
)

// This file is the step's watchdog: it fails an operation that runs past
// the operation timeout (Options.OpTimeout), and it ends a step whose
// workers do not return, a hung server's, without them: when the step has
// overrun its time by overrunBound, or a moment after an interrupt. A
// worker left behind in its operation then touches nothing the step's
// results are made of, and the time its operation had taken is recorded in
// the latency, so a stall shows in max and p99.9 instead of vanishing.

// ErrOpTimeout is the error of an operation failed by the operation
// timeout (spec workload.op_timeout).
var ErrOpTimeout = errors.New("operation timed out")

// ErrOverrun is wrapped by the error of a step whose workers did not return
// within overrunBound of its end.
var ErrOverrun = errors.New("step overran its time")

// interruptGrace is how long an interrupted step waits for the operations
// under way before it ends without them: a driver that honours its context
// returns at once, and Ctrl-C must stop a run within seconds.
const interruptGrace = 2 * time.Second

// overrunBound is how long after its end a step waits for its workers'
// operations before it ends failed without them: past the operation timeout
// with a margin (an operation whose driver honours its context has ended by
// then), and never less than 10 s.
func overrunBound(opTimeout, drain time.Duration) time.Duration {
	return max(10*time.Second, opTimeout+10*time.Second) + max(drain, 0)
}

// timeoutError is the error of an operation the watchdog timed out after
// it ran for d, keeping the error it ended with (a connection the
// interrupt closed stays engine.ErrConnLost).
func timeoutError(err error, d time.Duration) error {
	d = d.Round(time.Millisecond)
	if err == nil {
		return fmt.Errorf("%w: it ran for %s (workload.op_timeout)", ErrOpTimeout, d)
	}
	return fmt.Errorf("%w: it ran for %s (workload.op_timeout): %w", ErrOpTimeout, d, err)
}

// timedOutBit marks a lane's operation the watchdog timed out.
const timedOutBit = int64(1) << 62

// lane is one worker goroutine's operation under way, as its watchdog sees
// it. op is 0 between operations, -1 once the goroutine is abandoned, and
// otherwise the clock reading its operation started at plus one (with
// timedOutBit when it was timed out). The goroutine moves op from 0 and
// back with compare-and-swap, the watchdog swaps in -1, so exactly one of
// them owns the operation's end: a goroutine whose swap back fails was
// abandoned and returns without touching anything.
type lane struct {
	op atomic.Int64
	// cur is the worker state and from the start its latency counts from
	// (the intended start when paced) of the operation under way; the
	// goroutine writes them before it sets op, the watchdog reads them
	// only after it took op from the goroutine.
	cur  *workerState
	from int64
	// gone is set, by the goroutine alone, once it finds itself
	// abandoned.
	gone bool
	// ctx is the context of the goroutine's operations, cancelled (under
	// mu) when one times out and then made anew by the goroutine.
	parent context.Context
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelCauseFunc
	// left, when set, is called by the watchdog when it abandons the
	// goroutine in an operation (an interleaved slot leaves its turn).
	left func()
	// The padding keeps lanes, which their goroutines write on every
	// operation, off each other's cache lines.
	_ [64]byte
}

func newLane(parent context.Context) *lane {
	ln := &lane{parent: parent}
	ln.ctx, ln.cancel = context.WithCancelCause(parent)
	return ln
}

// begin marks an operation that starts at t0 (a clock reading) for worker
// s, its latency counted from from; false when the goroutine was
// abandoned, and must return.
func (ln *lane) begin(s *workerState, t0, from int64) bool {
	if ln.cur != s {
		ln.cur = s
	}
	ln.from = from
	return ln.op.CompareAndSwap(0, t0+1)
}

// endLate ends the operation begun at t0 when its goroutine could not
// swap op back to 0 (the loop tries that inline first, the common case):
// it reports whether the watchdog timed it out, and kept is false when the
// goroutine was abandoned meanwhile and must return without recording
// anything.
func (ln *lane) endLate(t0 int64) (timedOut, kept bool) {
	if ln.op.CompareAndSwap((t0+1)|timedOutBit, 0) {
		ln.mu.Lock()
		ln.ctx, ln.cancel = context.WithCancelCause(ln.parent)
		ln.mu.Unlock()
		return true, true
	}
	ln.gone = true
	return false, false
}

// crew is a step's worker goroutines and their watchdog.
type crew struct {
	lanes []*lane
	// wg counts the goroutines still to return: each calls Done when it
	// returns, unless abandoned in an operation, when the watchdog does.
	wg   sync.WaitGroup
	done chan struct{}
	// watched is closed when the watchdog has returned: what it did
	// (timeouts, stuck, longest, overran) is read after it.
	watched       chan struct{}
	clock         meter.Clock
	measureFromNs int64
	opTimeout     time.Duration
	// What the watchdog did, read once done is closed.
	timeouts atomic.Int64
	stuck    int
	longest  time.Duration
	overran  time.Duration
}

func newCrew(clock meter.Clock, measureFromNs int64, opTimeout time.Duration) *crew {
	return &crew{done: make(chan struct{}), watched: make(chan struct{}), clock: clock, measureFromNs: measureFromNs,
		opTimeout: opTimeout}
}

// add registers a goroutine about to start and returns its lane.
func (c *crew) add(parent context.Context) *lane {
	ln := newLane(parent)
	c.lanes = append(c.lanes, ln)
	c.wg.Add(1)
	return ln
}

// exit is called by a goroutine as it returns.
func (c *crew) exit(ln *lane) {
	if !ln.gone {
		c.wg.Done()
	}
}

// start closes done once every goroutine has returned or been abandoned,
// and runs the watchdog until then: operation timeouts while the step
// runs, the overrun bound past deadline, and the grace after ctx (the
// run's context) is done.
func (c *crew) start(ctx context.Context, deadline time.Time, bound time.Duration) <-chan struct{} {
	go func() { c.wg.Wait(); close(c.done) }()
	period := time.Second
	if c.opTimeout > 0 {
		period = min(period, max(c.opTimeout/10, time.Millisecond))
	}
	overrunAt := deadline.Add(bound)
	go func() {
		defer close(c.watched)
		tk := time.NewTicker(period)
		defer tk.Stop()
		interrupted := ctx.Done()
		var graceOver <-chan time.Time
		for {
			select {
			case <-c.done:
				return
			case <-interrupted:
				interrupted = nil
				graceOver = time.After(interruptGrace)
			case <-graceOver:
				c.abandon()
				return
			case now := <-tk.C:
				select {
				case <-c.done: // done and the tick came together
					return
				default:
				}
				c.timeOut()
				if !now.Before(overrunAt) {
					c.overran = now.Sub(deadline)
					c.abandon()
					return
				}
			}
		}
	}()
	return c.done
}

// timeOut cancels every operation under way for longer than the
// operation timeout.
func (c *crew) timeOut() {
	if c.opTimeout <= 0 {
		return
	}
	now := c.clock.Now()
	for _, ln := range c.lanes {
		v := ln.op.Load()
		if v <= 0 || v&timedOutBit != 0 || time.Duration(now-(v-1)) < c.opTimeout {
			continue
		}
		ln.mu.Lock()
		if ln.op.CompareAndSwap(v, v|timedOutBit) {
			ln.cancel(ErrOpTimeout)
			c.timeouts.Add(1)
		}
		ln.mu.Unlock()
	}
}

// abandon takes every goroutine's lane: a goroutine in an operation is
// left behind, its operation's time so far recorded in its worker's
// latency (when it started in the measured part); the others return on
// their own at their next operation.
func (c *crew) abandon() {
	now := c.clock.Now()
	for _, ln := range c.lanes {
		v := ln.op.Swap(-1)
		if v <= 0 {
			continue
		}
		lat := time.Duration(now - ln.from)
		if ln.from >= c.measureFromNs {
			meter.RecordLatency(ln.cur.hist, lat)
		}
		ln.cur.abandoned = true
		c.stuck++
		c.longest = max(c.longest, time.Duration(now-((v&^timedOutBit)-1)))
		if ln.left != nil {
			ln.left()
		}
		c.wg.Done()
	}
}

// overrunError is the error of a step the watchdog ended past its bound;
// nil when it did not. It waits for the watchdog to return, which it does
// once done is closed.
func (c *crew) overrunError(step string) error {
	<-c.watched
	if c.overran <= 0 {
		return nil
	}
	return fmt.Errorf("%s: %w by %s: %d operation(s) still under way after up to %s (a hung server or a stalled disk); "+
		"the step ended without them, their time so far is in its latency", step, ErrOverrun,
		c.overran.Round(time.Millisecond), c.stuck, c.longest.Round(time.Millisecond))
}
