package store

import "time"

// Run statuses.
const (
	StatusRunning     = "running"
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
	// Statements and Rows are meaningful for them.
	Action bool
	// Metric is "qps" or "krps" (thousands of rows scanned per second).
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
}

// Interval is one second of a measured step. Sec counts from the end of the
// warm-up, so warm-up seconds are negative.
type Interval struct {
	Sec                              int
	Seconds                          float64
	Events, Statements, Errors, Rows int64
	P95, Max                         time.Duration
}

// QPS is statements per second, as sysbench counts them.
func (r Result) QPS() float64 { return rate(r.Statements, r.Seconds) }

// TPS is events (transactions) per second.
func (r Result) TPS() float64 { return rate(r.Events, r.Seconds) }

// KRPS is METHOD.md 2.6's scan figure: (rows per scan / 1000) / mean latency in seconds.
func (r Result) KRPS() float64 {
	if r.Latency.Mean <= 0 {
		return 0
	}
	return float64(r.RowsPerOp) / 1000 / r.Latency.Mean.Seconds()
}

// Throughput is the step's headline number in its own metric.
func (r Result) Throughput() float64 {
	if r.Metric == "krps" {
		return r.KRPS()
	}
	return r.QPS()
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
