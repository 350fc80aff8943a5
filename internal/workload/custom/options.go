package custom

import (
	"github.com/spf13/pflag"

	"benchlab/internal/workload"
)

// Options define a workload of the user's own SQL (spec section
// [workload.custom]): statements that set the schema up, an optional load of
// generated rows, and measured tests. Statements use '?' placeholders,
// rewritten for each engine; each placeholder takes its value from the
// argument at the same position (uniform(lo, hi), zipf(n), seq(start),
// string(n), worker, an integer, or a 'quoted' string).
type Options struct {
	// Setup runs once on every fresh database, in order, before the load.
	Setup []string `toml:"setup,omitempty"`
	// SetupFor replaces Setup for the engines of one dialect ("sqlite",
	// "postgres", "mysql"), whose DDL often differs.
	SetupFor map[string][]string `toml:"setup_for,omitempty"`
	// Tables are the tables the postload and postwrite cleanups maintain
	// (vacuum, analyze, flush).
	Tables []string `toml:"tables,omitempty"`
	// Postload settles the fresh load before the first test, as the
	// sysbench suite does: the engine's cleanup (VACUUM ANALYZE of Tables
	// and CHECKPOINT on PostgreSQL; ANALYZE, the purge wait and a flush of
	// dirty pages on InnoDB; ANALYZE and a WAL checkpoint on SQLite), so the
	// first test does not pay for hint bits, autovacuum or the load's
	// checkpoint at a time that varies between repeats. Default true;
	// false measures the state the load leaves.
	Postload bool `toml:"postload"`
	// Load inserts generated rows after the setup; none when Rows is 0.
	Load Load `toml:"load,omitempty"`
	// Tests are the measured tests, run in order.
	Tests []Test `toml:"test,omitempty"`
}

// Load is the custom suite's load: Rows executions of SQL with
// generated Args, Batch rows per transaction.
type Load struct {
	SQL   string   `toml:"sql,omitempty"`
	Rows  int64    `toml:"rows,omitempty"`
	Args  []string `toml:"args,omitempty"`
	Batch int      `toml:"batch,omitempty"`
}

// Test is one measured custom test: one operation runs Statements in
// order, inside one transaction when Transaction is set.
type Test struct {
	Name       string   `toml:"name"`
	Statements []string `toml:"statements"`
	// StatementsFor replaces Statements for one dialect's engines; they
	// take the same Args, so they must have as many placeholders.
	StatementsFor map[string][]string `toml:"statements_for,omitempty"`
	Args          []string            `toml:"args,omitempty"`
	// Mix makes this test a mix of other tests instead of statements of its
	// own: each operation runs one of the named tests, drawn with the given
	// relative weights, on the worker's one connection.
	Mix map[string]float64 `toml:"mix,omitempty"`
	// Transaction wraps each operation in BEGIN ... COMMIT (counted as
	// statements, as sysbench counts them).
	Transaction bool `toml:"transaction,omitempty"`
	// Write marks a test that changes data: it runs for write_time and is
	// followed by the postwrite cleanup before the next read test.
	Write bool `toml:"write,omitempty"`
	// Long marks statements that may run for long (scans): they stop
	// promptly at the end of the step, at some cost per call.
	Long bool `toml:"long,omitempty"`
	// Threads replaces the experiment's thread counts for this test, and
	// Time its duration (read_time or write_time); empty: those.
	Threads []int  `toml:"threads,omitempty"`
	Time    string `toml:"time,omitempty"`
}

// NewOptions returns an empty definition that settles its load; the spec
// must give the tests.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options { return &Options{Postload: true} }

// opts returns p's custom definition, or an empty one.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing: the user's SQL sets its own sizes.
func (o *Options) Preset(string) bool { return false }

// Flags binds nothing: SQL statements belong in the spec file.
func (o *Options) Flags(*pflag.FlagSet) {}

// StoredDefaults reads a spec stored before postload existed as what its
// runs did: the first test read the load's fresh state.
func (o *Options) StoredDefaults(has func(string) bool) []string {
	if !has("postload") {
		o.Postload = false
	}
	return nil
}
