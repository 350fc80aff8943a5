package cluster

import (
	"benchlab/internal/engine"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
	// ops are the promotions and switches under way, which the probe's
	// Close waits for: the next step must find a cluster in one piece.
	ops sync.WaitGroup

	// A switchover step moves the primary at killAt (planned, no kill)
	// and back at backAt; backStart and backDone are the switchback's
	// times (unix ns), backErr why it failed, ackedAtBack and lostBack
	// the lost-writes check after it.
	switchover  bool
	backAt      time.Duration
	backSkipped atomic.Bool  // too little of the step was left
	rejoinedAt  atomic.Int64 // the old primary followed the new (unix ns)
	// rejoined and rejoinedBack are how the old primary rejoined after
	// the switch and after the switch back (rejoin*, -1: not yet);
	// backRejoinedAt when the second one did (unix ns).
	rejoined, rejoinedBack atomic.Int64
	backRejoinedAt         atomic.Int64
	backOnce               sync.Once
	backStart, backDone    atomic.Int64
	backErr                atomic.Value
	ackedAtBack            int64
	lostBack               atomic.Int64

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

// stallAfter is how long no writer may succeed before a write cut by the
// step's end counts as an outage: a hung write to a dead node lasts
// seconds, while a loaded machine starves every writer for a few hundred
// milliseconds (100 ms, the old bound, called such a pause an outage open
// at the step's end).
const stallAfter = time.Second

// stalled reports whether an operation begun at t0 has gone without any
// writer's success for longer than stallAfter: the cluster is in an
// outage, not merely at the step's end.
func (s *failState) stalled(t0, now time.Time) bool {
	return now.Sub(t0) > stallAfter && s.last.Load() < t0.UnixNano()
}

// maybeKill kills the node once kill_at has passed since the step's start
// and, when it was a primary with replicas, promotes the first live
// replica in the background: the probe's writes meanwhile measure the
// outage. The promotion starts at once (no failure detector's delay).
func (s *failState) maybeKill(ctx context.Context, cl Cluster, now time.Time) {
	if s.switchover {
		s.maybeSwitch(ctx, cl, now)
		return
	}
	if now.Sub(s.start) < s.killAt {
		return
	}
	s.once.Do(func() {
		s.ackedAtKill = s.lastAcked
		primary := cl.Primary()
		if _, ok := cl.(engine.Promoter); ok {
			s.killNode = primary // a primary with replicas: the primary dies
		}
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
		s.background(ctx, func(ctx context.Context) {
			if err := p.Promote(ctx, next); err != nil {
				s.promoteErr.Store(err)
				return
			}
			s.promotedAt.Store(time.Now().UnixNano())
			s.promoted.Store(int64(next))
		})
	})
}

// maybeSwitch moves the primary to the next node once kill_at has passed
// (a planned switchover, in the background, then the old primary rejoins
// as a replica), and back once backAt has passed, the old primary has
// rejoined and the first switch's lost writes were counted.
func (s *failState) maybeSwitch(ctx context.Context, cl Cluster, now time.Time) {
	p, ok := cl.(engine.Promoter)
	if !ok {
		return // CheckTarget refuses such a target
	}
	if now.Sub(s.start) >= s.killAt {
		s.once.Do(func() {
			s.ackedAtKill = s.lastAcked
			s.killNode = cl.Primary()
			to := (s.killNode + 1) % cl.Nodes()
			s.killedAt.Store(now.UnixNano())
			s.promoting = true
			s.background(ctx, func(ctx context.Context) {
				if err := p.Switchover(ctx, to); err != nil {
					s.promoteErr.Store(err)
					return
				}
				s.promotedAt.Store(time.Now().UnixNano())
				s.promoted.Store(int64(to))
				how, err := p.Rejoin(ctx, s.killNode)
				if err != nil {
					s.backErr.Store(fmt.Errorf("rejoin node %d: %w", s.killNode+1, err))
					return
				}
				s.rejoined.Store(rejoinKind(how))
				s.rejoinedAt.Store(time.Now().UnixNano())
			})
		})
	}
	if now.Sub(s.start) >= s.backAt && s.rejoinedAt.Load() > 0 && s.lost.Load() >= 0 {
		s.backOnce.Do(func() {
			// The switch back must end within the step: it may take as
			// long as the first switch took.
			took := time.Duration(s.promotedAt.Load() - s.killedAt.Load())
			if now.Add(took).After(s.end) {
				s.backSkipped.Store(true)
				return
			}
			s.ackedAtBack = s.lastAcked
			s.backStart.Store(now.UnixNano())
			s.background(ctx, func(ctx context.Context) {
				if err := p.Switchover(ctx, s.killNode); err != nil {
					s.backErr.Store(fmt.Errorf("switch back: %w", err))
					return
				}
				s.backDone.Store(time.Now().UnixNano())
				how, err := p.Rejoin(ctx, int(s.promoted.Load()))
				if err != nil {
					s.backErr.Store(fmt.Errorf("switch back: rejoin node %d: %w", s.promoted.Load()+1, err))
					return
				}
				s.rejoinedBack.Store(rejoinKind(how))
				s.backRejoinedAt.Store(time.Now().UnixNano())
			})
		})
	}
}

// How an old primary rejoined (failState.rejoined): its data kept, copied
// anew, or copied when keeping them failed.
const (
	rejoinKept int64 = iota
	rejoinCopied
	rejoinFellBack
)

// rejoinKind is how's kind of rejoin.
func rejoinKind(how engine.Rejoined) int64 {
	switch {
	case how.Fallback != "":
		return rejoinFellBack
	case how.Copied:
		return rejoinCopied
	}
	return rejoinKept
}

// background runs a move of the primary (a promotion, a switchover, a
// rejoin) off the probe's goroutine, with its own operation context; the
// step waits for it (ops) before it ends.
func (s *failState) background(ctx context.Context, move func(ctx context.Context)) {
	s.ops.Add(1)
	go func() {
		defer s.ops.Done()
		ctx, cancel := opContext(ctx)
		defer cancel()
		move(ctx)
	}()
}

// failed is the kill's or the promotion's error, until the probe
// returned it.
func (s *failState) failed() error {
	if s.reported {
		return nil
	}
	for _, v := range []*atomic.Value{&s.killErr, &s.promoteErr, &s.backErr} {
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

// opLimit bounds a promotion or switch that outlives its step.
const opLimit = 2 * time.Minute

// opContext is the context of a promotion or switch: the step's end does
// not cut it short (a switch stopped half-way leaves no primary), opLimit
// does.
func opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), opLimit)
}
