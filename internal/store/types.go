package store

import (
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/meter"
)

// Run statuses.
const (
	StatusRunning = "running"
	// StatusAbandoned is a run whose process ended without finishing it
	// (killed hard), as `benchlab runs --prune` marks it.
	StatusAbandoned   = "abandoned"
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusSuperseded is a run of a queued job's attempt that lost the job
	// to a later attempt (its worker was cut off, or stopped): what it
	// measured is kept, and reports and histories leave it out (lease.go).
	StatusSuperseded = "superseded"
)

// Experiment is one invocation of a spec: a matrix of runs with one base.
type Experiment struct {
	ID      int64
	Name    string
	Base    string
	Preset  string
	Spec    string // the spec as TOML, after defaults and flags
	Created time.Time
	// Targets lists the target names in spec order.
	Targets []string
}

// Run is one cell of the matrix: one target, one repeat, a full pass of the
// workload's sequence from a fresh load.
type Run struct {
	ID           int64
	ExperimentID int64
	Target       string
	Engine       string
	Version      string
	Repeat       int
	Status       string
	Error        string
	Started      time.Time
	Ended        time.Time
	// Manifest is the JSON document that makes the run reproducible.
	Manifest string
	// Job is the queued job the run belongs to (0: none), and Lease the
	// lease of the job's attempt that made it (TakeLease).
	Job   int64
	Lease string
}

// Result is one step of a run at one thread count.
type Result struct {
	ID      int64
	RunID   int64
	Seq     int // position in the run's sequence
	Test    string
	Family  string
	Group   string
	Threads int
	// Warm is true for warm-up, .pre, load and cleanup steps, which summaries leave out.
	Warm bool
	// Action is true for non-measured steps (load, cleanup); only Seconds,
	// Statements, Rows and Eff (the resource use while it ran) are
	// meaningful for them.
	Action bool
	// Metric names the step's headline metric as the suite that produced
	// it registered it (metric.Register): "qps", sysbench's "krps", the
	// Insert Benchmark's "ips", TPC-C's "tpmc", ...
	Metric string
	// Headline is the step's number in its metric, Unit the metric's unit
	// and Direction whether more is better, as the producer computed them
	// when it stored the result (metric.Stamp): a stored result reads the
	// same whichever suites the reading benchlab links. Unit is "" for a
	// result stored before results kept their headline, until
	// metric.Fill computes it from the metric registry.
	Headline  float64
	Unit      string
	Direction analysis.Direction
	RowsPerOp int64
	Status    string
	Started   time.Time
	// Seconds is the measured time (after warm-up).
	Seconds                          float64
	Events, Statements, Errors, Rows int64
	Latency                          Latency
	// Histogram is the HDR latency histogram, encoded.
	Histogram []byte
	// ErrorSamples keeps the first distinct error messages.
	ErrorSamples []string
	Intervals    []Interval
	// Internals are the engine's counters and gauges per second of the
	// measured part (engine.InternalsReader), by name; nil when the
	// engine reads none or the step was not sampled.
	Internals []EngineSeries
	// Eff is the step's resource use sampled from /proc while it ran (issue
	// 3 item 5, docs/method.md 1.11, 2.6, 3); nil when nothing was sampled (actions,
	// results stored before the efficiency columns existed).
	Eff *Efficiency
	// Role says which role of a multi-role step this result measures.
	Role RoleInfo
	// Facts are named numbers an action or an external tool measured (LSM
	// facts after a key-value step), units in the names, and, for measured
	// steps, how benchlab's workers ran (client_gomaxprocs,
	// client_polled_io, client_ops_per_call: see runner.clientFacts).
	Facts map[string]float64
	// DBBytes is the du of the data dir after the "prepare" action (or
	// after a step that asks for it, Step.SizeAfter): the
	// database size after load (docs/method.md 1.11 dbdirGB). 0: not measured;
	// NotReadable: the dir could not be walked.
	DBBytes int64
	// Profile is where the step's CPU time went (run --profile): the call
	// stacks sampled over its measured part, or why none were taken. Nil
	// when profiling was off. Kept on the headline result only.
	Profile *Profile
}

// Profile is a step's CPU profile: the call stacks of the server's process
// tree (of benchlab itself for an in-process engine) sampled Hz times per
// second of CPU time over the measured part, folded ("root;...;leaf
// count" lines, package profile). A profile that could not be taken has no
// stacks and a Note saying why (perf missing, refused, no samples).
type Profile struct {
	Hz      int
	Samples int64
	Folded  []byte
	Note    string
	// OffCPU are the folded stacks the profiled threads left their CPUs
	// from, each with the microseconds they were off it
	// (profile.FoldOffCPU); nil when not recorded (a profile by process
	// ID, or perf refused the tracepoint).
	OffCPU []byte
}

// Sentinels stored in an efficiency counter instead of a number: the
// instruments' (meter.NotReadable, meter.NotMeasured).
const (
	NotReadable = meter.NotReadable
	NotMeasured = meter.NotMeasured
)

// Efficiency is a measured step's resource use as the instruments
// sampled it (meter.Efficiency), stored with its result.
type Efficiency = meter.Efficiency

// IntervalLoad is one second's CPU use (meter.IntervalLoad).
type IntervalLoad = meter.IntervalLoad

// Interval is one second of a measured step. Sec counts from the end of the
// warm-up, so warm-up seconds are negative.
type Interval struct {
	Sec                              int
	Seconds                          float64
	Events, Statements, Errors, Rows int64
	P95, Max                         time.Duration
	// Load is nil when the second was not sampled.
	Load *IntervalLoad
}

// QPS is statements per second, as sysbench counts them.
func (r Result) QPS() float64 { return rate(r.Statements, r.Seconds) }

// TPS is events (transactions) per second.
func (r Result) TPS() float64 { return rate(r.Events, r.Seconds) }

// ErrorRate is the share of the step's attempted operations that failed,
// errors / (events + errors), from 0 to 1; 0 when none was attempted. The
// error policy (workload.max_error_rate) and every results table read it,
// since a throughput alone hides a target whose operations fail.
func (r Result) ErrorRate() float64 {
	if n := r.Events + r.Errors; n > 0 {
		return float64(r.Errors) / float64(n)
	}
	return 0
}

// Stalled says a measured step completed no operation and failed none in
// its measured part, so its headline is no rate of the engine: the machine
// did not schedule benchlab, or operations under way held the step's end.
// Every reader (the report's relative table and notes, compare and its
// gate, history) leaves such a result out of its verdicts and says so
// (docs/statistics.md, "Stalled steps").
func (r Result) Stalled() bool {
	return !r.Warm && !r.Action && r.Events == 0 && r.Errors == 0 && !(r.Throughput() > 0)
}

// Throughput is the step's headline number in its own metric (Headline);
// statements per second for a result that carries no headline (stored
// before results kept one, and not filled by metric.Fill).
func (r Result) Throughput() float64 {
	if r.Unit == "" {
		return r.QPS()
	}
	return r.Headline
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// Latency holds the latency figures stored for every step
// (meter.Latency).
type Latency = meter.Latency
