// Package runner executes a workload's steps against an engine: N workers in
// closed loops, each with its own connection, a warm-up that is excluded from
// results, a fixed measured duration, a live 1-second series and HDR latency
// histograms. It owns the clock and the error policy; workloads own only
// their statements.
package runner

import (
	"context"
	"errors"
	"io"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
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
	// runtime's monotonic clock (meter.NewTimeClock): slower, but inside
	// a testing/synctest bubble every time the runner reads, timers and
	// sleeps included, is then the bubble's fake clock, so tests run steps
	// in fake time, exactly and fast.
	TimeClock bool
	// SpeedProbeEvery is the pause between two CPU speed probes on one CPU
	// (meter.SpeedProbe): 0 takes meter.SpeedProbeEveryFor the step's
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
// last call, and FlushLatency after it with the role's latency so far;
// FlushInternals, from the same goroutine, with the engine series' points
// read since its last call for the headline role ri's result. A failed
// Begin turns the stream off for the step.
type Stream interface {
	Begin(results []*store.Result) error
	Flush(ri int, ivs []store.Interval)
	FlushLatency(ri int, l SoFar)
	FlushInternals(ri int, series []store.EngineSeries)
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

// MeasureRoles runs a measured step and returns one result per role, the
// headline role first (a step without roles has one). If ctx is cancelled
// the results hold what was measured so far and have status interrupted; the
// returned error is then ctx's.
func MeasureRoles(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, opt Options) ([]*store.Result, error) {
	rs, errs := measureParts(ctx, []stepPart{{db: db, seed: seed, stream: opt.Stream, live: opt.Live}}, st, threads, 0, opt)
	for _, r := range rs[0] {
		metric.Stamp(r) // complete: its headline is its metric's value
	}
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
// step (single.go); several are the targets of an interleaved step
// (interleave.go), which take turns of length slice. It returns each
// part's results (one per role, headline first) and error.
func measureParts(ctx context.Context, parts []stepPart, st workload.Step, threads int, slice time.Duration,
	opt Options) ([][]*store.Result, []error) {
	s := newStepRun(ctx, parts, st, threads, opt)
	defer s.close()
	if err := s.prepare(); err != nil {
		s.failAll(err)
		return s.resultsOf, s.errs
	}
	if len(parts) == 1 {
		s.measureSingle()
	} else {
		s.measureInterleaved(slice)
	}
	return s.resultsOf, s.errs
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
