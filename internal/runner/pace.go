package runner

import (
	"context"
	"math"
	"time"

	"benchlab/internal/workload"
)

// windowCheck is the original Insert Benchmark client's threshold: at a
// check, less than this much time since the previous one means the window's
// quota came early and the rest of the second is slept (docs/method.md 1.5).
const windowCheck = 950 * time.Millisecond

// pacer spaces a rate-limited worker's operations (workload.Pacing):
//   - even: operation k's intended start is first + k/rate, a fixed
//     schedule that a worker behind it catches up back to back;
//   - bursty: each second's quota is released back to back at the start of
//     the second, on a fixed schedule that is caught up the same way;
//   - window: the original client's limiter, simulated as its statement
//     maker would run it. The maker makes operation k once the worker has
//     taken operation k-queue (its queue is full until then), and after
//     every perSec-th operation checks its clock: if less than 0.95 s has
//     passed since the previous check it sleeps out the rest of the second;
//     either way the next window starts from the check. Time the worker
//     loses to a stall longer than the queue is therefore never made up.
type pacer struct {
	mode     workload.Pacing
	interval time.Duration // even: time between operations of this worker
	gap      time.Duration // even: time between operations of the role (1/rate)
	perSec   int64         // bursty, window: operations per second of this worker
	k        int64
	first    time.Time
	// window mode: when the maker can make its next operation, its last
	// check, and when the worker took (started) each of the last queue
	// operations, a ring indexed by operation number.
	ready, checked time.Time
	taken          []time.Time
}

// newPacer returns nil for a closed-loop role. The role's rate is split
// evenly over its workers; even schedules are offset so they do not align.
func newPacer(r workload.Role, i, n int, start time.Time) *pacer {
	if r.Rate <= 0 {
		return nil
	}
	perWorker := r.Rate / float64(n)
	perSec := max(1, int64(math.Ceil(perWorker)))
	switch r.Pacing {
	case workload.PaceBursty:
		return &pacer{mode: r.Pacing, perSec: perSec, first: start}
	case workload.PaceWindow:
		return &pacer{mode: r.Pacing, perSec: perSec, first: start, ready: start, checked: start,
			taken: make([]time.Time, max(1, r.Queue))}
	}
	iv := time.Duration(float64(time.Second) / perWorker)
	first := start.Add(iv * time.Duration(i) / time.Duration(n))
	return &pacer{mode: workload.PaceEven, interval: iv, gap: iv / time.Duration(n), first: first}
}

// end is when a schedule of n operations is over: one gap of the role's
// schedule (1/rate) after the last operation's intended start (even: so
// the role's last worker ends the role's schedule of all its workers'
// operations, which lasts their count over the rate, even when the shares
// differ by one), the end of the second in which the last was released
// (bursty), or when the maker is done with its last operation, its last
// sleep included (window).
func (p *pacer) end(n int64) time.Time {
	switch p.mode {
	case workload.PaceBursty:
		return p.first.Add(time.Duration((n+p.perSec-1)/p.perSec) * time.Second)
	case workload.PaceWindow:
		return p.ready
	}
	return p.first.Add(time.Duration(n-1)*p.interval + p.gap)
}

// sleepUntil sleeps until t, or until the step stops.
func (p *pacer) sleepUntil(ctx context.Context, stop *stopper, t time.Time) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		if stop.Load() || ctx.Err() != nil {
			return false
		}
		time.Sleep(min(d, 100*time.Millisecond))
	}
}

// wait sleeps until the next operation's intended start and returns it. A
// worker behind schedule does not sleep; its operations' latency then
// includes the time they spent waiting to start (in window mode, the time
// since the maker made them).
func (p *pacer) wait(ctx context.Context, stop *stopper) (time.Time, bool) {
	var intended time.Time
	switch p.mode {
	case workload.PaceBursty:
		intended = p.first.Add(time.Duration(p.k/p.perSec) * time.Second)
	case workload.PaceWindow:
		intended = p.make()
	default:
		intended = p.first.Add(time.Duration(p.k) * p.interval)
	}
	p.k++
	return intended, p.sleepUntil(ctx, stop, intended)
}

// make runs the simulated statement maker for operation p.k and returns
// when the operation was made (put on the queue).
func (p *pacer) make() time.Time {
	made := p.ready
	if q := int64(len(p.taken)); p.k >= q {
		// The queue holds q operations: this one waits for room.
		if t := p.taken[p.k%q]; t.After(made) {
			made = t
		}
	}
	p.ready = made
	if p.k%p.perSec == 0 {
		if made.Before(p.checked.Add(windowCheck)) {
			p.ready = p.checked.Add(time.Second)
		}
		p.checked = p.ready
	}
	return made
}

// started records when the worker took operation p.k-1 off the queue (began
// it), which frees the maker's queue slot for operation p.k-1+queue.
func (p *pacer) started(t time.Time) {
	if p.mode != workload.PaceWindow || p.k == 0 {
		return
	}
	p.taken[(p.k-1)%int64(len(p.taken))] = t
}
