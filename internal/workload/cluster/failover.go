package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// bucket is the resolution of failover's timeline of successful writes.
const bucket = 100 * time.Millisecond

// failState is what a failover step's workers share: the step's start, the
// kill, the last success and the longest gap between two, the failed
// tries, and the successful writes per bucket of the step.
type failState struct {
	start time.Time
	// end is a little before the step's end: a probe write still failing
	// then ends its operation, so that the outage so far counts.
	end      time.Time
	killAt   time.Duration
	killNode int // from 0

	once     sync.Once
	killedAt atomic.Int64 // unix ns, 0 before the kill
	killErr  atomic.Value // error of KillNode, if any

	last, maxGap, errors atomic.Int64
	afterKill            atomic.Int64
	openAtEnd            atomic.Bool
	writes               [36000]atomic.Int64 // 100 ms buckets: an hour
}

// success notes a successful write ending at now.
func (s *failState) success(now time.Time) {
	ns := now.UnixNano()
	if prev := s.last.Swap(ns); prev > 0 {
		gap := ns - prev
		for {
			m := s.maxGap.Load()
			if gap <= m || s.maxGap.CompareAndSwap(m, gap) {
				break
			}
		}
	}
	if k := s.killedAt.Load(); k > 0 && ns > k {
		s.afterKill.Add(1)
	}
	if b := int(now.Sub(s.start) / bucket); b >= 0 && b < len(s.writes) {
		s.writes[b].Add(1)
	}
}

// maybeKill kills the node once kill_at has passed since the step's start.
func (s *failState) maybeKill(cl Cluster) {
	if time.Since(s.start) < s.killAt {
		return
	}
	s.once.Do(func() {
		s.killedAt.Store(time.Now().UnixNano())
		if err := cl.KillNode(s.killNode); err != nil {
			s.killErr.Store(err)
		}
	})
}

// recovery is how long after the kill the writes of a whole second first
// reached 90% of the rate of the seconds before the kill (up to 3 s of
// them, after the first second of the step); -1 when they never did
// within the step or there was no kill.
func (s *failState) recovery() float64 {
	k := s.killedAt.Load()
	if k == 0 {
		return -1
	}
	kb := int(time.Duration(k-s.start.UnixNano()) / bucket)
	per := int(time.Second / bucket)
	lo := max(per, kb-3*per)
	if kb <= lo {
		return -1
	}
	var before int64
	for b := lo; b < kb; b++ {
		before += s.writes[b].Load()
	}
	rate := float64(before) / float64(kb-lo) * float64(per) // writes per second
	end := min(len(s.writes), int(time.Since(s.start)/bucket))
	var sum int64
	for b := kb; b < end; b++ {
		sum += s.writes[b].Load()
		if b-kb >= per {
			sum -= s.writes[b-per].Load()
		}
		if b-kb+1 >= per && float64(sum) >= 0.9*rate {
			return float64(b+1-per-kb) * bucket.Seconds()
		}
	}
	return -1
}

// failoverStep runs a probe writer (the headline role, one thread) and the
// step's threads of writers; the probe kills the node at kill_at. The step
// runs at the first thread count only: the node stays dead.
func failoverStep(p workload.Params, o *Options) workload.Step {
	var st *failState
	killAt := o.KillAt.Duration
	if killAt == 0 {
		killAt = p.Warmup + p.WriteTime/3
	}
	newWorker := func(probe bool) func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		return func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			cl, err := clusterOf(db, Failover)
			if err != nil {
				return nil, err
			}
			if probe {
				now := time.Now()
				st = &failState{start: now, end: now.Add(p.Warmup + p.WriteTime - endMargin), killAt: killAt, killNode: o.KillNode - 1}
			}
			k := &conn{cl: cl, node: -1}
			switch {
			case cl.Proxied():
			case probe:
				k.node = o.KillNode - 1
			default:
				k.node = id % cl.Nodes()
			}
			if err := k.open(ctx); err != nil {
				return nil, fmt.Errorf("%s: connect: %w", Failover, err)
			}
			return &failWriter{k: k, st: st, probe: probe, u: updater{rows: o.Rows, rng: seed | 1, name: Failover}}, nil
		}
	}
	threads := p.Threads
	if len(threads) > 1 {
		threads = threads[:1]
	}
	return workload.Step{
		Name: Failover, Family: Failover, Group: Group, Metric: DowntimeS, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup, Threads: threads,
		Roles: []workload.Role{
			{Name: "probe", Threads: 1, Metric: DowntimeS, NewWorker: newWorker(true)},
			{Name: "writers", Metric: WPS, NewWorker: newWorker(false)},
		},
	}
}

