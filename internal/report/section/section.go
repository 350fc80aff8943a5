package section

import (
	"fmt"
	"sync"

	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Input is one experiment as a suite's sections read it: what the store
// holds, the stored spec parsed once by the report's loader, and the
// report's verdict machinery as a function, so a suite judges a cell as
// the generic tables do without knowing how.
type Input struct {
	Experiment store.Experiment
	Runs       []store.Run
	// Results maps run ID to its step results.
	Results map[int64][]store.Result
	// Spec is the stored spec; nil when it cannot be read.
	Spec *spec.Spec
	// Targets are the experiment's targets, the base first.
	Targets []string
	// Compare judges a target's repeats of one measured step against the
	// base's on their headline throughput, with all the evidence the
	// report has (noise history, within-run variance, repeats).
	Compare func(base, other []store.Result, baseTarget, otherTarget string) Cell
}

// Sections are what a suite adds to the report of its experiments: tables
// and notes, and whether its tables stand instead of the generic result
// tables. Every note kind of the generic layout (verdicts, evidence,
// canaries, disturbed and noisy steps, spread, engine statistics) is
// printed with either layout: only the tables are replaced.
type Sections struct {
	Tables []Table
	Notes  []string
	// Replace drops the generic tables (relative and absolute throughput,
	// latency, operations by kind, spread) for Tables.
	Replace bool
	// Planned names the steps (by test) in which the suite disrupts the
	// system on purpose, with what it did ("node 2 killed at 5.0 s"): the
	// report does not call their per-second dip unstable, since the dip is
	// what they measure.
	Planned map[string]string
}

// Sectioner is a suite that lays out report sections of its own, as the
// Insert Benchmark's summary, SLA and response-time tables (docs/method.md
// 1.11-1.13).
type Sectioner interface {
	ReportSections(in *Input) Sections
}

// Charter is a suite with charts of its own in the HTML report, drawn after
// the generic ones.
type Charter interface {
	ReportCharts(in *Input) []Chart
}

var (
	mu           sync.RWMutex
	contributors = map[string]Sectioner{}
)

// Register makes c the sections of the suite named suite (and its charts
// when c is a Charter too), from the suite package's init. Registering a
// suite twice is a programming error.
func Register(suite string, c Sectioner) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := contributors[suite]; dup {
		panic(fmt.Sprintf("section: suite %q registered twice", suite))
	}
	contributors[suite] = c
}

// Of returns the sections registered for suite, if its package is linked.
func Of(suite string) (Sectioner, bool) {
	mu.RLock()
	defer mu.RUnlock()
	c, ok := contributors[suite]
	return c, ok
}
