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
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/metrics"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// maxErrorSamples is how many distinct error messages a result keeps.
const maxErrorSamples = 5

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
	// Rate runs the workers of a step without roles of its own open-loop
	// at this many operations per second in total (sysbench's --rate);
	// latency then counts from each operation's intended start. 0: closed
	// loop.
	Rate float64
	// Events ends such a step once its workers have done this many
	// operations, warm-up included, or at its time, whichever comes first
	// (sysbench's --events). 0: no limit.
	Events int64
	// Stream, when set, receives the step's results before the workers
	// start and each role's new 1-second intervals every FlushEvery while
	// the step runs, so a long step killed midway keeps what it measured.
	Stream Stream
	// FlushEvery is how often Stream gets the new intervals; 0 means a
	// minute.
	FlushEvery time.Duration
	// Percentile is the latency percentile of the live lines (0: 95).
	Percentile float64
	// Live, when set, receives every role's numbers of every second as the
	// step runs (for --metrics-addr).
	Live func(LiveSample)
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

// workerState is what one worker goroutine measures; only it writes here
// until it has finished.
type workerState struct {
	live metrics.Live
	// hist holds latency (from the intended start when rate-limited); svc
	// the plain service time of rate-limited operations.
	hist, svc                        *hdr.Histogram
	events, statements, errors, rows int64
	// retries are the tries after the first that operations needed;
	// retried the operations that needed any (workload.Tally.Retries).
	retries, retried int64
	// kinds are per-kind counts of a Kinded worker's measured operations.
	kinds []kindState
	// handoff asks the worker to move hist into its role's running total
	// (roleRun.sofar) after its next operation, so that a long step's
	// latency can be stored as it goes; the tick loop sets it once per
	// flush, the worker clears it.
	handoff atomic.Bool
}

// handOver moves the worker's latency histogram into its role's total.
func (s *workerState) handOver(rr *roleRun) {
	rr.mu.Lock()
	rr.sofar.Merge(s.hist)
	rr.mu.Unlock()
	s.hist.Reset()
	s.handoff.Store(false)
}

// kindState is one kind of operation's count, errors and latency.
type kindState struct {
	ops, errors, retries int64
	hist                 *hdr.Histogram
}

// errorLog keeps the count and first distinct messages of failed operations.
type errorLog struct {
	mu      sync.Mutex
	samples []string
}

