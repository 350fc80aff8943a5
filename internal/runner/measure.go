// Package runner executes a workload's steps against an engine: N workers in
// closed loops, each with its own connection, a warm-up that is excluded from
// results, a fixed measured duration, a live 1-second series and HDR latency
// histograms. It owns the clock and the error policy; workloads own only
// their statements.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/engine"
	"benchlab/internal/metrics"
	"benchlab/internal/profile"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Options control how a step is measured and reported while it runs.
type Options struct {
	// Out receives the live lines; nil silences them.
	Out io.Writer
	// ReportInterval is how often a live line is printed (sysbench's
	// --report-interval); 0 prints none. The stored series is always 1 s.
	ReportInterval time.Duration
	// DataDir is where the engine keeps its files; the block device that
	// holds it is the one whose IO counts per operation. Empty: none.
	DataDir string
	// Progress, when set, gives a suffix for every live line (the
	// experiment's ETA).
	Progress func() string
	// Rate runs a step's headline role (its first, or the workers of a
	// step without roles) open-loop at this many operations per second in
	// total (sysbench's --rate), unless the role has a rate of its own;
	// latency then counts from each operation's intended start. 0: closed
	// loop.
	Rate float64
	// Events ends a step once its headline role has done this many
	// measured operations (the warm-up's not counted), or at its time,
	// whichever comes first (sysbench's --events); a role with a count of
	// its own (Role.Ops) keeps it. 0: no limit.
	Events int64
	// Stream, when set, receives the step's results before the workers
	// start and each role's new 1-second intervals every FlushEvery while
	// the step runs, so a long step killed midway keeps what it measured.
	Stream Stream
	// FlushEvery is how often Stream gets the new intervals; 0 means
	// DefaultFlushEvery.
	FlushEvery time.Duration
	// Percentile is the latency percentile of the live lines (0: 95).
	Percentile float64
	// ProfileHz, when > 0, samples the call stacks of the server's process
	// tree (of benchlab for an in-process engine) at this many samples per
	// second of CPU time with perf record, and keeps those of the measured
	// part in the headline result's Profile (run --profile).
	ProfileHz int
	// Live, when set, receives every role's numbers of every second as the
	// step runs (for --metrics-addr).
	Live func(LiveSample)
	// TimeClock times operations through package time rather than the
	// runtime's monotonic clock (metrics.NewTimeClock): slower, but inside
	// a testing/synctest bubble every time the runner reads, timers and
	// sleeps included, is then the bubble's fake clock, so tests run steps
	// in fake time, exactly and fast.
	TimeClock bool
	// SpeedProbeEvery is the pause between two CPU speed probes on one CPU
	// (metrics.SpeedProbe): 0 takes metrics.SpeedProbeEveryFor the step's
	// measured length, a negative value turns the probes off (no speed
	// facts, nothing to wake a CPU).
	SpeedProbeEvery time.Duration
	// MaxErrorRate is the error policy (spec workload.max_error_rate): a
	// measured step's role whose failed operations pass this share of its
	// attempted ones fails, and its target with it. 0: no limit.
	MaxErrorRate float64
	// OpTimeout fails an operation that has run this long: its context is
	// cancelled and it counts as an error. 0: no timeout.
	OpTimeout time.Duration
}

// LiveSample is one role's last second of a running step.
type LiveSample struct {
	Test, Role       string
	Threads          int
	Warm             bool
	Seconds          float64
	Events, Errors   int64
	Statements, Rows int64
	P50, P95, P99    time.Duration
	Max              time.Duration
}

// Stream keeps a step's results as the step goes. Begin is called once,
// before the workers start, with one result per role (headline first);
// Flush is called from one goroutine with role ri's intervals since the
// last call, and FlushLatency after it with the role's latency so far. A
// failed Begin turns the stream off for the step.
type Stream interface {
	Begin(results []*store.Result) error
	Flush(ri int, ivs []store.Interval)
	FlushLatency(ri int, l SoFar)
}

// SoFar is a role's measured part up to a flush: its done operations, the
// seconds since the end of the warm-up, their latency percentiles and the
// encoded HDR histogram (what the final result keeps in Events, Seconds,
// Latency and Histogram). Operations a worker finished since it last
// handed its histogram over are left for the next flush.
type SoFar struct {
	Events    int64
	Seconds   float64
	Latency   store.Latency
	Histogram []byte
}

