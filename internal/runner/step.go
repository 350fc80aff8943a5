package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// This file is what every measured step does, whether it has one target
// (single.go) or several taking turns (interleave.go): make its workers,
// run them through its window with its instruments (instrument.go) and
// the tick loop (series.go), and collect their results.

// roleRun is one role of a running step: its workers' states and the
// counters that end an op-count-bounded role.
type roleRun struct {
	role    workload.Role
	states  []*workerState
	workers []workload.Worker
	// finished counts the workers that have done their share of Ops;
	// bounded is how many workers have a share.
	finished atomic.Int64
	bounded  int64
	// rows makes the live line show rows per second (RowsPS roles).
	rows bool
	// passesElsewhere: the step's workers pass through the Go scheduler
	// without the runner's yields (ioPlan.passesElsewhere), so they do not yield.
	passesElsewhere bool
	// locked: each of its workers keeps its own OS thread (ioPlan.lockThreads).
	locked bool
	// errs keeps the role's failed operations' first messages.
	errs *errorLog
	// limit, when set, ends the step after its measured operations
	// (Options.Events, headline role only).
	limit *eventLimit
	// turns, in an interleaved step, gives the role's target (index
	// target) its turns; nil otherwise.
	turns  *turns
	target int
	// live, when set, receives the role's numbers every second in place
	// of Options.Live (an interleaved step's targets each have their own).
	live func(LiveSample)
	// label names the role's target in live lines of an interleaved step.
	label string
	// sofar holds the latency histograms the workers have handed over
	// (workerState.handOver) while the step runs, under mu.
	mu    sync.Mutex
	sofar *hdr.Histogram
}

// soFar reads the role's handed-over latency into snap (a histogram the
// caller owns, reused between flushes) and describes it.
func (rr *roleRun) soFar(snap *hdr.Histogram, seconds float64) SoFar {
	snap.Reset()
	rr.mu.Lock()
	snap.Merge(rr.sofar)
	rr.mu.Unlock()
	l := SoFar{Events: snap.TotalCount(), Seconds: max(seconds, 0), Latency: meter.PercentilesOf(snap)}
	if enc, err := snap.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		l.Histogram = enc
	}
	return l
}

// stepRun is a measured step on its parts (targets) from its workers'
// creation to its results.
type stepRun struct {
	ctx     context.Context
	parts   []stepPart
	st      workload.Step
	threads int
	opt     Options
	roles   []workload.Role
	// runsOf and resultsOf are each part's roles and results (headline
	// first); runs and results are all of them, part by part.
	runsOf    [][]*roleRun
	resultsOf [][]*store.Result
	runs      []*roleRun
	results   []*store.Result
	errs      []error
	iop       ioPlan
	// cleanups run in reverse order when the step is over (close).
	cleanups      []func()
	workersClosed bool
	// Set by open: the step's context, which ends with it; its window;
	// what tells its workers to stop.
	stepCtx context.Context
	win     window
	stop    *stopper
}

func newStepRun(ctx context.Context, parts []stepPart, st workload.Step, threads int, opt Options) *stepRun {
	s := &stepRun{ctx: ctx, parts: parts, st: st, threads: threads, opt: opt, roles: stepRoles(st, threads, opt)}
	s.runsOf = make([][]*roleRun, len(parts))
	s.resultsOf = make([][]*store.Result, len(parts))
	for i := range parts {
		s.runsOf[i], s.resultsOf[i] = newRuns(st, s.roles, threads)
		s.runsOf[i][0].limit = newEventLimit(s.roles[0], opt)
		s.runs = append(s.runs, s.runsOf[i]...)
		s.results = append(s.results, s.resultsOf[i]...)
	}
	s.errs = make([]error, len(parts))
	s.deferred(s.closeWorkers)
	return s
}

// deferred has f run when the step is over.
func (s *stepRun) deferred(f func()) { s.cleanups = append(s.cleanups, f) }

// close runs the cleanups, last added first.
func (s *stepRun) close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// failAll gives err to every part that has no error of its own.
func (s *stepRun) failAll(err error) {
	for i := range s.errs {
		if s.errs[i] == nil {
			s.errs[i] = err
		}
	}
}

// closeWorkers closes every worker that was not abandoned, once.
func (s *stepRun) closeWorkers() {
	if s.workersClosed {
		return
	}
	s.workersClosed = true
	for _, rr := range s.runs {
		for i, w := range rr.workers {
			if !rr.states[i].abandoned {
				w.Close()
			}
		}
	}
}