func (l *errorLog) add(err error) {
	msg := err.Error()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) >= maxErrorSamples {
		return
	}
	for _, s := range l.samples {
		if s == msg {
			return
		}
	}
	l.samples = append(l.samples, msg)
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
	roles := st.Roles
	byEvents := false
	if len(roles) == 0 {
		roles = []workload.Role{{Threads: threads, NewWorker: st.NewWorker, Rate: opt.Rate, Ops: opt.Events}}
		byEvents = opt.Events > 0
	}
	runs := make([]*roleRun, len(roles))
	results := make([]*store.Result, len(roles))
	for i, r := range roles {
		if r.Threads <= 0 {
			r.Threads = threads
		}
		m := st.Metric
		if r.Metric.Name != "" {
			m = r.Metric
		}
		if m.Name == "" {
			m = metric.QPS
		}
		runs[i] = &roleRun{role: r, rows: m.PerRow, bounded: min(r.Ops, int64(r.Threads)), sofar: metrics.NewHistogram()}
		results[i] = &store.Result{
			Test: st.Name, Family: st.Family, Group: st.Group, Threads: threads, Warm: st.Warm,
			Metric: m.Name, RowsPerOp: st.RowsPerOp, Status: store.StatusOK,
			Role: store.RoleInfo{Name: r.Name, Secondary: i > 0, TargetRate: cmp.Or(r.TargetRate, r.Rate)},
		}
	}
	defer func() {
		for _, rr := range runs {
			for _, w := range rr.workers {
				w.Close()
			}
		}
	}()
	total := 0
	for _, rr := range runs {
		total += rr.role.Threads
	}
	// Server clients wait for their answers in one of three ways (measured
	// on 2 CPUs against sysbench's point query, PostgreSQL 15):
	//   - no more workers than processors: blocking reads, each worker on
	//     its own OS thread;
	//   - up to twice as many workers as CPUs: blocking reads on threads Go
	//     may swap, with a processor for each worker and one spare (4
	//     threads: 0.92 of sysbench's rate, against 0.85 through the poller);
	//   - more: Go's network poller, on threads shared between workers
	//     (engine.WithPolledIO; 8 threads: 0.89, against 0.83 blocking).
	remote, _ := db.(engine.Remote)
	isRemote := remote != nil && remote.Remote()
	procs := runtime.GOMAXPROCS(0)
	polled := isRemote && total > max(procs, 2*runtime.NumCPU())
	spread := isRemote && !polled && total > procs
	lockThreads := !polled && !spread
	workerCtx := ctx
	if polled {
		workerCtx = engine.WithPolledIO(ctx)
	}
	// Workers in C calls with no processor idle make Go's monitor take
	// processors back and wake threads to hold them, over and over: one
	// spare processor stops it (SQLite point query at 2 threads on 2 CPUs:
	// +10% QPS, -8% CPU per query here). Spread server clients get one too.
	if c, ok := db.(engine.CallsC); (ok && c.CallsC() && total >= procs) || spread {
		prev := runtime.GOMAXPROCS(total + 1)
		defer runtime.GOMAXPROCS(prev)
	}
	var all []*workerState
	for ri, rr := range runs {
		name := st.Name
		if rr.role.Name != "" {
			name += "/" + rr.role.Name
		}
		for i := 0; i < rr.role.Threads; i++ {
			w, err := rr.role.NewWorker(workerCtx, db, i, rr.role.Threads, WorkerSeed(seed, name, threads, i))
			if err != nil {
				res := results[ri]
				res.Status, res.Errors, res.ErrorSamples = store.StatusFailed, 1, []string{err.Error()}
				for _, other := range results {
					other.Status = store.StatusFailed
				}
				return results, fmt.Errorf("%s: worker %d: %w", name, i, err)
			}
			rr.workers = append(rr.workers, w)
			s := &workerState{hist: metrics.NewHistogram()}
			if rr.role.Rate > 0 {
				s.svc = metrics.NewHistogram()
			}
			if k, ok := w.(workload.Kinded); ok {
				for range k.Kinds() {
					s.kinds = append(s.kinds, kindState{hist: metrics.NewHistogram()})
				}
			}
			rr.states = append(rr.states, s)
			all = append(all, s)
		}
	}

	// How the workers ran is part of what was measured, so each result
	// keeps it.
	for ri, rr := range runs {
		results[ri].Facts = clientFacts(rr, remote != nil && remote.Remote(), polled)
	}
	if opt.Stream != nil && opt.Stream.Begin(results) != nil {
		opt.Stream = nil
	}

	// stepCtx ends with the step: workers blocked in Wait or in a long
	// statement return when the step is over, not only when ctx is done.
	stepCtx, endStep := context.WithCancel(ctx)
	defer endStep()
	stop := &stopper{end: endStep, drain: st.Drain}
	errs := make([]*errorLog, len(runs))
	for i := range errs {
		errs[i] = &errorLog{}
	}
	start := time.Now()
	measureFrom := start.Add(st.Warmup)
	bounded := false
	for _, rr := range runs {
		bounded = bounded || rr.role.Ops > 0
	}
	deadline := measureFrom.Add(st.Duration)
	if bounded && !byEvents {
		// The step ends when every op-bounded role has done its operations;
		// MaxDuration keeps one that cannot sustain its rate from hanging.
		deadline = start.Add(100 * 365 * 24 * time.Hour)
		if st.MaxDuration > 0 {
			deadline = start.Add(st.MaxDuration)
		}
	}
	for _, res := range results {
		res.Started = measureFrom
	}
	// The step ends at its deadline even for operations under way then:
	// they are cancelled, or drained (Step.Drain), and not counted.
	endAt := time.AfterFunc(time.Until(deadline), func() { stop.Store(true) })
	defer endAt.Stop()

	// Resource use is sampled from the tick goroutine only (issue 3 item 5):
	// once now, once a second, and when the workers are done; the measured
	// part starts at the end of the warm-up.
	var roots []int
	if srv, ok := db.(engine.Server); ok {
		roots = srv.PIDs()
	}
	sampler := metrics.NewStepSampler(roots, opt.DataDir)
	if st.Warmup <= 0 {
		sampler.Mark()
	}

	var wg sync.WaitGroup
	finishOne := func() {
		for _, rr := range runs {
			if rr.role.Ops > 0 && rr.finished.Load() < rr.bounded {
				return
			}
		}
		stop.Store(true)
	}
	for ri, rr := range runs {
		for i, w := range rr.workers {
			wg.Add(1)
			p := newPacer(rr.role, i, len(rr.workers), start)
			quota := share(rr.role.Ops, i, len(rr.workers))
			go func() {
				defer wg.Done()
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
				work(stepCtx, w, rr.states[i], measureFrom, deadline, stop, errs[ri], p, rr, quota, finishOne)
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var died error
	alive := func() bool { return true }
	if l, ok := db.(engine.Liveness); ok {
		alive = func() bool {
			if died == nil {
				died = l.Died()
			}
			return died == nil
		}
	}
	series := tick(ctx, st, threads, runs, start, measureFrom, done, stop, opt, sampler, alive)
	end := time.Now()
	if end.After(deadline) {
		end = deadline
	}
	results[0].Eff = sampler.Efficiency()
	for ri, rr := range runs {
		res := results[ri]
		res.Intervals = series[ri]
		merged, svc := metrics.NewHistogram(), metrics.NewHistogram()
		merged.Merge(rr.sofar) // the workers are done: no lock needed
		for _, s := range rr.states {
			res.Events += s.events
			res.Statements += s.statements
			res.Errors += s.errors
			res.Rows += s.rows
			merged.Merge(s.hist)
			if s.svc != nil {
				svc.Merge(s.svc)
			}
		}
		res.Latency = metrics.PercentilesOf(merged)
		addKindFacts(res, rr)
		addRetryFacts(res, rr)
		if rr.role.Rate > 0 {
			res.Role.Service = metrics.PercentilesOf(svc)
		}
		if enc, err := merged.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
			res.Histogram = enc
		}
		res.ErrorSamples = errs[ri].samples
		res.Seconds = max(0, end.Sub(measureFrom).Seconds())
		if ctx.Err() != nil {
			res.Status = store.StatusInterrupted
		}
	}
	if ctx.Err() != nil {
		return results, ctx.Err()
	}
	if died != nil {
		for _, res := range results {
			res.Status = store.StatusFailed
			res.ErrorSamples = append([]string{died.Error()}, res.ErrorSamples...)
		}
		return results, fmt.Errorf("%s: %w", st.Name, died)
	}
	if lost := stop.lost.Load(); lost != nil {
		// A killed server drops its connections a moment before its exit
		// is noticed: say it died rather than that a connection was lost.
		if died = diedSoon(db); died != nil {
			for _, res := range results {
				res.Status = store.StatusFailed
				res.ErrorSamples = append([]string{died.Error()}, res.ErrorSamples...)
			}
			return results, fmt.Errorf("%s: %w", st.Name, died)
		}
		for _, res := range results {
			res.Status = store.StatusFailed
		}
		return results, fmt.Errorf("%s: a worker lost its connection, step ended: %w", st.Name, *lost)
	}
	return results, nil
}

// diedSoon waits up to a second for an engine's process to be seen gone,
// after an error that a server's death would cause, and returns why it died
// (nil when it lives on or has no process).
func diedSoon(db engine.DB) error {
	l, ok := db.(engine.Liveness)
	if !ok {
		return nil
	}
	for i := 0; i < 20; i++ {
		if err := l.Died(); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// stopper tells every worker of a step to stop: the flag they poll between
// operations, and the step context's cancel, which ends waits and long
// statements, at once or after drain (workload.Step.Drain).
type stopper struct {
	flag  atomic.Bool
	end   context.CancelFunc
	drain time.Duration
	once  sync.Once
	// lost is the first error that cost a worker its connection.
	lost atomic.Pointer[error]
}

// connLost ends the step because a worker's connection is gone.
func (s *stopper) connLost(err error) {
	s.lost.CompareAndSwap(nil, &err)
	s.Store(true)
}

// Store sets the flag; setting it to true also ends the step's context, at
// once or, with a drain time, once operations in flight have had it to
// finish (a lost connection or a dead server ends it at once).
func (s *stopper) Store(v bool) {
	s.flag.Store(v)
	if !v {
		return
	}
	if s.drain <= 0 || s.lost.Load() != nil {
		s.end()
		return
	}
	s.once.Do(func() { time.AfterFunc(s.drain, s.end) })
}

// Load reports whether the step is stopping.
func (s *stopper) Load() bool { return s.flag.Load() }

// share is worker i of n's part of ops: ops/n, plus one for the first ops%n
// workers; 0 (no bound) stays 0.
func share(ops int64, i, n int) int64 {
	if ops <= 0 {
		return 0
	}
	q := ops / int64(n)
	if int64(i) < ops%int64(n) {
		q++
	}
	return q
}

// work is one worker's loop: closed-loop, or paced when p is set.
// Operations that start during the warm-up are run but not counted; the loop
// ends at the deadline, when stop is set, when ctx (the step's context) is
// done, or when the worker has done its quota of an op-bounded role. An
// operation cut short by the end of the step is not counted at all, neither
// as done nor as failed.
func work(ctx context.Context, w workload.Worker, s *workerState, measureFrom, deadline time.Time, stop *stopper,
	errs *errorLog, p *pacer, rr *roleRun, quota int64, finishOne func()) {
	waiter, _ := w.(workload.Waiter)
	if rr.role.Ops > 0 && quota == 0 {
		return
	}
	// Timestamps are monotonic nanoseconds: one clock read each.
	clock := metrics.NewClock()
	measureFromNs, deadlineNs := clock.At(measureFrom), clock.At(deadline)
	if b, ok := batcherOf(w, rr.role); ok {
		workBatches(ctx, b, s, rr, clock, measureFromNs, deadlineNs, stop, errs)
		return
	}
	yielded := clock.Now()
	var mine int64
	for !stop.Load() {
		var intendedNs int64
		if p != nil {
			intended, ok := p.wait(ctx, stop)
			if !ok {
				return
			}
			intendedNs = clock.At(intended)
		}
		if waiter != nil && !waiter.Wait(ctx) {
			return
		}
		t0 := clock.Now()
		if p != nil {
			p.started(clock.Time(t0))
		}
		tally, err := w.Op(ctx)
		t1 := clock.Now()
		if err != nil && ctx.Err() != nil {
			return
		}
		if t1 > deadlineNs {
			// It ended after the step: not counted, neither as done nor
			// as failed.
			stop.Store(true)
			return
		}
		lat := time.Duration(t1 - t0)
		from := t0
		if p != nil {
			from = intendedNs
			lat = time.Duration(t1 - intendedNs)
		}
		failed := err != nil
		s.live.Record(lat, tally.Statements, tally.Rows, failed)
		if from >= measureFromNs {
			// A failed operation counts as an error and its statements as
			// work done, but it is no event: it adds to no throughput, and
			// its latency is not that of a done operation.
			s.statements += int64(tally.Statements)
			s.retries += int64(tally.Retries)
			if tally.Retries > 0 {
				s.retried++
			}
			if failed {
				s.errors++
			} else {
				s.events++
				s.rows += tally.Rows
				metrics.RecordLatency(s.hist, lat)
				if s.svc != nil {
					metrics.RecordLatency(s.svc, time.Duration(t1-t0))
				}
			}
			if k := tally.Kind; k >= 0 && k < len(s.kinds) {
				ks := &s.kinds[k]
				ks.retries += int64(tally.Retries)
				if failed {
					ks.errors++
				} else {
					ks.ops++
					metrics.RecordLatency(ks.hist, lat)
				}
			}
		}
		if failed && !errs.keep(err, stop) {
			return
		}
		if s.handoff.Load() {
			s.handOver(rr)
		}
		if quota > 0 {
			if mine++; mine == quota {
				if p != nil {
					// A paced worker's share lasts until its schedule
					// ends, so a met rate measures as the rate itself.
					p.sleepUntil(ctx, stop, p.end(quota))
				}
				if rr.finished.Add(1) == rr.bounded {
					finishOne()
				}
				return
			}
		}
		if !pause(t1, deadlineNs, &yielded, stop) {
			return
		}
	}
}

// keep logs a failed operation's error and says whether the worker may go
// on: not once the connection is lost, which stops the step.
func (l *errorLog) keep(err error, stop *stopper) bool {
	l.add(err)
	if errors.Is(err, engine.ErrConnLost) {
		stop.connLost(err)
		return false
	}
	return true
}

// pause ends the step when now passes the deadline (returning false), and
// otherwise passes through the Go scheduler if the worker has not for
// yieldEvery.
func pause(now, deadlineNs int64, yielded *int64, stop *stopper) bool {
	if now >= deadlineNs {
		stop.Store(true)
		return false
	}
	if now-*yielded >= yieldEvery {
		*yielded = now
		runtime.Gosched()
	}
	return true
}

// addKindFacts stores a Kinded role's per-kind operations, errors and
// latency percentiles (ms) as facts of its result.
func addKindFacts(res *store.Result, rr *roleRun) {
	if len(rr.workers) == 0 {
		return
	}
	k, ok := rr.workers[0].(workload.Kinded)
	if !ok || len(k.Kinds()) == 0 {
		return
	}
	for i, name := range k.Kinds() {
		merged := metrics.NewHistogram()
		var ops, errs, retries int64
		for _, s := range rr.states {
			if i < len(s.kinds) {
				ops += s.kinds[i].ops
				errs += s.kinds[i].errors
				retries += s.kinds[i].retries
				merged.Merge(s.kinds[i].hist)
			}
		}
		p := metrics.PercentilesOf(merged)
		res.SetKind(store.KindStat{Kind: name, Ops: ops, Errors: errs, Retries: retries, P50: p.P50, P99: p.P99, Max: p.Max})
	}
}

// addRetryFacts stores how many tries after the first a role's operations
// needed (retries) and how many operations needed any (retried), when some
// did, and the facts its first worker found about its session
// (workload.Facter).
func addRetryFacts(res *store.Result, rr *roleRun) {
	var retries, retried int64
	for _, s := range rr.states {
		retries += s.retries
		retried += s.retried
	}
	set := func(k string, v float64) {
		if res.Facts == nil {
			res.Facts = map[string]float64{}
		}
		res.Facts[k] = v
	}
	if retries > 0 {
		set(store.FactRetries, float64(retries))
		set(store.FactRetried, float64(retried))
	}
	if len(rr.workers) > 0 {
		if f, ok := rr.workers[0].(workload.Facter); ok {
			for k, v := range f.Facts() {
				set(k, v)
			}
		}
	}
}

// batcherOf returns w as a Batcher when the runner runs it in batches: a
// role that is neither paced nor bounded, of workers that do not wait.
func batcherOf(w workload.Worker, r workload.Role) (workload.Batcher, bool) {
	b, ok := w.(workload.Batcher)
	_, waits := w.(workload.Waiter)
	return b, ok && r.Rate <= 0 && r.Ops == 0 && !waits
}

// clientFacts describes how a role's workers ran, as facts of its result:
// client_gomaxprocs, the processors Go had for the step (one more than the
// workers for a cgo engine whose workers would take them all);
// client_polled_io, for a server engine, 1 when its clients waited through
// Go's network poller rather than in blocking reads; client_ops_per_call,
// the operations each call into a worker ran (batchSize for a Batcher).
func clientFacts(rr *roleRun, remote, polled bool) map[string]float64 {
	f := map[string]float64{store.FactClientGOMAXPROCS: float64(runtime.GOMAXPROCS(0)), store.FactClientOpsPerCall: 1}
	if remote {
		f[store.FactClientPolledIO] = 0
		if polled {
			f[store.FactClientPolledIO] = 1
		}
	}
	if len(rr.workers) > 0 {
		if _, ok := batcherOf(rr.workers[0], rr.role); ok {
			f[store.FactClientOpsPerCall] = batchSize
		}
	}
	return f
}

// batchSize is how many operations a Batcher runs per call: at a few
// microseconds each, a step's end waits for less than a tenth of a
// millisecond.
const batchSize = 16

// workBatches is work for a Batcher in a step that is neither paced nor
// bounded: operations run batchSize at a time, and a batch that starts
// before measureFrom counts as warm-up.
func workBatches(ctx context.Context, b workload.Batcher, s *workerState, rr *roleRun, clock metrics.Clock, measureFromNs, deadlineNs int64,
	stop *stopper, errs *errorLog) {
	lat := make([]int64, batchSize)
	yielded := clock.Now()
	for !stop.Load() {
		t0 := clock.Now()
		n, tally, err := b.OpBatch(ctx, lat)
		t1 := clock.Now()
		if err != nil && ctx.Err() != nil {
			return
		}
		failed := err != nil
		s.live.RecordBatch(lat[:n], tally.Statements, tally.Rows, failed)
		if t0 >= measureFromNs {
			// The failed operation, the batch's last, is no event.
			done := n
			if failed && done > 0 {
				done--
				s.errors++
			}
			s.events += int64(done)
			s.statements += int64(tally.Statements)
			s.rows += tally.Rows
			for _, ns := range lat[:done] {
				metrics.RecordLatency(s.hist, time.Duration(ns))
			}
		}
		if failed && !errs.keep(err, stop) {
			return
		}
		if s.handoff.Load() {
			s.handOver(rr)
		}
		if !pause(t1, deadlineNs, &yielded, stop) {
			return
		}
	}
}

// yieldEvery is how often a worker passes through the Go scheduler. A
// goroutine that only ever makes C calls or blocking system calls never does,
// and Go's monitor then takes its processor by force every 10 ms and stays
// awake, waking every 20 us, for the next millisecond or more: 2,200 extra
// context switches a second at one RocksDB thread here. A yield costs a
// thread hand-off, and often moves the worker to another thread and CPU, so
// it comes as rarely as keeps the monitor away: just under its 10 ms
// (PostgreSQL point query at 4 threads on 2 CPUs: 78k QPS yielding every
// 4 ms, 88k every 8 ms, 68k never).
const yieldEvery = int64(8 * time.Millisecond)

// tick drains the workers' live counters every second until they are done,
// returning one 1-second series per role and printing a line every report
// interval.
func tick(ctx context.Context, st workload.Step, threads int, runs []*roleRun, start, measureFrom time.Time,
	done <-chan struct{}, stop *stopper, opt Options, sampler *metrics.StepSampler, alive func() bool) [][]store.Interval {
	series := make([][]store.Interval, len(runs))
	windows := make([]metrics.Window, len(runs))
	windowStart := start
	last := start
	// Intervals are aligned to the end of the warm-up: interval k covers
	// (measureFrom + k s, measureFrom + (k+1) s], so warm-up seconds have
	// negative indexes and the first one may be shorter than a second.
	next := measureFrom.Add(-time.Duration(st.Warmup/time.Second) * time.Second)
	for !next.After(start) {
		next = next.Add(time.Second)
	}
	drain := func(now time.Time, boundary time.Time, final bool) {
		load := sampler.Sample()
		if !final && boundary.Equal(measureFrom) {
			sampler.Mark()
		}
		secs := now.Sub(last).Seconds()
		sec := int(boundary.Sub(measureFrom).Round(time.Second)/time.Second) - 1
		for ri, rr := range runs {
			var w metrics.Window
			for _, s := range rr.states {
				s.live.DrainInto(&w)
			}
			if w.Events > 0 || secs >= 0.5 {
				iv := store.Interval{Sec: sec, Seconds: secs, Events: w.Events, Statements: w.Statements,
					Errors: w.Errors, Rows: w.Rows, P95: w.Quantile(0.95), Max: w.Max}
				if ri == 0 {
					iv.Load = &load
				}
				series[ri] = append(series[ri], iv)
			}
			if opt.Live != nil && secs > 0 {
				opt.Live(LiveSample{Test: st.Name, Role: rr.role.Name, Threads: threads, Warm: now.Before(measureFrom),
					Seconds: secs, Events: w.Events, Errors: w.Errors, Statements: w.Statements, Rows: w.Rows,
					P50: w.Quantile(0.5), P95: w.Quantile(0.95), P99: w.Quantile(0.99), Max: w.Max})
			}
			windows[ri].Add(&w)
		}
		last = now
		if opt.Out != nil && opt.ReportInterval > 0 && now.Sub(windowStart) >= opt.ReportInterval-50*time.Millisecond {
			suffix := ""
			if opt.Progress != nil {
				suffix = opt.Progress()
			}
			printLine(opt.Out, st.Name, threads, now.Sub(start), now.Before(measureFrom), now.Sub(windowStart), runs, windows,
				cmp.Or(opt.Percentile, 95), suffix)
			for i := range windows {
				windows[i] = metrics.Window{}
			}
			windowStart = now
		}
	}
	// flush hands the intervals not yet streamed and the latency so far to
	// opt.Stream, every FlushEvery (and never at the end: the final result
	// carries them all). It asks the workers for their histograms
	// (workerState.handoff) and streams a second later, once they have
	// handed them over.
	flushed := make([]int, len(runs))
	flushEvery := cmp.Or(opt.FlushEvery, time.Minute)
	lastFlush := start
	asked := false
	var snap *hdr.Histogram
	flush := func(now time.Time) {
		if opt.Stream == nil {
			return
		}
		if asked {
			asked = false
			if snap == nil {
				snap = metrics.NewHistogram()
			}
			for ri, rr := range runs {
				opt.Stream.Flush(ri, series[ri][flushed[ri]:])
				flushed[ri] = len(series[ri])
				opt.Stream.FlushLatency(ri, rr.soFar(snap, lastFlush.Sub(measureFrom).Seconds()))
			}
			return
		}
		if now.Sub(lastFlush) < flushEvery-50*time.Millisecond {
			return
		}
		lastFlush = now
		for _, rr := range runs {
			for _, s := range rr.states {
				s.handoff.Store(true)
			}
		}
		asked = true
	}
	// final drains the partial interval after the last boundary.
	final := func() {
		now := time.Now()
		drain(now, next, true)
	}
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			drain(now, next, false)
			flush(now)
			if !alive() {
				// The engine's process is gone: stop the workers now
				// rather than count failures until the step's time is up.
				stop.Store(true)
			}
			next = next.Add(time.Second)
			t.Reset(time.Until(next))
		case <-ctx.Done():
			stop.Store(true)
			<-done
			final()
			return series
		case <-done:
			final()
			return series
		}
	}
}

func printLine(out io.Writer, test string, threads int, at time.Duration, warm bool, span time.Duration,
	runs []*roleRun, windows []metrics.Window, pct float64, suffix string) {
	secs := span.Seconds()
	phase := ""
	if warm {
		phase = " (warm-up)"
	}
	phase += suffix
	if len(runs) == 1 && runs[0].role.Name == "" {
		w := &windows[0]
		fmt.Fprintf(out, "[ %3.0fs ] %s thds: %d tps: %.2f qps: %.2f lat (ms,%g%%): %.3f max: %.3f err/s: %.2f%s\n",
			at.Seconds(), test, threads, float64(w.Events)/secs, float64(w.Statements)/secs, pct,
			ms(w.Quantile(pct/100)), ms(w.Max), float64(w.Errors)/secs, phase)
		return
	}
	line := fmt.Sprintf("[ %3.0fs ] %s", at.Seconds(), test)
	for i, rr := range runs {
		w := &windows[i]
		n, unit := w.Events, "/s"
		if rr.rows {
			n, unit = w.Rows, " rows/s"
		}
		line += fmt.Sprintf(" %s: %.1f%s max %.3f ms err %d", rr.role.Name, float64(n)/secs, unit, ms(w.Max), w.Errors)
	}
	fmt.Fprintln(out, line+phase)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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
