package workload

import (
	"context"
	"io"
	"time"

	"benchlab/internal/engine"
)

// External is a step that an outside program does (Step.External): the
// runner gives it the cell's facts and measures the machine while it runs;
// the step runs the program and says what it did.
type External func(ctx context.Context, db engine.DB, x *ExternalRun) (ExternalResult, error)

// ExternalRun is what the runner gives an External step.
type ExternalRun struct {
	// Threads is the step's thread count (a load's: the first of the
	// experiment's); Seed the worker seed of the step at that count.
	Threads int
	Seed    uint64
	// Dir is the cell's data dir, which the runner removes after the cell.
	Dir string
	// Log receives progress lines.
	Log io.Writer
	// Started tells the runner the program's process ID once it runs: its
	// process tree is the step's client side. Nil for a load.
	Started func(pid int)
	// Exited tells the runner the program has exited and is not yet
	// reaped, so that its last sample counts the whole tree's CPU and IO.
	// Nil for a load.
	Exited func()
}

// ExternalResult is what an External step's program did.
type ExternalResult struct {
	// Seconds is the measured time; Ops the operations done in it, the
	// denominator of the per-operation figures (1 for a program whose
	// operations are not counted).
	Seconds float64
	Ops     int64
	// Latency of one operation, when the program reports it.
	Mean, P50, P95, P99, P999, Max time.Duration
	// Facts are named numbers the program reported (the headline a metric
	// reads, bandwidth, ...), units in the names.
	Facts map[string]float64
	// Intervals are the program's own per-period figures, in order: the
	// step's 1-second series.
	Intervals []ExternalInterval
}

// ExternalInterval is one period of an External step's series.
type ExternalInterval struct {
	// Sec numbers the period from 0; Seconds is its length.
	Sec     int
	Seconds float64
	// Events is what the step's metric counts in it (its Series reads it).
	Events int64
}