// Measure runs a measured step with the given number of workers and returns
// its headline result (see MeasureRoles).
func Measure(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, opt Options) (*store.Result, error) {
	rs, err := MeasureRoles(ctx, db, st, threads, seed, opt)
	return rs[0], err
}

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
	l := SoFar{Events: snap.TotalCount(), Seconds: max(seconds, 0), Latency: metrics.PercentilesOf(snap)}
	if enc, err := snap.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		l.Histogram = enc
	}
	return l
}

// MeasureRoles runs a measured step and returns one result per role, the
// headline role first (a step without roles has one). If ctx is cancelled
// the results hold what was measured so far and have status interrupted; the
// returned error is then ctx's.
func MeasureRoles(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, opt Options) ([]*store.Result, error) {
	rs, errs := measureParts(ctx, []stepPart{{db: db, seed: seed, stream: opt.Stream, live: opt.Live}}, st, threads, 0, opt)
	return rs[0], errs[0]
}

// stepPart is one target of a measured step: its database and seed, and
// where its results stream and its live numbers go.
type stepPart struct {
	name   string // the target's, for live lines
	db     engine.DB
	seed   uint64
	stream Stream
	live   func(LiveSample)
}

// measureParts measures a step on every part: one part is an ordinary
// step; several are the targets of an interleaved step, which take turns of
// length slice (turns.go) through a warm-up and a measured part each as
// long as the step's, so the step lasts that many times longer. It returns
// each part's results (one per role, headline first) and error.
//
// What an interleaved step cannot tell apart per target is left out of its
// results rather than guessed: resource use per operation (the sampler sees
// every target's server and benchlab's one process), engine counters, perf
// counters and profiles. Its CPU speed facts are the step's, shared.
func measureParts(ctx context.Context, parts []stepPart, st workload.Step, threads int, slice time.Duration,
	opt Options) ([][]*store.Result, []error) {
	single := len(parts) == 1
	roles := stepRoles(st, threads, opt)
	runsOf := make([][]*roleRun, len(parts))
	resultsOf := make([][]*store.Result, len(parts))
	var runs []*roleRun
	var results []*store.Result
	for i := range parts {
		runsOf[i], resultsOf[i] = newRuns(st, roles, threads)
		runsOf[i][0].limit = newEventLimit(roles[0], opt)
		runs = append(runs, runsOf[i]...)
		results = append(results, resultsOf[i]...)
	}
	errs := make([]error, len(parts))
	failAll := func(err error) ([][]*store.Result, []error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return resultsOf, errs
	}
	closed := false
	closeWorkers := func() {
		if closed {
			return
		}
		closed = true
		for _, rr := range runs {
			for i, w := range rr.workers {
				if !rr.states[i].abandoned {
					w.Close()
				}
			}
		}
	}
	defer closeWorkers()
	total := 0
	for _, r := range roles {
		total += r.Threads
	}
	iop := planIO(parts[0].db, total, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if iop.procs > 0 {
		prev := runtime.GOMAXPROCS(iop.procs)
		defer runtime.GOMAXPROCS(prev)
	}
	for _, rr := range runs {
		rr.passesElsewhere = iop.passesElsewhere()
	}
	for i, p := range parts {
		if err := newWorkers(iop.workerContext(ctx), p.db, st, threads, p.seed, runsOf[i], resultsOf[i]); err != nil {
			errs[i] = err
			for _, res := range results {
				res.Status = store.StatusFailed
			}
			return failAll(fmt.Errorf("%s: not run: another target of the interleaved step failed: %w", st.Name, err))
		}
	}
	memLimit, unlimit := limitStepMemory()
	defer unlimit()
	// How the workers ran is part of what was measured, so each result
	// keeps it.
	for ri, rr := range runs {
		res := results[ri]
		res.Facts = clientFacts(rr, iop.remote, iop.polled)
		if memLimit > 0 {
			res.Facts[store.FactClientGoMemLimit] = float64(memLimit)
		}
		if !single {
			res.Facts[store.FactInterleave] = slice.Seconds()
			res.Facts[store.FactInterleaveTargets] = float64(len(parts))
		}
	}
	var streams multiStream
	for i, p := range parts {
		if p.stream != nil && p.stream.Begin(resultsOf[i]) != nil {
			p.stream = nil
		}
		streams.add(p.stream, len(runsOf[i]))
	}
	if streams.any() {
		opt.Stream = &streams
	} else {
		opt.Stream = nil
	}

	// stepCtx ends with the step: workers blocked in Wait or in a long
	// statement return when the step is over, not only when ctx is done.
	stepCtx, endStep := context.WithCancel(ctx)
	defer endStep()
	// perf record starts before the step's clock does, so that its own
	// start-up (reading every process's maps) falls outside the measured
	// part; only the samples taken in it are kept (stepProfile).
	var rec *profile.Recording
	var profErr error
	if opt.ProfileHz > 0 && single {
		rec, profErr = profile.Start(profilePIDs(parts[0].db), opt.ProfileHz)
		defer rec.Close()
	}
	win := stepWindow(st, roles, time.Now())
	var g *turns
	if !single {
		// Each target gets the step's warm-up and measured time in turns.
		k := time.Duration(len(parts))
		win.measureFrom = win.start.Add(k * win.measureFrom.Sub(win.start))
		win.deadline = win.measureFrom.Add(k * st.Duration)
		g = newTurns(slice, win.measureFrom, len(parts))
		for i, rs := range runsOf {
			for _, rr := range rs {
				rr.turns, rr.target, rr.live, rr.label = g, i, parts[i].live, parts[i].name
			}
		}
	}
	stop := &stopper{end: endStep, drain: st.Drain, base: win.start}
	for _, res := range results {
		res.Started = win.measureFrom
	}
	// The step ends at its deadline even for operations under way then:
	// they are cancelled, or drained (Step.Drain), and not counted.
	endAt := time.AfterFunc(time.Until(win.deadline), func() { stop.Store(true) })
	defer endAt.Stop()

	// Resource use is sampled from the tick goroutine only (never from a
	// worker, so the workers' hot path pays nothing for it):
	// once now, once a second, and when the workers are done; the measured
	// part starts at the end of the warm-up.
	var roots []int
	for _, p := range parts {
		if srv, ok := p.db.(engine.Server); ok {
			roots = append(roots, srv.PIDs()...)
		}
	}
	sampler := metrics.NewStepSampler(roots, opt.DataDir)
	sampler.SetEngineMemory(engine.InProcessMemoryTotal)
	// The engine's own counters (engine.StatsReader) start and end with
	// the sampler's measured part.
	var stats *engineStats
	if single {
		stats = newEngineStats(ctx, parts[0].db, opt.Out)
	}
	if stats != nil {
		sampler.AtMark = stats.mark
	}
	// Its counters and gauges once a second over the measured part.
	var internals *internalsSampler
	if single {
		internals = startInternals(ctx, parts[0].db, win.measureFrom)
		defer internals.series(nil, "")
	}
	// Hardware and software perf counters per operation (instructions,
	// cycles, cache and branch misses where the machine counts them): the
	// connections exist now, so every server thread that serves them does.
	if single {
		sampler.CountEvents()
		defer sampler.CloseCounters()
	}
	// The CPUs' speed during the step (metrics.SpeedProbe), so that a run
	// on CPUs the host slowed can be told from a slow database.
	var speed *metrics.SpeedProbe // nil: no probes, no speed facts
	if every := opt.SpeedProbeEvery; every >= 0 {
		if every == 0 && win.deadline.Sub(win.measureFrom) < forever/2 {
			every = metrics.SpeedProbeEveryFor(win.deadline.Sub(win.measureFrom))
		}
		speed = metrics.StartSpeedProbe(nil, win.measureFrom, every)
	}
	sampler.IgnoreThreads(speed.TIDs())
	speedStopped := false
	stopSpeed := func(to time.Time) metrics.SpeedSummary {
		if speedStopped {
			return metrics.SpeedSummary{}
		}
		speedStopped = true
		return speed.Stop(to)
	}
	defer stopSpeed(time.Time{})
	if st.Warmup <= 0 {
		sampler.Mark()
	}
	clock := metrics.NewClock()
	if opt.TimeClock {
		clock = metrics.NewTimeClock()
	}
	// The watchdog (watch.go) times operations out, and ends the step
	// without the workers that do not return: past overrunBound, or a
	// moment after ctx is done.
	c := newCrew(clock, clock.At(win.measureFrom), opt.OpTimeout)
	if g != nil {
		startSlots(stepCtx, runsOf, g, clock, win, stop, iop.lockThreads, c)
	} else {
		startWorkers(stepCtx, runs, clock, win, stop, iop.lockThreads, c)
	}
	done := c.start(ctx, win.deadline, overrunBound(opt.OpTimeout, st.Drain))
	turnsDone := make(chan struct{})
	if g != nil {
		go func() {
			defer close(turnsDone)
			g.run(stepCtx, stop, win.deadline)
		}()
	} else {
		close(turnsDone)
	}

	died := make([]error, len(parts))
	alive := func() bool {
		ok := true
		for i, p := range parts {
			if l, is := p.db.(engine.Liveness); is {
				if died[i] == nil {
					died[i] = l.Died()
				}
				ok = ok && died[i] == nil
			}
		}
		return ok
	}
	series := tick(ctx, st, threads, runs, win.start, win.measureFrom, done, stop, opt, sampler, speed, alive)
	<-turnsDone
	// The step ended when it was told to stop (its deadline, its bounded
	// roles done, its event limit met, ctx done), not when the last worker
	// noticed.
	end := time.Now()
	if at, ok := stop.at(); ok && at.Before(end) {
		end = at
	}
	if end.After(win.deadline) {
		end = win.deadline
	}
	if single {
		head := results[0]
		head.Internals = internals.series(opt.Out, st.Name)
		head.Eff = sampler.Efficiency()
		if m := sampler.Memory(); m.OK && head.Eff != nil {
			addMemoryFacts(head, m)
		}
		for k, v := range sampler.CounterFacts() {
			head.Facts[k] = v
		}
		// The workers' sessions end before the engine's counters are read,
		// so that an engine that adds a session's counts at its end
		// (PostgreSQL) has them all.
		if stats != nil {
			closeWorkers()
			stats.addFacts(head.Facts, st.Name)
		}
	}
	if sp := stopSpeed(end); sp.N > 0 {
		mean, n, cpu := sp.Mean, sp.N, sp.CPU
		for _, rs := range resultsOf {
			rs[0].Facts[store.FactCPUSpeed] = mean
			rs[0].Facts[store.FactCPUSpeedSamples] = float64(n)
			rs[0].Facts[store.FactCPUSpeedCPU] = cpu.Seconds()
		}
		// The probes are measurement, not the workload's client: their
		// CPU leaves benchlab's (about 0.4% of each CPU; at 30,000 queries
		// a second it would add 0.3 us to a query's client CPU).
		if e := results[0].Eff; single && e != nil && e.ClientCPU >= 0 {
			e.ClientCPU = max(0, e.ClientCPU-cpu.Seconds())
		}
	}
	if opt.ProfileHz > 0 && single {
		results[0].Profile = stepProfile(rec, profErr, opt.ProfileHz, win.measureFrom, end)
	}
	for ri, rr := range runs {
		seconds := max(0, end.Sub(win.measureFrom).Seconds())
		if g != nil {
			seconds = g.measuredTime(rr.target).Seconds()
		}
		collect(results[ri], rr, series[ri], seconds)
		if ctx.Err() != nil {
			results[ri].Status = store.StatusInterrupted
		}
	}
	for i, p := range parts {
		errs[i] = stepError(ctx, p.db, st, resultsOf[i], died[i], stop, c)
	}
	return resultsOf, errs
}

// multiStream is the Stream of an interleaved step: each target's results
// go to that target's own stream (nil: not streamed), by role index.
type multiStream struct {
	streams []Stream
	// part and local map a role index of the step to its target and its
	// index among that target's roles.
	part, local []int
}

func (m *multiStream) add(s Stream, roles int) {
	for i := 0; i < roles; i++ {
		m.part = append(m.part, len(m.streams))
		m.local = append(m.local, i)
	}
	m.streams = append(m.streams, s)
}

func (m *multiStream) any() bool {
	for _, s := range m.streams {
		if s != nil {
			return true
		}
	}
	return false
}

// Begin implements Stream; each target's stream has begun already.
func (m *multiStream) Begin([]*store.Result) error { return nil }

// Flush implements Stream.
func (m *multiStream) Flush(ri int, ivs []store.Interval) {
	if s := m.streams[m.part[ri]]; s != nil {
		s.Flush(m.local[ri], ivs)
	}
}

// FlushLatency implements Stream.
func (m *multiStream) FlushLatency(ri int, l SoFar) {
	if s := m.streams[m.part[ri]]; s != nil {
		s.FlushLatency(m.local[ri], l)
	}
}

// profilePIDs are the processes a step's profile samples: the server's
// process tree (PostgreSQL's backends are forked when the connections are
// made, before the step starts; later children are followed by perf), or
// benchlab itself for an in-process engine.
func profilePIDs(db engine.DB) []int {
	if srv, ok := db.(engine.Server); ok {
		if roots := srv.PIDs(); len(roots) > 0 {
			return metrics.ProcessTree(roots)
		}
	}
	return []int{os.Getpid()}
}

// stepProfile stops the recording and keeps the samples taken from the
// measured part's start to its end, or says why there are none.
func stepProfile(rec *profile.Recording, startErr error, hz int, from, to time.Time) *store.Profile {
	p := &store.Profile{Hz: hz}
	if rec == nil {
		p.Note = fmt.Sprint(startErr)
		return p
	}
	stacks, err := rec.Stop(profile.At(from), profile.At(to))
	switch {
	case err != nil:
		p.Note = err.Error()
	case len(stacks) == 0:
		p.Note = "profile: no samples in the measured part"
	default:
		p.Folded, p.Samples = stacks.Text(), stacks.Samples()
	}
	return p
}

// newRuns makes a roleRun and a result for each role.
func newRuns(st workload.Step, roles []workload.Role, threads int) ([]*roleRun, []*store.Result) {
	runs := make([]*roleRun, len(roles))
	results := make([]*store.Result, len(roles))
	for i, r := range roles {
		m := roleMetric(st, r)
		runs[i] = &roleRun{role: r, rows: m.PerRow, bounded: min(r.Ops, int64(r.Threads)), errs: &errorLog{},
			sofar: metrics.NewHistogram()}
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

// startWorkers starts every worker's loop, each goroutine with its lane in
// c (watch.go).
func startWorkers(ctx context.Context, runs []*roleRun, clock metrics.Clock, win window, stop *stopper,
	lockThreads bool, c *crew) {
	measureFromNs, deadlineNs := clock.At(win.measureFrom), clock.At(win.deadline)
	finishOne := func() {
		for _, rr := range runs {
			if rr.role.Ops > 0 && rr.finished.Load() < rr.bounded {
				return
			}
		}
		stop.Store(true)
	}
	for _, rr := range runs {
		rr.locked = lockThreads
		for i, w := range rr.workers {
			ln := c.add(ctx)
			p := newPacer(rr.role, i, len(rr.workers), win.start)
			quota := share(rr.role.Ops, i, len(rr.workers))
			go func() {
				defer c.exit(ln)
				// A worker keeps its own OS thread, as sysbench's and
				// db_bench's threads do: a goroutine that hops between
				// threads after cgo calls and blocking reads loses its CPU
				// caches (in-process RocksDB readrandom: 80k -> 107k gets/s
				// on one thread here). Polled and spread workers do not: a
				// parked goroutine tied to a thread costs two thread switches
				// per wake-up (PostgreSQL point query at 4 threads on 2 CPUs:
				// 52k locked, 82k unlocked here).
				if lockThreads {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				work(ctx, w, rr.states[i], clock, measureFromNs, deadlineNs, stop, rr.errs, p, rr, quota, finishOne, ln)
			}()
		}
	}
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
		return fmt.Errorf("%s: a worker lost its connection, step ended: %w", st.Name, *lost)
	}
	return nil
}

// WorkerSeed derives a worker's seed from the experiment seed, the step, the
// thread count and the worker number, so every worker draws its own stream and
// a rerun with the same seed draws the same ones.
func WorkerSeed(seed uint64, step string, threads, worker int) uint64 {
	h := seed ^ 0x9e3779b97f4a7c15
	for i := 0; i < len(step); i++ {
		h = splitmix(h ^ uint64(step[i]))
	}
	h = splitmix(h ^ uint64(threads)<<32 ^ uint64(worker))
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// isCancel reports whether err is a cancellation rather than a failure.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
