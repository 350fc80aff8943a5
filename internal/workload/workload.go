// Package workload defines benchmark suites as ordered steps and keeps a
// registry of suites by name. A workload owns only its statements and data;
// the runner owns the loop, the clock, the thread counts and the error policy.
package workload

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
)

// Params are the experiment settings a suite plans its steps from: the
// fields every suite shares, and the suite's own Options.
type Params struct {
	// Tests selects tests by name or family; empty means the whole suite.
	Tests     []string
	Tables    int
	TableSize int64
	// ReadTime and WriteTime are the measured durations of read and write tests.
	ReadTime, WriteTime time.Duration
	// Warmup precedes every measured test and is excluded from its results.
	Warmup time.Duration
	// WarmTime is the duration of the scan warm-ups (scan.warmpre and
	// scan.warm, docs/method.md 2.5: 60 s); the other warm-ups run ReadTime.
	WarmTime time.Duration
	// PostwriteWait is the target duration of the cleanup after writes; a
	// negative value means the docs/method.md 1.9 formula (60 s + 1 s per million
	// rows, capped at 1200 s).
	PostwriteWait time.Duration
	// Threads are the client thread counts each test runs at.
	Threads []int
	// Seed makes the data and the random choices reproducible.
	Seed uint64
	// Unprepared sends statements as text instead of preparing them
	// (sysbench's --db-ps-mode=disable).
	Unprepared bool
	// Options are the suite's own options (Configurable), of the suite's
	// type; nil for suites without options.
	Options Options
	// Getenv reads the environment of the command that runs the spec
	// (cli.Env.Getenv): the PATH a suite that runs programs looks them up
	// in. Nil is an empty environment.
	Getenv func(string) string
}

// PostwriteTarget is the cleanup's target duration of docs/method.md 1.9 and 2.5:
// 60 s plus 1 s per million rows over all tables, capped at 1200 s.
func PostwriteTarget(totalRows int64) time.Duration {
	d := 60*time.Second + time.Duration(totalRows/1_000_000)*time.Second
	return min(d, 1200*time.Second)
}

// SQLOf returns db's SQL view, or an error naming who needed it (a suite, a
// step) when the engine does not speak SQL.
func SQLOf(db engine.DB, who string) (engine.SQL, error) {
	s, ok := db.(engine.SQL)
	if !ok {
		return nil, fmt.Errorf("%s: the engine does not speak SQL", who)
	}
	return s, nil
}

// ConnectSQL opens a new connection to db for who (a suite, a step), with
// errors that name who: the engine does not speak SQL, or the connection
// failed. It also returns the SQL view, for the dialect.
func ConnectSQL(ctx context.Context, db engine.DB, who string) (engine.SQL, engine.Conn, error) {
	s, err := SQLOf(db, who)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Connect(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: connect: %w", who, err)
	}
	return s, c, nil
}

// CleanupStep is the postwrite cleanup of docs/method.md 1.9 and 2.5 as an
// action: the engine's Maintain on tables (vacuum and checkpoint, flush,
// checkpoint), then a wait until target has passed since it began. A part
// the engine left out for want of rights is a warning in the log and a
// note of the run (Tally.Notes).
func CleanupStep(name string, tables []string, target time.Duration) Step {
	return Step{
		Name: name, Warm: true, Estimate: target,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (Tally, error) {
			start := time.Now()
			sqldb, err := SQLOf(db, name)
			if err != nil {
				return Tally{}, err
			}
			c, err := maintain(ctx, sqldb, tables)
			if err != nil {
				return Tally{}, fmt.Errorf("%s: %w", name, err)
			}
			t := Tally{Facts: c.Facts}
			for _, d := range c.Done {
				note := name + ": " + d
				fmt.Fprintf(log, "%s\n", note)
				t.Notes = append(t.Notes, note)
			}
			for _, s := range c.Skipped {
				note := name + ": " + s
				fmt.Fprintf(log, "warning: %s\n", note)
				t.Notes = append(t.Notes, note)
			}
			if rest := target - time.Since(start); rest > 0 {
				fmt.Fprintf(log, "%s: done in %s, waiting %s more (target %s)\n", name,
					time.Since(start).Round(time.Millisecond), rest.Round(time.Second), target)
				select {
				case <-time.After(rest):
				case <-ctx.Done():
					return t, ctx.Err()
				}
			}
			return t, nil
		},
	}
}

