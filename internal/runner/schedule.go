package runner

import (
	"context"
	"sync/atomic"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

// This file is the runner's scheduling policy: which workers a step runs
// (its roles, their threads, rates and bounds), how they wait for IO and
// hold threads, and when the step starts measuring and ends. It decides;
// loop.go runs and collect.go counts.

// stepRoles returns the roles a step runs at the given thread count: its
// own, or one role of the step's workers for a step without roles. The
// options' open-loop rate (sysbench's --rate) paces the headline role, the
// first, unless it has a rate of its own; other roles keep theirs. A role's
// Threads of 0 becomes the step's count.
func stepRoles(st workload.Step, threads int, opt Options) []workload.Role {
	roles := st.Roles
	if len(roles) == 0 {
		roles = []workload.Role{{NewWorker: st.NewWorker}}
	}
	out := make([]workload.Role, len(roles))
	for i, r := range roles {
		if r.Threads <= 0 {
			r.Threads = threads
		}
		if i == 0 && r.Rate <= 0 && opt.Rate > 0 {
			r.Rate = opt.Rate
		}
		out[i] = r
	}
	return out
}

// eventLimit ends a step once its headline role has done n measured
// operations, done or failed (sysbench's --events): the warm-up's do not
// count, nor do operations that end after the n-th was taken.
type eventLimit struct {
	n     int64
	taken atomic.Int64
}

// newEventLimit returns the limit of the options' Events for role r, the
// headline role; nil when there is none or r has a count of its own
// (Role.Ops).
func newEventLimit(r workload.Role, opt Options) *eventLimit {
	if opt.Events <= 0 || r.Ops > 0 {
		return nil
	}
	return &eventLimit{n: opt.Events}
}

// take counts one measured operation: ok says it is within the limit, last
// that it is the limit's last.
func (l *eventLimit) take() (ok, last bool) {
	k := l.taken.Add(1)
	return k <= l.n, k == l.n
}

// roleMetric is the headline metric of role r of step st: its own, the
// step's, or statements per second.
func roleMetric(st workload.Step, r workload.Role) metric.Metric {
	m := st.Metric
	if r.Metric.Name != "" {
		m = r.Metric
	}
	if m.Name == "" {
		m = metric.QPS
	}
	return m
}

// ioPlan is how a step's workers wait for their engine and hold threads.
// Server clients wait for their answers in one of three ways (measured on 2
// CPUs against sysbench's point query):
//   - no more workers than processors: blocking reads, each worker on its
//     own OS thread;
//   - up to spreadPerCPU workers per CPU: blocking reads on threads Go may
//     swap, with a processor for each worker and one spare (PostgreSQL 15,
//     4 threads: 0.92 of sysbench's rate, against 0.85 through the poller);
//   - more: Go's network poller, on threads shared between workers
//     (engine.WithPolledIO).
//
// Through the poller every answer costs the client the runtime's hand-offs
// besides the read (a read that finds nothing, the poller's thread waking,
// idle processors' threads started); a blocking read is woken by the kernel
// directly, so it is cheaper up to a few workers per CPU. Past that, each
// blocked worker's periodic pass through the scheduler starts a thread, and
// the poller, which batches answers, is no dearer: it stays past
// spreadPerCPU. The measurements behind these limits are in
// docs/design-notes.md#how-workers-wait-for-a-server.
type ioPlan struct {
	// remote: the engine is a server reached over a socket.
	remote bool
	// polled: workers wait through Go's network poller (and never yield:
	// every read that waits passes through the scheduler).
	polled bool
	// lockThreads: each worker keeps its own OS thread.
	lockThreads bool
	// procs is the GOMAXPROCS for the step; 0 leaves it as it is.
	procs int
}

// planIO decides the ioPlan of total workers on db with procs processors
// and cpus CPUs.
func planIO(db engine.DB, total, procs, cpus int) ioPlan {
	r, _ := db.(engine.Remote)
	remote := r != nil && r.Remote()
	p := ioPlan{remote: remote, polled: remote && total > max(procs, spreadPerCPU*cpus)}
	spread := remote && !p.polled && total > procs
	p.lockThreads = !p.polled && !spread
	// Workers in C calls with no processor idle make Go's monitor take
	// processors back and wake threads to hold them, over and over: one
	// spare processor stops it (SQLite point query at 2 threads on 2 CPUs:
	// +10% QPS, -8% CPU per query here). Spread server clients get one too.
	if c, ok := db.(engine.CallsC); (ok && c.CallsC() && total >= procs) || spread {
		p.procs = total + 1
	}
	return p
}

// spreadPerCPU is how many server clients per CPU still wait with blocking
// reads, each on a thread of its own (see ioPlan).
const spreadPerCPU = 8

// workerContext is the context workers are created with: it asks for
// polled IO when the plan says so, and tells the connections of server
// clients locked to their threads that the runner passes through the
// scheduler for them.
func (p ioPlan) workerContext(ctx context.Context) context.Context {
	if p.polled {
		return engine.WithPolledIO(ctx)
	}
	if p.remote && p.lockThreads {
		return engine.WithWorkerPasses(ctx)
	}
	return ctx
}

// passesElsewhere reports whether the step's workers pass through the Go
// scheduler without the runner's periodic yields: polled workers whenever
// a read waits, and server clients on swapped threads in their
// connections, every 8 ms right after sending a request and whenever a
// wait outlasts a slice (package blockconn), which also covers an
// operation of many statements that outlasts Go's 10 ms preemption. A
// worker locked to its thread yields from the runner, which unlocks the
// thread for the pass (see pause).
func (p ioPlan) passesElsewhere() bool {
	return p.polled || (p.remote && !p.lockThreads)
}

// window is when a step's parts happen: the workers start at start, the
// measured part begins at measureFrom (after the warm-up) and the step ends
// at deadline at the latest.
type window struct {
	start, measureFrom, deadline time.Time
}

// forever is the deadline of a step that ends only when its op-bounded
// roles are done.
const forever = 100 * 365 * 24 * time.Hour

// stepWindow is the window of st started at start: the warm-up, then the
// step's Duration. A step with an op-bounded role ends when every such role
// has done its operations, or at MaxDuration, which keeps one that cannot
// sustain its rate from hanging. An event limit (eventLimit) may end it
// earlier, never later.
func stepWindow(st workload.Step, roles []workload.Role, start time.Time) window {
	w := window{start: start, measureFrom: start.Add(st.Warmup)}
	w.deadline = w.measureFrom.Add(st.Duration)
	for _, r := range roles {
		if r.Ops > 0 {
			w.deadline = start.Add(forever)
			if st.MaxDuration > 0 {
				w.deadline = start.Add(st.MaxDuration)
			}
			break
		}
	}
	return w
}

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

// batcherOf returns w as a Batcher when the runner runs it in batches: a
// role that is neither paced nor bounded (by its own count or an event
// limit), of workers that do not wait.
func batcherOf(w workload.Worker, r workload.Role, limited bool) (workload.Batcher, bool) {
	b, ok := w.(workload.Batcher)
	_, waits := w.(workload.Waiter)
	return b, ok && r.Rate <= 0 && r.Ops == 0 && !limited && !waits
}

// batchSize is how many operations a Batcher runs per call: at a few
// microseconds each, a step's end waits for less than a tenth of a
// millisecond.
const batchSize = 16

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
