package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
	// length is the step's warm-up and measured time.
	length   time.Duration
	killAt   time.Duration
	killNode int // from 0

	// start is the probe's first operation, where the runner's clock of
	// the step starts (workers are created before it); end is a little
	// before the step's end: a probe write still failing then ends its
	// operation, so that the outage so far counts. Both are set once, by
	// begin.
	begun      sync.Once
	start, end time.Time

	once     sync.Once
	killedAt atomic.Int64 // unix ns, 0 before the kill
	killErr  atomic.Value // error of KillNode, if any

	// promoted is the node a promotion made primary (from 0; -1: none),
	// promotedAt when it took writes (unix ns), promoteErr why not.
	promoted   atomic.Int64
	promotedAt atomic.Int64
	promoteErr atomic.Value
	promoting  bool // a promotion was started (the probe's own field)
	reported   bool // the probe returned the kill's or promotion's error

	// The probe's sequence numbers: first of the step, the last
	// acknowledged, the last acknowledged before the kill, and the ones
	// of those the cluster lost (-1 until checked after the failover).
	firstSeq, lastAcked, ackedAtKill int64
	lost                             atomic.Int64
	checkErr                         atomic.Value

	last, maxGap, errors atomic.Int64
	afterKill            atomic.Int64
	openAtEnd            atomic.Bool
	reconnects           atomic.Int64
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

// begin starts the probe's clock at its first operation.
func (s *failState) begin(now time.Time) {
	s.begun.Do(func() {
		s.start = now
		s.end = now.Add(s.length - endMargin)
	})
}

// stalled reports whether an operation begun at t0 has gone without any
// writer's success for longer than a few retry pauses: the cluster is in
// an outage, not merely at the step's end.
func (s *failState) stalled(t0, now time.Time) bool {
	return now.Sub(t0) > 5*retryPause && s.last.Load() < t0.UnixNano()
}

// maybeKill kills the node once kill_at has passed since the step's start
// and, when it was a primary with replicas, promotes the first live
// replica in the background: the probe's writes meanwhile measure the
// outage. The promotion starts at once (no failure detector's delay).
func (s *failState) maybeKill(ctx context.Context, cl Cluster, now time.Time) {
	if now.Sub(s.start) < s.killAt {
		return
	}
	s.once.Do(func() {
		s.ackedAtKill = s.lastAcked
		primary := cl.Primary()
		s.killedAt.Store(now.UnixNano())
		if err := cl.KillNode(s.killNode); err != nil {
			s.killErr.Store(err)
			return
		}
		p, ok := cl.(engine.Promoter)
		if !ok || s.killNode != primary {
			return
		}
		next := (s.killNode + 1) % cl.Nodes()
		s.promoting = true
		go func() {
			if err := p.Promote(ctx, next); err != nil {
				s.promoteErr.Store(err)
				return
			}
			s.promotedAt.Store(time.Now().UnixNano())
			s.promoted.Store(int64(next))
		}()
	})
}

// failed is the kill's or the promotion's error, until the probe
// returned it.
func (s *failState) failed() error {
	if s.reported {
		return nil
	}
	for _, v := range []*atomic.Value{&s.killErr, &s.promoteErr} {
		if err, ok := v.Load().(error); ok {
			return fmt.Errorf("%s: %w", Failover, err)
		}
	}
	return nil
}

// failedOver reports whether the cluster is ready for the lost-writes
// check: the node is dead and the promotion that follows, if any, is over.
func (s *failState) failedOver() bool {
	if s.killedAt.Load() == 0 || s.killErr.Load() != nil {
		return false
	}
	if !s.promoting {
		return true
	}
	return s.promotedAt.Load() > 0 || s.promoteErr.Load() != nil
}