// maintain runs db's cleanup, with its account of what it did where the
// engine gives one (engine.CleanupReporter).
func maintain(ctx context.Context, db engine.SQL, tables []string) (engine.Cleanup, error) {
	if r, ok := db.(engine.CleanupReporter); ok {
		return r.MaintainReport(ctx, tables)
	}
	skipped, err := db.Maintain(ctx, tables)
	return engine.Cleanup{Skipped: skipped}, err
}

// CheckTableEngines confirms, where db's target asks for a storage engine
// (engine.TableEngineChecker), that tables have it; who names the step for
// the error. A suite calls it once its tables exist, before it measures.
func CheckTableEngines(ctx context.Context, db engine.DB, who string, tables []string) error {
	c, ok := db.(engine.TableEngineChecker)
	if !ok {
		return nil
	}
	if err := c.CheckTableEngines(ctx, tables); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	return nil
}

// Tally is what one operation did, for the counters: statements executed
// (sysbench's "queries", BEGIN and COMMIT included) and rows returned or changed.
type Tally struct {
	Statements int
	Rows       int64
	// Facts are named numbers an action measured (LSM size, write
	// amplification, ...), with units in the names; stored with its result.
	Facts map[string]float64
	// Kind is which of a Kinded worker's kinds of operation this was (an
	// index into Kinds()).
	Kind int
	// Retries is how many times the operation was run again after a
	// conflict (serialization failure, deadlock) before it succeeded or
	// gave up, as pgbench's --max-tries retries; the runner counts them and
	// the operations that needed any. Statements counts every try's.
	Retries int
	// Notes are what an action wants the run to say about how it differed
	// from what it should have done (a cleanup step it had to leave out);
	// the runner keeps them in the run's manifest and the report shows them.
	Notes []string
}

// Facter is a Worker that found facts about its session worth keeping with
// the step's result (the isolation level, the protocol); the runner takes
// them from each role's first worker, so they must be the same for all.
type Facter interface {
	Facts() map[string]float64
}

// Describer is a Suite that says in one line what a run of it with p did,
// for the report's header ("workload: " and ", repeats N" are added).
// Suites without it get a line about tables, rows, threads and durations.
type Describer interface {
	Describe(p Params) string
}

// TestsLabel names the selected tests for a header: "all tests" or the list.
func TestsLabel(p Params) string {
	if len(p.Tests) == 0 {
		return "all tests"
	}
	return strings.Join(p.Tests, ", ")
}

// Kinded is a Worker whose operations come in kinds (TPC-C's five
// transactions, a custom mix's tests). The runner counts each kind's
// operations and errors and keeps its latency, and stores them as facts of
// the step's result: <kind>_ops, <kind>_errors, <kind>_p50_ms, <kind>_p99_ms
// and <kind>_max_ms.
type Kinded interface {
	Kinds() []string
}

// Waiter is a Worker whose next operation may have to wait for another
// role (the Insert Benchmark's deleter waits for the inserter, which may not
// run more than a few statements ahead of it). The runner calls Wait before
// timing each operation, so the wait is not counted as the operation's
// service time; a rate-limited operation's latency still counts from its
// intended start. Wait returns false when the worker should stop (ctx done).
type Waiter interface {
	Wait(ctx context.Context) bool
}

// Batcher is a Worker that can also run several operations in one call and
// time each itself, for engines whose every call crosses into C (see
// engine.BatchLookuper). The runner uses it only for steps that are neither
// rate-limited nor bounded by a count of operations, and for workers that
// are not Waiters.
type Batcher interface {
	// OpBatch runs up to len(lat) operations, stores the duration of each in
	// lat (nanoseconds, each from the end of the one before) and returns how
	// many ran, their tally, and the error that ended the last one.
	OpBatch(ctx context.Context, lat []int64) (n int, t Tally, err error)
}