// prepare plans how the workers run, makes them and gives every result the
// facts of how they ran. A worker that cannot be made fails every part.
func (s *stepRun) prepare() error {
	total := 0
	for _, r := range s.roles {
		total += r.Threads
	}
	s.iop = planIO(s.parts[0].db, total, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if s.iop.procs > 0 {
		prev := runtime.GOMAXPROCS(s.iop.procs)
		s.deferred(func() { runtime.GOMAXPROCS(prev) })
	}
	for _, rr := range s.runs {
		rr.passesElsewhere = s.iop.passesElsewhere()
	}
	for i, p := range s.parts {
		err := newWorkers(s.iop.workerContext(s.ctx), p.db, s.st, s.threads, p.seed, s.runsOf[i], s.resultsOf[i])
		if err != nil {
			s.errs[i] = err
			for _, res := range s.results {
				res.Status = store.StatusFailed
			}
			return fmt.Errorf("%s: not run: another target of the interleaved step failed: %w", s.st.Name, err)
		}
	}
	memLimit, unlimit := limitStepMemory()
	s.deferred(unlimit)
	// How the workers ran is part of what was measured, so each result
	// keeps it.
	for ri, rr := range s.runs {
		res := s.results[ri]
		res.Facts = clientFacts(rr, s.iop.remote, s.iop.polled)
		if memLimit > 0 {
			res.Facts[store.FactClientGoMemLimit] = float64(memLimit)
		}
	}
	return nil
}

// beginStreams begins each part's stream (Options.Stream, stepPart.stream)
// with its results as they are now; a stream whose Begin fails is off.
func (s *stepRun) beginStreams() {
	var streams multiStream
	for i, p := range s.parts {
		if p.stream != nil && p.stream.Begin(s.resultsOf[i]) != nil {
			p.stream = nil
		}
		streams.add(p.stream, len(s.runsOf[i]))
	}
	if streams.any() {
		s.opt.Stream = &streams
	} else {
		s.opt.Stream = nil
	}
}

// open sets the step's window and starts its clock: the step's context,
// and the timer that ends it at win's deadline even for operations under
// way then (they are cancelled, or drained (Step.Drain), and not counted).
func (s *stepRun) open(win window) {
	// stepCtx ends with the step: workers blocked in Wait or in a long
	// statement return when the step is over, not only when ctx is done.
	stepCtx, endStep := context.WithCancel(s.ctx)
	s.deferred(endStep)
	s.stepCtx, s.win = stepCtx, win
	s.stop = &stopper{end: endStep, drain: s.st.Drain, base: win.start}
	for _, res := range s.results {
		res.Started = win.measureFrom
	}
	endAt := time.AfterFunc(time.Until(win.deadline), func() { s.stop.Store(true) })
	s.deferred(func() { endAt.Stop() })
}

// use has ins closed when the step is over, last first.
func (s *stepRun) use(ins instruments) {
	for _, in := range ins {
		s.deferred(in.close)
	}
}

// run runs the workers, which start (returning what to wait for once they
// are done), through the step's window with its instruments, and collects
// the results; measured gives a role's measured time once the step ended
// at end.
func (s *stepRun) run(ins instruments, start func(clock meter.Clock, c *crew) (wait func()),
	measured func(rr *roleRun, end time.Time) time.Duration) {
	if s.st.Warmup <= 0 {
		ins.mark()
	}
	clock := meter.NewClock()
	if s.opt.TimeClock {
		clock = meter.NewTimeClock()
	}
	// The watchdog (watch.go) times operations out, and ends the step
	// without the workers that do not return: past overrunBound, or a
	// moment after ctx is done.
	c := newCrew(clock, clock.At(s.win.measureFrom), s.opt.OpTimeout)
	wait := start(clock, c)
	done := c.start(s.ctx, s.win.deadline, overrunBound(s.opt.OpTimeout, s.st.Drain))
	died := make([]error, len(s.parts))
	alive := func() bool {
		ok := true
		for i, p := range s.parts {
			if l, is := p.db.(engine.Liveness); is {
				if died[i] == nil {
					died[i] = l.Died()
				}
				ok = ok && died[i] == nil
			}
		}
		return ok
	}
	series := tick(s.ctx, s.st, s.threads, s.runs, s.win.start, s.win.measureFrom, done, s.stop, s.opt, ins, alive)
	wait()
	// The step ended when it was told to stop (its deadline, its bounded
	// roles done, its event limit met, ctx done), not when the last worker
	// noticed.
	end := time.Now()
	if at, ok := s.stop.at(); ok && at.Before(end) {
		end = at
	}
	if end.After(s.win.deadline) {
		end = s.win.deadline
	}
	heads := make([]*store.Result, len(s.resultsOf))
	for i, rs := range s.resultsOf {
		heads[i] = rs[0]
	}
	ins.finish(&stepEnd{test: s.st.Name, measureFrom: s.win.measureFrom, end: end, heads: heads,
		closeSessions: s.closeWorkers})
	for ri, rr := range s.runs {
		collect(s.results[ri], rr, series[ri], measured(rr, end).Seconds())
		if s.ctx.Err() != nil {
			s.results[ri].Status = store.StatusInterrupted
		}
	}
	for i, p := range s.parts {
		s.errs[i] = stepError(s.ctx, p.db, s.st, s.resultsOf[i], died[i], s.stop, c)
	}
}

// newRuns makes a roleRun and a result for each role.
func newRuns(st workload.Step, roles []workload.Role, threads int) ([]*roleRun, []*store.Result) {
	runs := make([]*roleRun, len(roles))
	results := make([]*store.Result, len(roles))
	for i, r := range roles {
		m := roleMetric(st, r)
		runs[i] = &roleRun{role: r, rows: m.PerRow, bounded: min(r.Ops, int64(r.Threads)), errs: &errorLog{},
			sofar: meter.NewHistogram()}
		results[i] = &store.Result{
			Test: st.Name, Family: st.Family, Group: st.Group, Threads: threads, Warm: st.Warm,
			Metric: m.Name, RowsPerOp: st.RowsPerOp, Status: store.StatusOK,
			Role: store.RoleInfo{Name: r.Name, Secondary: i > 0, TargetRate: cmp.Or(r.TargetRate, r.Rate)},
		}
	}
	return runs, results
}

// newWorkers creates every role's workers, role by role, before any starts.
// A worker that cannot be created fails the step: every result is failed,
// its role's with the cause.
func newWorkers(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, runs []*roleRun,
	results []*store.Result) error {
	for ri, rr := range runs {
		name := st.Name
		if rr.role.Name != "" {
			name += "/" + rr.role.Name
		}
		for i := 0; i < rr.role.Threads; i++ {
			w, err := rr.role.NewWorker(ctx, db, i, rr.role.Threads, WorkerSeed(seed, name, threads, i))
			if err != nil {
				res := results[ri]
				res.Status, res.Errors, res.ErrorSamples = store.StatusFailed, 1, []string{err.Error()}
				for _, other := range results {
					other.Status = store.StatusFailed
				}
				return fmt.Errorf("%s: worker %d: %w", name, i, err)
			}
			rr.workers = append(rr.workers, w)
			rr.states = append(rr.states, newWorkerState(w, rr.role))
		}
	}
	return nil
}

// stepError sets the status of a step's results from how it ended and
// returns its error: ctx's when interrupted, the engine's death, or a lost
// connection.
func stepError(ctx context.Context, db engine.DB, st workload.Step, results []*store.Result, died error, stop *stopper,
	c *crew) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fail := func(cause error) {
		for _, res := range results {
			res.Status = store.StatusFailed
			if cause != nil {
				res.ErrorSamples = append([]string{cause.Error()}, res.ErrorSamples...)
			}
		}
	}
	if err := c.overrunError(st.Name); err != nil {
		fail(err)
		return err
	}
	if died != nil {
		fail(died)
		return fmt.Errorf("%s: %w", st.Name, died)
	}
	if lost := stop.lost.Load(); lost != nil {
		// A killed server drops its connections a moment before its exit
		// is noticed: say it died rather than that a connection was lost.
		if died = diedSoon(db); died != nil {
			fail(died)
			return fmt.Errorf("%s: %w", st.Name, died)
		}
		fail(nil)
		if errors.Is(*lost, ErrOpTimeout) {
			// The timeout's cancel closed the connection under the
			// operation (the drivers and the fast path alike).
			return fmt.Errorf("%s: an operation timed out and its connection was closed, step ended: %w", st.Name, *lost)
		}
		return fmt.Errorf("%s: a worker lost its connection, step ended: %w", st.Name, *lost)
	}
	return nil
}
