package store

import (
	"time"

	"benchlab/internal/metric"
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
	Metric    string
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

// Sentinels stored in an efficiency counter instead of a number. Values are
// never guessed: a counter that could not be read says so.
const (
	// NotReadable marks a counter that exists but could not be read (for
	// example /proc/<pid>/io of another user's process, or a data dir on a
	// device missing from /proc/diskstats). Stored as -1.
	NotReadable = -1
	// NotMeasured marks a counter with nothing to measure, such as server
	// CPU for an in-process engine (SQLite). Stored as NULL.
	NotMeasured = -2
)

// Efficiency holds the totals of one measured step between its first sample
// (end of warm-up) and its last (all workers done). Per-operation figures are
// rates divided by the step's QPS, as docs/method.md 2.6 divides vmstat and iostat
// averages: total / Seconds / QPS. Each counter is >= 0, NotReadable or
// NotMeasured.
type Efficiency struct {
	// Seconds is the wall time between the first and the last sample.
	Seconds float64
	// ServerCPU and ClientCPU are user+sys CPU seconds of the server's
	// process tree and of benchlab itself (which, for an in-process engine,
	// includes the engine). Server CPU comes from /proc/<pid>/stat in clock
	// ticks of 10 ms.
	ServerCPU, ClientCPU float64
	// Server* come from /proc/<pid>/io summed over the server tree: bytes the
	// processes caused to be read from or written to storage, and read/write
	// system calls on any file descriptor (sockets included).
	ServerReadBytes, ServerWriteBytes, ServerReadCalls, ServerWriteCalls int64
	// Client* are the same for benchlab (/proc/self/io). For an in-process
	// engine they are the engine's IO.
	ClientReadBytes, ClientWriteBytes, ClientReadCalls, ClientWriteCalls int64
	// Device is the block device holding the data dir ("vda"); empty when it
	// could not be found, and then the Dev* counters are NotReadable.
	Device string
	// Dev* are reads and writes completed and bytes moved on Device, from
	// /proc/diskstats. They count every process using the device.
	DevReads, DevWrites, DevReadBytes, DevWriteBytes int64
	// ServerCS and ClientCS are voluntary plus involuntary context switches.
	ServerCS, ClientCS int64
	// ServerPeakRSS and ClientPeakRSS are the largest resident sizes seen in
	// any sample, in bytes.
	ServerPeakRSS, ClientPeakRSS int64
	// MachineCPU, MachineBusy and MachineSteal are CPU seconds of all cores
	// from /proc/stat over the step: all time, busy time (not idle, not
	// iowait) and time stolen by the hypervisor.
	MachineCPU, MachineBusy, MachineSteal float64
}

// StealPct is the share of all CPU time stolen by the hypervisor during the
// step; NotReadable when /proc/stat was not readable.
func (e *Efficiency) StealPct() float64 {
	if e.MachineCPU <= 0 || e.MachineSteal < 0 {
		return NotReadable
	}
	return 100 * e.MachineSteal / e.MachineCPU
}

// ForeignCPU is the busy CPU seconds of processes that are neither the
// server nor benchlab: machine busy time minus server and client CPU,
// floored at 0 (the three come from counters of different resolution).
func (e *Efficiency) ForeignCPU() float64 {
	if e.MachineBusy < 0 || e.ClientCPU < 0 || e.ServerCPU == NotReadable {
		return NotReadable
	}
	return max(0, e.MachineBusy-e.ClientCPU-max(e.ServerCPU, 0))
}

// ForeignPct is ForeignCPU as a share of all CPU time of the machine.
func (e *Efficiency) ForeignPct() float64 {
	f := e.ForeignCPU()
	if f < 0 || e.MachineCPU <= 0 {
		return NotReadable
	}
	return 100 * f / e.MachineCPU
}

// PerOp divides a step total by the number of operations the step did in
// the sampled window: total / Seconds / qps. Sentinels pass through.
func (e *Efficiency) PerOp(total, qps float64) float64 {
	if total < 0 {
		return total
	}
	if e.Seconds <= 0 || qps <= 0 {
		return NotReadable
	}
	return total / e.Seconds / qps
}

// IntervalLoad is the CPU use of one second, so that a disturbed second
// is visible. Each figure is >= 0, NotReadable or NotMeasured.
type IntervalLoad struct {
	// ServerCPU and ClientCPU are CPU seconds used in the interval.
	ServerCPU, ClientCPU float64
	// StealPct and ForeignPct are shares of all CPU time of the machine.
	StealPct, ForeignPct float64
	// CPUSpeed is the mean rate of the CPU speed probes that ended in the
	// second (metrics.SpeedProbe: rounds per CPU microsecond, comparable
	// with the step's fact cpu_speed); 0 when none did (probes off, the
	// warm-up, a second between two probes).
	CPUSpeed float64
}

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

// Throughput is the step's headline number in its own metric, as the
// suite that produced it declared the metric (metric.Register); QPS for a
// metric no linked suite declares.
func (r Result) Throughput() float64 {
	return metric.Of(r.Metric).Value(metric.Counts{Seconds: r.Seconds, Events: r.Events, Statements: r.Statements,
		Rows: r.Rows, RowsPerOp: r.RowsPerOp, Mean: r.Latency.Mean, Facts: r.Facts})
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// Latency holds the latency figures stored for every step.
type Latency struct {
	Mean, P50, P95, P99, P999, Max time.Duration
}