// Worker runs one operation after another on its own connection.
type Worker interface {
	// Op runs one operation (a sysbench "event"). An error still reports the
	// statements that ran before it.
	Op(ctx context.Context) (Tally, error)
	Close() error
}

// Step is one entry of a suite's run order: either an action (load, cleanup)
// or a measured test run at each thread count.
type Step struct {
	// Name is the stable test name, e.g. "random-points_range=10" or "scan.warm".
	Name string
	// Family is the test without its parameters ("random-points").
	Family string
	// Group is the report group (docs/method.md 2.7).
	Group string
	// Warm marks warm-up and pre tests, run but excluded from summaries.
	Warm bool
	// Write marks tests that change data.
	Write bool
	// Duration of the measured part; Warmup is the part before it.
	Duration, Warmup time.Duration
	// Threads overrides the experiment's thread counts when set.
	Threads []int
	// Metric is the headline number the step reports; the zero value means
	// metric.QPS. A suite declares its own metrics (metric.Register).
	Metric metric.Metric
	// RowsPerOp is the rows one operation scans, used for KRPS.
	RowsPerOp int64
	// Action, when set, makes this a non-measured step (load, cleanup). It
	// writes progress to log and returns what it did (rows loaded), which the
	// runner stores with the step's elapsed time.
	Action func(ctx context.Context, db engine.DB, log io.Writer) (Tally, error)
	// NewWorker creates worker id of n for a measured step.
	NewWorker func(ctx context.Context, db engine.DB, id, n int, seed uint64) (Worker, error)
	// Roles, when set instead of NewWorker, run several kinds of workers at
	// once (Insert Benchmark: query, insert and delete; db_bench's
	// *whilewriting: readers and one rate-limited writer). The first role is
	// the step's headline; each role gets its own result.
	Roles []Role
	// Bench, when set, gives the step's form for engines that run whole
	// steps in their own process (engine.StepRunner, db_bench) at a thread
	// count; such engines get the step instead of the runner's workers.
	Bench func(threads int) (engine.KVStep, bool)
	// SizeAfter records the data dir's size (du) after the step with its
	// headline result: the Insert Benchmark's dbdirGB per step (docs/method.md
	// 1.11).
	SizeAfter bool
	// MaxDuration bounds a step that ends by operation count (Role.Ops), so
	// one that cannot sustain its rate still finishes; 0 means no bound.
	MaxDuration time.Duration
	// Drain is how long operations in flight when the step ends may run on
	// before they are cancelled; 0 cancels them at once. Either way an
	// operation that ends after the step is not counted (TPC-C lets its
	// transactions finish rather than cancel their statements).
	Drain time.Duration
	// External, when set instead of NewWorker or Roles, makes the step an
	// outside program's (the command suite): the runner runs it once per
	// thread count and measures the server and the program's process tree
	// while it runs, as it measures workers. With Load it runs once, as an
	// action: unmeasured, and its failure ends the cell.
	External External
	// Load marks an External step that prepares data rather than measures.
	Load bool
	// Estimate is how long an action is expected to take, when known in
	// advance (a cleanup's target wait), for the plan printed before a
	// run; 0 means not known (a load, whose time depends on the engine).
	Estimate time.Duration
}

// Role is one kind of worker in a step.
type Role struct {
	// Name labels the role's result ("query", "insert", "delete", "writer").
	Name string
	// Threads is the number of workers; 0 means the step's thread count.
	Threads int
	// Rate limits the role to this many operations per second in total,
	// spread evenly over its workers; 0 runs closed-loop, as fast as possible.
	// Latency of a rate-limited operation counts from its intended start, so
	// a stalled engine cannot hide its queueing (no coordinated omission);
	// the plain service time is kept too.
	Rate float64
	// Pacing is how a rate-limited role spaces its operations; the zero
	// value spaces them evenly on a fixed schedule.
	Pacing Pacing
	// Queue is, for PaceWindow, how many operations the simulated statement
	// maker may make ahead of the worker (the original client's queue of 8);
	// 0 means 1.
	Queue int
	// Ops ends the step once this role has done this many operations, split
	// evenly over its workers (worker i of n does Ops/n, plus one for the
	// first Ops%n), as each Insert Benchmark client does its own share; 0
	// leaves the end to the step's Duration.
	Ops int64
	// TargetRate is the rate the role should sustain in its own metric
	// (rows/s for an inserter whose operations insert many rows), stored
	// with its result; 0 means Rate.
	TargetRate float64
	// Metric is the role's headline when it differs from the step's (rows
	// per second for the inserter and deleter under a query headline); the
	// zero value means the step's metric.
	Metric metric.Metric
	// NewWorker creates worker id of n of this role. The runner creates
	// the workers of all roles, role by role in order, before any starts.
	NewWorker func(ctx context.Context, db engine.DB, id, n int, seed uint64) (Worker, error)
}