// recovery is how long after the kill the writes of a whole second first
// reached 90% of the rate of the seconds before the kill (up to 3 s of
// them, after the first second of the step); -1 when they never did
// within the step or there was no kill.
func (s *failState) recovery() float64 {
	k := s.killedAt.Load()
	if k == 0 || s.start.IsZero() {
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
				st = &failState{length: p.Warmup + p.WriteTime, killAt: killAt, killNode: o.KillNode - 1}
				st.promoted.Store(-1)
				st.lost.Store(-1)
			}
			k := &conn{cl: cl, node: -1}
			switch {
			case cl.FollowsWriter():
			case probe:
				k.node = o.KillNode - 1
			default:
				k.node = id % cl.Nodes()
			}
			if err := k.open(ctx); err != nil {
				return nil, fmt.Errorf("%s: connect: %w", Failover, err)
			}
			w := &failWriter{k: k, st: st, probe: probe, u: updater{rows: o.Rows, rng: seed | 1, name: Failover,
				update: rowUpdate(cl.Dialect())}, insert: cl.Dialect().Bind("INSERT INTO " + ackTable + " VALUES (?)")}
			if probe {
				// The sequence goes on from an earlier repeat's.
				v, err := k.c.Values(ctx, "SELECT COALESCE(MAX(seq), 0) FROM "+ackTable)
				if err != nil || len(v) != 1 {
					k.Close()
					return nil, fmt.Errorf("%s: read the probe's last sequence number: %v %w", Failover, v, err)
				}
				last, _ := strconv.ParseInt(v[0][0], 10, 64)
				st.firstSeq, st.lastAcked, w.seq = last+1, last, last+1
			}
			return w, nil
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

// failWriter writes, trying each write until it succeeds: after a failure
// it reconnects (through Connect, or to the next node). Writers update
// random rows; the probe inserts the next sequence number.
type failWriter struct {
	k      *conn
	st     *failState
	probe  bool
	u      updater
	insert string
	seq    int64 // the probe's next sequence number
}

// retryPause is the wait between a failed try and the next.
const retryPause = 20 * time.Millisecond

// endMargin is how long before the step's end a probe write that still
// fails gives up.
const endMargin = 50 * time.Millisecond

// write is one try of the worker's write.
func (w *failWriter) write(ctx context.Context, id int) error {
	if w.k.c == nil {
		if err := w.k.open(ctx); err != nil {
			return err
		}
	}
	if !w.probe {
		_, err := w.k.c.Exec(ctx, w.u.update, id)
		return err
	}
	_, err := w.k.c.Exec(ctx, w.insert, w.seq)
	if err != nil && duplicateKey(err) {
		// An earlier try committed and its acknowledgement was lost.
		return nil
	}
	return err
}

// duplicateKey reports whether err is a unique violation (PostgreSQL's
// SQLSTATE 23505, MySQL's error 1062).
func duplicateKey(err error) bool {
	m := err.Error()
	return strings.Contains(m, "23505") || strings.Contains(m, "Error 1062")
}

// Op writes once, however many tries it takes. The probe's operation that
// needed more than one try counts its milliseconds as rows (the headline's
// downtime); a failed try is counted (failover_errors, and the runner's
// retries) but is not the operation's error. A probe write still failing
// at the step's end ends there, counting the outage so far; one the step's
// end merely cut is left to the runner, which counts nothing for it.
func (w *failWriter) Op(ctx context.Context) (workload.Tally, error) {
	t0 := time.Now()
	if w.probe {
		w.st.begin(t0)
		w.st.maybeKill(ctx, w.k.cl, t0)
	}
	id := w.u.id()
	var t workload.Tally
	for tries := 0; ; tries++ {
		t.Statements++
		err := w.try(ctx, id)
		if err == nil {
			break
		}
		now := time.Now()
		outage := tries > 0 || w.st.stalled(t0, now)
		if w.probe && w.st.failed() != nil {
			err := w.st.failed()
			w.st.reported = true
			return t, flat(err)
		}
		if ctx.Err() != nil {
			if w.probe && outage {
				w.st.openAtEnd.Store(true)
			}
			return t, flat(err)
		}
		if w.probe && !now.Before(w.st.end) {
			if !outage {
				// A write the step's end cut, not a failure: the runner
				// drops it when the step's context ends.
				<-ctx.Done()
				return t, flat(err)
			}
			// The outage outlasts the step: its time so far is the
			// downtime (a lower bound), and the facts say so.
			t.Retries++
			w.st.errors.Add(1)
			w.st.openAtEnd.Store(true)
			t.Rows = now.Sub(t0).Milliseconds()
			return t, nil
		}
		t.Retries++
		w.st.errors.Add(1)
		if engine.ConflictOf(err) == engine.NoConflict {
			w.k.reset()
			w.st.reconnects.Add(1)
		}
		select {
		case <-time.After(retryPause):
		case <-ctx.Done():
			return t, flat(err)
		}
	}
	now := time.Now()
	w.st.success(now)
	if w.probe && w.st.failed() != nil {
		// The kill or the promotion failed: the step says why, once.
		err := w.st.failed()
		w.st.reported = true
		return t, flat(err)
	}
	if w.probe {
		if t.Retries > 0 {
			t.Rows = now.Sub(t0).Milliseconds()
		}
		w.st.lastAcked = w.seq
		w.seq++
		if w.st.lost.Load() < 0 && w.st.failedOver() {
			w.checkLost(ctx)
		}
	}
	return t, nil
}

// try runs one try; the probe's ends by the step's end (less endMargin),
// as a write the cluster holds until it evicts a dead node must not
// outlast the step.
func (w *failWriter) try(ctx context.Context, id int) error {
	if !w.probe {
		return w.write(ctx, id)
	}
	tctx, cancel := context.WithDeadline(ctx, w.st.end)
	defer cancel()
	return w.write(tctx, id)
}

// checkLost counts, on the connection that just wrote after the failover,
// the probe's sequence numbers acknowledged before the kill that are not
// there: acknowledged writes the failover lost.
func (w *failWriter) checkLost(ctx context.Context) {
	lo, hi := w.st.firstSeq, w.st.ackedAtKill
	if hi < lo {
		w.st.lost.Store(0)
		return
	}
	v, err := w.k.c.Values(ctx, w.k.cl.Dialect().Bind("SELECT COUNT(*) FROM "+ackTable+" WHERE seq BETWEEN ? AND ?"), lo, hi)
	if err != nil || len(v) != 1 {
		w.st.checkErr.Store(fmt.Errorf("count the probe's writes: %v %w", v, err))
		return
	}
	n, err := strconv.ParseInt(v[0][0], 10, 64)
	if err != nil {
		w.st.checkErr.Store(err)
		return
	}
	w.st.lost.Store(hi - lo + 1 - n)
}

// Facts are the failover's: the longest gap between two successful writes
// of any worker (ms), the failed tries and reconnects, the writes that
// succeeded after the kill, the time until throughput was back (s; -1: not
// within the step), when the node was killed (s from the step's start) and
// which (from 1), the promoted node and how long its promotion took, and
// the probe's acknowledged writes before the kill and how many of them the
// failover lost (-1: not checked, as writes never resumed). Kept from the
// probe.
func (w *failWriter) Facts() map[string]float64 {
	if !w.probe {
		return nil
	}
	s := w.st
	f := map[string]float64{
		"failover_max_gap_ms":  float64(s.maxGap.Load()) / 1e6,
		"failover_errors":      float64(s.errors.Load()),
		"failover_reconnects":  float64(s.reconnects.Load()),
		"failover_recovery_s":  s.recovery(),
		"failover_killed_node": float64(s.killNode + 1),
		"failover_kill_at_s":   -1,
		// 0 after a kill: the outage outlasted the step, and neither the
		// headline nor the gap saw its end; run a longer write_time.
		"failover_writes_after_kill": float64(s.afterKill.Load()),
		// 1: the probe was still failing at the step's end; the headline
		// is the outage up to then, a lower bound.
		"failover_outage_open_at_end": 0,
		"failover_acked_before_kill":  float64(max(0, s.ackedAtKill-s.firstSeq+1)),
		"failover_lost_acked_writes":  float64(s.lost.Load()),
		"failover_promoted_node":      float64(s.promoted.Load() + 1),
		"failover_promote_s":          -1,
	}
	if s.openAtEnd.Load() {
		f["failover_outage_open_at_end"] = 1
	}
	k := s.killedAt.Load()
	if k > 0 && !s.start.IsZero() {
		f["failover_kill_at_s"] = time.Duration(k - s.start.UnixNano()).Seconds()
	}
	if at := s.promotedAt.Load(); at > 0 && k > 0 {
		f["failover_promote_s"] = time.Duration(at - k).Seconds()
	}
	return f
}

// Close closes the connection.
func (w *failWriter) Close() error { return w.k.Close() }