// failWriter updates random rows, trying each write until it succeeds:
// after a failure it reconnects (through the proxy, or to the next node).
type failWriter struct {
	k     *conn
	st    *failState
	probe bool
	u     updater
}

// retryPause is the wait between a failed try and the next.
const retryPause = 20 * time.Millisecond

// endMargin is how long before the step's end a probe write that still
// fails gives up (the workers start a little before the step's clock).
const endMargin = 50 * time.Millisecond

// Op writes one row, however many tries it takes. The probe's operation
// that needed more than one try counts its milliseconds as rows (the
// headline's downtime); a failed try is counted (failover_errors, and the
// runner's retries) but is not the operation's error. A probe write still
// failing at the step's end ends there, counting the outage so far.
func (w *failWriter) Op(ctx context.Context) (workload.Tally, error) {
	if w.probe {
		w.st.maybeKill(w.k.cl)
	}
	t0 := time.Now()
	id := w.u.id()
	var t workload.Tally
	for tries := 0; ; tries++ {
		err := func() error {
			tctx := ctx
			if w.probe {
				// A write the cluster holds until it evicts the dead
				// node must not outlast the step either.
				var cancel context.CancelFunc
				tctx, cancel = context.WithDeadline(ctx, w.st.end)
				defer cancel()
			}
			if w.k.c == nil {
				if err := w.k.open(tctx); err != nil {
					return err
				}
			}
			t.Statements++
			_, err := w.k.c.Exec(tctx, "UPDATE "+rowsTable+" SET v = v + 1 WHERE id = ?", id)
			return err
		}()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return t, flat(err)
		}
		t.Retries++
		w.st.errors.Add(1)
		if engine.ConflictOf(err) == engine.NoConflict {
			w.k.reset()
		}
		if w.probe && time.Now().After(w.st.end) {
			// The outage outlasts the step: its time so far is the
			// downtime (a lower bound), and the facts say so; an
			// operation ending after the step would count nothing.
			w.st.openAtEnd.Store(true)
			t.Rows = time.Since(t0).Milliseconds()
			return t, nil
		}
		select {
		case <-time.After(retryPause):
		case <-ctx.Done():
			return t, flat(err)
		}
	}
	now := time.Now()
	w.st.success(now)
	if w.probe && t.Retries > 0 {
		t.Rows = now.Sub(t0).Milliseconds()
	}
	return t, nil
}

// Facts are the failover's: the longest gap between two successful writes
// of any worker (ms), the failed tries, the writes that succeeded after the
// kill, the time until throughput was back
// (s; -1: not within the step), when the node was killed (s from the
// step's start) and which (from 1). Kept from the probe.
func (w *failWriter) Facts() map[string]float64 {
	if !w.probe {
		return nil
	}
	f := map[string]float64{
		"failover_max_gap_ms":  float64(w.st.maxGap.Load()) / 1e6,
		"failover_errors":      float64(w.st.errors.Load()),
		"failover_recovery_s":  w.st.recovery(),
		"failover_killed_node": float64(w.st.killNode + 1),
		"failover_kill_at_s":   -1,
		// 0 after a kill: the outage outlasted the step, and neither the
		// headline nor the gap saw its end; run a longer write_time.
		"failover_writes_after_kill": float64(w.st.afterKill.Load()),
		// 1: the probe was still failing at the step's end; the headline
		// is the outage up to then, a lower bound.
		"failover_outage_open_at_end": 0,
	}
	if w.st.openAtEnd.Load() {
		f["failover_outage_open_at_end"] = 1
	}
	if k := w.st.killedAt.Load(); k > 0 {
		f["failover_kill_at_s"] = time.Duration(k - w.st.start.UnixNano()).Seconds()
	}
	return f
}

// Close closes the connection.
func (w *failWriter) Close() error { return w.k.Close() }
