package runner

import (
	"runtime"
	"sync"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// This file is the runner's collection: what each worker measures and the
// results made of it at the end (series.go: the per-second series drained
// from it while the step runs).

// maxErrorSamples is how many distinct error messages a result keeps.
const maxErrorSamples = 5

// workerState is what one worker goroutine measures; only it writes here
// until it has finished.
type workerState struct {
	live meter.Live
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
	// abandoned is set by the step's watchdog when it left the worker
	// behind in an operation (watch.go): its session is still in use, so
	// the step does not close it; the worker's goroutine does when it
	// returns.
	abandoned bool
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

// newWorkerState is the empty state of worker w of role r: a latency
// histogram, one for service time when r is rate-limited, and one per kind
// of a Kinded worker's operations.
func newWorkerState(w workload.Worker, r workload.Role) *workerState {
	s := &workerState{hist: meter.NewHistogram()}
	if r.Rate > 0 {
		s.svc = meter.NewHistogram()
	}
	if k, ok := w.(workload.Kinded); ok {
		for range k.Kinds() {
			s.kinds = append(s.kinds, kindState{hist: meter.NewHistogram()})
		}
	}
	return s
}

// collect fills a role's result from what its workers measured: counts,
// the merged latency (and service time) histogram and its percentiles, the
// per-kind and retry facts, the error samples, the series and the measured
// seconds.
func collect(res *store.Result, rr *roleRun, series []store.Interval, seconds float64) {
	res.Intervals = series
	merged, svc := meter.NewHistogram(), meter.NewHistogram()
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
	res.Latency = meter.PercentilesOf(merged)
	addKindFacts(res, rr)
	addRetryFacts(res, rr)
	if rr.role.Rate > 0 {
		res.Role.Service = meter.PercentilesOf(svc)
	}
	if enc, err := merged.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		res.Histogram = enc
	}
	res.ErrorSamples = rr.errs.samples
	res.Seconds = seconds
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
		merged := meter.NewHistogram()
		var ops, errs, retries int64
		for _, s := range rr.states {
			if i < len(s.kinds) {
				ops += s.kinds[i].ops
				errs += s.kinds[i].errors
				retries += s.kinds[i].retries
				merged.Merge(s.kinds[i].hist)
			}
		}
		p := meter.PercentilesOf(merged)
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
		if _, ok := batcherOf(rr.workers[0], rr.role, rr.limit != nil); ok {
			f[store.FactClientOpsPerCall] = batchSize
		}
	}
	return f
}
