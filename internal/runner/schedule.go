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
// besides the read: the read that finds nothing, the poller's thread waking,
// idle processors' threads started for the goroutines it readies, the
// monitor's deep sleep ended by the next system call (counted with perf on
// MariaDB's point query at 8 threads: 4.1-4.5 system calls, 0.3-0.5 futex
// calls and 0.9-1.3 context switches per query, against sysbench's 3.9, 0 and
// 1.0); a blocking read is woken by the kernel directly. At 8 and 16 threads
// blocking reads cost 20-26 us of client CPU per query where the poller cost
// 28-41 (MariaDB 10.11; PostgreSQL 15: 21-26 against 28-32; alternating
// pairs, load average 8-20). At 64 the poller was the cheaper on MariaDB
// (32-36 against 40-59 us) and no worse on PostgreSQL: each blocked worker's
// periodic pass through the scheduler (every 8 ms) starts a thread, 8,000 a
// second at 64 workers. (An earlier measurement, by rate, had the poller
// ahead at 8 threads on PostgreSQL: 0.89 of sysbench's rate against 0.83.)
// Measured again at 64 after locked workers' yields were made cheaper
// (b610514), blocking reads on swapped threads against the poller in 4
// alternating pairs (load average 20-49): MariaDB 15.3-16.8 us of client CPU
// per query against 11.9-15.6 (the poller's answers come in batches, 0.3-0.5
// context switches per query against 1.2-1.3), at a higher rate (37-61k
// queries/s against 20-39k); PostgreSQL 15.7-19.7 us against 15.1-24.6, at a
// lower rate (23-31k against 29-32k); workers locked to their threads were no
// cheaper. The poller stays past 8 per CPU.
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