// Pacing is how a rate-limited role spaces its operations.
type Pacing int

const (
	// PaceEven gives operation k the intended start k/rate after the step's
	// start: a worker that falls behind runs back to back until it has
	// caught up with the schedule.
	PaceEven Pacing = iota
	// PaceBursty releases each second's quota back to back at the start of
	// the second, on a fixed schedule that is caught up as PaceEven's.
	PaceBursty
	// PaceWindow is the original Insert Benchmark client's limiter
	// (docs/method.md 1.5): a statement maker, at most Queue operations ahead of
	// the worker, checks its clock after every quota of a second's
	// operations, sleeps out the rest of the second when the quota came
	// early, and starts the next window from the check. Time lost to a
	// stall longer than the queue is never made up, so an engine that
	// stalls delivers less than the rate.
	PaceWindow
)

// Pacings are the spec's names of the Insert Benchmark's pacings.
var Pacings = map[string]Pacing{"iibench": PaceWindow, "even": PaceEven, "bursty": PaceBursty}

// Test describes one test of a suite for `benchlab list`.
type Test struct {
	Name, Family, Group, Summary string
}

// Suite is a registered workload.
type Suite interface {
	Name() string
	Summary() string
	// Tests lists every test the suite can run, in run order.
	Tests() []Test
	// Check validates params for this suite, naming the bad field.
	Check(p Params) error
	// Plan returns the ordered steps for one pass over a fresh database.
	Plan(p Params) ([]Step, error)
}

// Needer is implemented by suites that run only on engines of one kind
// (engine.KindSQL or engine.KindKV).
type Needer interface {
	Needs() engine.Kind
}

// MultiNeeder is implemented by suites that run on engines of several
// kinds (TPC-C on SQL engines and on document engines), instead of Needer.
type MultiNeeder interface {
	NeedsAny() []engine.Kind
}

// Preparer is a Suite whose workers prepare their statements on the
// server unless Params.Unprepared (workload.prepared = false), so that
// the spec can refuse targets that would lose them
// (engine.PreparedStatementLoser).
type Preparer interface {
	PreparesStatements()
}

// TargetChecker is a Suite whose tests need something of each target that
// the engine alone does not say (the cluster suite's scenarios need a
// cluster of enough nodes): the spec calls CheckTarget for every target
// after Check, before anything runs, and reports an error as the target's
// ("target[0]: settings.nodes: ...").
type TargetChecker interface {
	CheckTarget(p Params, t engine.Target) error
}

// OutsideRunner is a suite whose measured steps run in programs of their
// own (Step.External): benchlab's workers do not run them, so the spec
// refuses workload.rate and workload.events for it rather than ignore them.
type OutsideRunner interface {
	// RunsOutside names what runs the steps ("outside programs").
	RunsOutside() string
}

var (
	mu     sync.RWMutex
	suites = map[string]Suite{}
)

// Register makes a suite available by name; a duplicate is a programming error.
func Register(s Suite) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := suites[s.Name()]; dup {
		panic("workload: duplicate registration of " + s.Name())
	}
	suites[s.Name()] = s
}

// Lookup returns the suite registered under name.
func Lookup(name string) (Suite, bool) {
	mu.RLock()
	defer mu.RUnlock()
	s, ok := suites[name]
	return s, ok
}

// Names lists the registered suites in order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
