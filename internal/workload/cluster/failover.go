package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// failoverStep runs a probe writer (the headline role, one thread) and the
// step's threads of writers; the probe kills the node at kill_at. The step
// runs at the first thread count only: the node stays dead.
func failoverStep(p workload.Params, o *Options) workload.Step {
	return disruptStep(p, o, Failover)
}

// switchoverStep is failoverStep with a planned switchover at kill_at
// instead of the kill, and a switchback halfway between it and the step's
// end.
func switchoverStep(p workload.Params, o *Options) workload.Step {
	return disruptStep(p, o, Switchover)
}

// disruptStep is the failover or switchover step (test).
func disruptStep(p workload.Params, o *Options, test string) workload.Step {
	var st *failState
	killAt := o.KillAt.Duration
	if killAt == 0 {
		killAt = p.Warmup + p.WriteTime/3
	}
	length := p.Warmup + p.WriteTime
	newWorker := func(probe bool) func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		return func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			cl, err := clusterOf(db, test)
			if err != nil {
				return nil, err
			}
			if probe {
				st = &failState{length: length, killAt: killAt, killNode: o.KillNode - 1, switchover: test == Switchover,
					backAt: killAt + (length-killAt)/2}
				st.promoted.Store(-1)
				st.lost.Store(-1)
				st.lostBack.Store(-1)
				st.rejoined.Store(-1)
				st.rejoinedBack.Store(-1)
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
				return nil, fmt.Errorf("%s: connect: %w", test, err)
			}
			w := &failWriter{k: k, st: st, probe: probe, u: updater{rows: o.Rows, rng: seed | 1, name: Failover,
				update: rowUpdate(cl.Dialect())}, insert: cl.Dialect().Bind("INSERT INTO " + ackTable + " VALUES (?)")}
			if probe {
				// The sequence goes on from an earlier repeat's.
				v, err := k.c.Values(ctx, "SELECT COALESCE(MAX(seq), 0) FROM "+ackTable)
				if err != nil || len(v) != 1 {
					k.Close()
					return nil, fmt.Errorf("%s: read the probe's last sequence number: %v %w", test, v, err)
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
		Name: test, Family: test, Group: Group, Metric: DowntimeS, Write: true,
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
// fails gives up and reports the outage so far. It must end before the
// step does, or the runner drops it with its downtime: 50 ms was too
// short on a loaded machine, whose probe goroutine woke after the step's
// end and left the outage open with no downtime counted.
const endMargin = 500 * time.Millisecond

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
		pause := retryPause
		if w.probe {
			// Never sleep past the probe's end: the next look at the clock
			// must come before the step's.
			pause = max(0, min(pause, time.Until(w.st.end)))
		}
		select {
		case <-time.After(pause):
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
			w.checkLost(ctx, &w.st.lost, w.st.ackedAtKill)
		}
		if w.st.switchover && w.st.lostBack.Load() < 0 && w.st.backDone.Load() > 0 {
			w.checkLost(ctx, &w.st.lostBack, w.st.ackedAtBack)
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
func (w *failWriter) checkLost(ctx context.Context, lost *atomic.Int64, hi int64) {
	lo := w.st.firstSeq
	if hi < lo {
		lost.Store(0)
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
	lost.Store(hi - lo + 1 - n)
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
	if s.switchover {
		// The lost count covers both switches (the range checked after
		// the switchback includes the first one's).
		f["failover_lost_acked_writes"] = float64(max(s.lost.Load(), s.lostBack.Load()))
		f["failover_acked_before_kill"] = float64(max(0, max(s.ackedAtKill, s.ackedAtBack)-s.firstSeq+1))
		f["switchback_at_s"], f["switchback_s"], f["switchback_skipped"] = -1, -1, 0
		if s.backSkipped.Load() || (s.backStart.Load() == 0 && s.promotedAt.Load() > 0) {
			// Less of the step was left than the first switch took, or
			// the old primary had not rejoined by the step's end.
			f["switchback_skipped"] = 1
		}
		f["switchover_rejoin_s"], f["switchback_rejoin_s"] = -1, -1
		if r, p := s.rejoinedAt.Load(), s.promotedAt.Load(); r > 0 && p > 0 {
			f["switchover_rejoin_s"] = time.Duration(r - p).Seconds()
		}
		if r, d := s.backRejoinedAt.Load(), s.backDone.Load(); r > 0 && d > 0 {
			f["switchback_rejoin_s"] = time.Duration(r - d).Seconds()
		}
		// Each rejoin's way: 1 when the old primary's data were copied
		// anew, 0 when kept, -1 when it did not rejoin within the step;
		// _fallback 1 when keeping them failed (its server log says why).
		for _, r := range []struct {
			name string
			kind int64
		}{{"switchover_rejoin", s.rejoined.Load()}, {"switchback_rejoin", s.rejoinedBack.Load()}} {
			f[r.name+"_copied"], f[r.name+"_fallback"] = -1, 0
			if r.kind >= 0 {
				f[r.name+"_copied"] = float64(min(r.kind, 1))
			}
			if r.kind == rejoinFellBack {
				f[r.name+"_fallback"] = 1
			}
		}
		if b := s.backStart.Load(); b > 0 && !s.start.IsZero() {
			f["switchback_at_s"] = time.Duration(b - s.start.UnixNano()).Seconds()
			if d := s.backDone.Load(); d > 0 {
				f["switchback_s"] = time.Duration(d - b).Seconds()
			}
		}
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

// Close closes the connection; the probe's first waits for the promotion
// or switch it started.
func (w *failWriter) Close() error {
	if w.probe {
		w.st.ops.Wait()
	}
	return w.k.Close()
}
