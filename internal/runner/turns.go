package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the runner's interleaving (spec workload.interleave): the
// targets of a repeat run one step side by side, and only one target's
// workers run at a time, in turns of a fixed length. A slow spell of the
// machine (a host that slows a virtual CPU for a second, a neighbour's
// burst) then falls on every target alike, and the targets' throughputs
// measured in the same window compare as a pair.

// turns gives the targets of an interleaved step their turns: target i's
// workers run only while active is i. A turn ends when its time is up and
// every worker of its target has finished the operation under way, so no
// two targets' operations overlap and each target's measured time is the
// sum of its turns from the end of the warm-up.
type turns struct {
	slice       time.Duration
	measureFrom time.Time

	// active is the target whose workers may run, -1 for none; workers
	// read it without the lock before every operation.
	active atomic.Int32

	mu   sync.Mutex
	cond *sync.Cond
	// idle counts, per target, the workers parked or gone, left those
	// gone; workers is each target's number of workers.
	idle, left, workers []int
	// on is when the active target's turn began.
	on time.Time
	// total is each target's time in turns so far; measured only counts
	// the part after measureFrom.
	total, measured []time.Duration
	done            bool
}

// newTurns makes the turns of n targets, with workers[i] workers each.
func newTurns(slice time.Duration, measureFrom time.Time, workers []int) *turns {
	g := &turns{slice: slice, measureFrom: measureFrom, workers: workers, idle: make([]int, len(workers)),
		left:  make([]int, len(workers)),
		total: make([]time.Duration, len(workers)), measured: make([]time.Duration, len(workers))}
	g.cond = sync.NewCond(&g.mu)
	g.active.Store(-1)
	return g
}

// wait parks a worker of target me until its target's turn, and says
// whether it may go on (false once the step is over).
func (g *turns) wait(me int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idle[me]++
	g.cond.Broadcast()
	for int(g.active.Load()) != me && !g.done {
		g.cond.Wait()
	}
	g.idle[me]--
	return !g.done
}

// gone records that a worker of target me has returned for good.
func (g *turns) gone(me int) {
	g.mu.Lock()
	g.idle[me]++
	g.left[me]++
	g.cond.Broadcast()
	g.mu.Unlock()
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

// run hands out the turns, target 0 first, until the step stops (stop set,
// ctx done) or its deadline passes; then it wakes every parked worker to
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
	for i := 0; ; i = (i + 1) % len(g.workers) {
		if stop.Load() || ctx.Err() != nil || !time.Now().Before(deadline) {
			return
		}
		g.mu.Lock()
		if g.left[i] >= g.workers[i] {
			// Every worker of this target has returned (its step failed):
			// it takes no more turns; the step ends when all have.
			all := true
			for j := range g.left {
				all = all && g.left[j] >= g.workers[j]
			}
			g.mu.Unlock()
			if all {
				return
			}
			continue
		}
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
		// The turn ends once the target's operations under way are done.
		for g.idle[i] < g.workers[i] && !stop.Load() && ctx.Err() == nil {
			g.cond.Wait()
		}
		off := time.Now()
		g.total[i] += off.Sub(g.on)
		if from := later(g.on, g.measureFrom); off.After(from) {
			g.measured[i] += off.Sub(from)
		}
		g.mu.Unlock()
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
