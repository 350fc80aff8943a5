package runner

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"benchlab/internal/meter"
)

// This file is the runner's interleaving (spec workload.interleave): the
// targets of a repeat run one step side by side, and only one target's
// workers run at a time, in turns of a fixed length. A slow spell of the
// machine (a host that slows a virtual CPU for a second, a neighbour's
// burst) then falls on every target alike, and the targets' throughputs
// measured in the same window compare as a pair.
//
// Worker k of every target runs in one goroutine, a slot, on one thread
// when workers keep theirs: the host slows one virtual CPU at a time, so
// targets whose workers ran on different threads (and CPUs) would not share
// its slow spells. Measured on this 2-CPU VM with three SQLite targets at
// one thread and 20 ms turns, each target on a thread of its own gave a
// run-to-run spread of the A/A ratio of 7%.

// turns gives the targets of an interleaved step their turns: a slot runs
// target i's worker only while active is i. A turn ends when its time is up
// and every slot has finished the operation under way, so no two targets'
// operations overlap and each target's measured time is the sum of its
// turns from the end of the warm-up.
type turns struct {
	slice       time.Duration
	measureFrom time.Time
	targets     int

	// active is the target whose workers may run, -1 for none; workers
	// read it without the lock before every operation.
	active atomic.Int32

	mu   sync.Mutex
	cond *sync.Cond
	// running counts the slots inside a turn.
	running int
	// on is when the active target's turn began.
	on time.Time
	// total is each target's time in turns so far; measured only counts
	// the part after measureFrom, and spans holds those measured parts
	// (a profile keeps each target's samples from its own; turnprofile.go).
	total, measured []time.Duration
	spans           [][]span
	done            bool

	// counts, when set, reads benchlab's process counters at every turn's
	// boundaries, and costs[i] adds up target i's share (turncost.go);
	// written by run only, read once it returned.
	counts func() meter.SelfCounters
	costs  []meter.TurnTotals
}

// countCosts has run read benchlab's counters at each turn's boundaries
// and give each target what its turns counted.
func (g *turns) countCosts(read func() meter.SelfCounters) {
	g.counts, g.costs = read, make([]meter.TurnTotals, g.targets)
}

// newTurns makes the turns of n targets.
func newTurns(slice time.Duration, measureFrom time.Time, n int) *turns {
	g := &turns{slice: slice, measureFrom: measureFrom, targets: n,
		total: make([]time.Duration, n), measured: make([]time.Duration, n), spans: make([][]span, n)}
	g.cond = sync.NewCond(&g.mu)
	g.active.Store(-1)
	return g
}

// next parks a slot until a turn begins and returns its target, or false
// once the step is over. was says the slot comes from a turn.
func (g *turns) next(was bool) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if was {
		g.running--
		g.cond.Broadcast()
	}
	for g.active.Load() < 0 && !g.done {
		g.cond.Wait()
	}
	if g.done {
		return 0, false
	}
	g.running++
	return int(g.active.Load()), true
}

// spent is target i's time in turns up to now, the turn under way
// included.
func (g *turns) spent(i int, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.total[i]
	if int(g.active.Load()) == i && now.After(g.on) {
		d += now.Sub(g.on)
	}
	return d
}

// measuredTime is target i's time in turns after the warm-up, once the
// step is over.
func (g *turns) measuredTime(i int) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.measured[i]
}

// span is a stretch of time, from <= t < to.
type span struct{ from, to time.Time }

// measuredSpans are target i's turns after the warm-up, in time order,
// once the step is over.
func (g *turns) measuredSpans(i int) []span {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spans[i]
}

// run hands out the turns, target 0 first, until the step stops (stop set,
// ctx done) or its deadline passes; then it wakes every parked slot to
// return.
func (g *turns) run(ctx context.Context, stop *stopper, deadline time.Time) {
	defer func() {
		g.mu.Lock()
		g.done = true
		g.active.Store(-1)
		g.cond.Broadcast()
		g.mu.Unlock()
	}()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	// A turn's counters run from the read that ended the previous turn
	// (nothing runs between the two turns) to the read that ends it.
	var before meter.SelfCounters
	if g.counts != nil {
		before = g.counts()
	}
	for i := 0; ; i = (i + 1) % g.targets {
		if stop.Load() || ctx.Err() != nil || !time.Now().Before(deadline) {
			return
		}
		g.mu.Lock()
		g.on = time.Now()
		g.active.Store(int32(i))
		g.cond.Broadcast()
		g.mu.Unlock()
		t.Reset(min(g.slice, time.Until(deadline)))
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		g.mu.Lock()
		g.active.Store(-1)
		// The turn ends once the operations under way are done (a slot
		// returning for good counts as done: the step is stopping).
		for g.running > 0 && !stop.Load() && ctx.Err() == nil {
			g.cond.Wait()
		}
		off, on := time.Now(), g.on
		g.total[i] += off.Sub(on)
		var measured time.Duration
		if from := later(on, g.measureFrom); off.After(from) {
			measured = off.Sub(from)
			g.measured[i] += measured
			g.spans[i] = append(g.spans[i], span{from, off})
		}
		g.mu.Unlock()
		if g.counts != nil {
			after := g.counts()
			if measured > 0 {
				g.costs[i].Add(before, after, measured.Seconds()/off.Sub(on).Seconds(), measured.Seconds())
			}
			before = after
		}
	}
}

// leave records that a slot returns for good from a turn.
func (g *turns) leave() {
	g.mu.Lock()
	g.running--
	g.cond.Broadcast()
	g.mu.Unlock()
}

// startSlots starts an interleaved step's slots: slot (role ri, worker k)
// runs worker k of role ri of whichever target has the turn (runsOf[i] are
// target i's roles, alike for every target), each slot with its lane in c.
func startSlots(ctx context.Context, runsOf [][]*roleRun, g *turns, clock meter.Clock, win window, stop *stopper,
	lockThreads bool, c *crew) {
	measureFromNs, deadlineNs := clock.At(win.measureFrom), clock.At(win.deadline)
	for ri := range runsOf[0] {
		for k := range runsOf[0][ri].workers {
			ln := c.add(ctx)
			// A slot the watchdog leaves behind in an operation leaves its
			// turn, so that the turns end.
			ln.left = g.leave
			go func() {
				defer c.exit(ln)
				// As startWorkers' workers do, a slot keeps its thread when
				// the step's workers do.
				if lockThreads {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				was := false
				for {
					i, ok := g.next(was)
					if !ok {
						return
					}
					was = true
					rr := runsOf[i][ri]
					rr.locked = lockThreads
					// work returns when the turn is over, or for good when
					// the step stops (its deadline, ctx, a lost connection).
					work(ctx, rr.workers[k], rr.states[k], clock, measureFromNs, deadlineNs, stop, rr.errs, nil, rr, 0, func() {}, ln)
					if ln.gone {
						return
					}
					if stop.Load() || ctx.Err() != nil {
						g.leave()
						return
					}
				}
			}()
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
