// Package connect is the connection-cost suite: each operation opens a new
// connection to the engine, runs one query and closes the connection, so
// its latency is what a client without a pool pays per request (the
// server's fork or thread start, authentication, the first query, the
// teardown). Its headline is its own metric, connect_ms, the mean time of
// one open-query-close in milliseconds, where lower is better.
//
// It is also the worked example of docs/architecture.md: a suite is this one
// package plus one import line in internal/all/all.go.
package connect

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// ConnectMS is the suite's headline: the mean milliseconds of one open,
// query and close, from the step's latency histogram. Lower is better; per
// second, the charts count connections.
var ConnectMS = metric.Register(metric.Metric{
	Name: "connect_ms", Unit: "ms", Legend: "mean milliseconds to open a connection, run one query and close it",
	Direction: analysis.LowerIsBetter, Quantity: "latency", Symbol: "ms",
	Value:  func(c metric.Counts) float64 { return float64(c.Mean) / 1e6 },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) }, SeriesUnit: "connections",
})

// Group is the report group of the suite's one test.
const Group = "connections"

// Suite is the connection-cost suite.
type Suite struct{}

// Name returns "connect".
func (Suite) Name() string { return "connect" }

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "connection cost: open a new connection, run one query, close it; mean ms per connection (connect_ms)"
}

// Tests lists the one test.
func (Suite) Tests() []workload.Test {
	return []workload.Test{{Name: "connect", Family: "connect", Group: Group,
		Summary: "open a connection, run workload.connect.query, close; each thread in a loop"}}
}

// Needs says the suite runs on SQL engines only.
func (Suite) Needs() engine.Kind { return engine.KindSQL }

// Options are the suite's own options, read from [workload.connect].
type Options struct {
	// Query is the one statement each connection runs before it closes.
	Query string `toml:"query"`
}

// NewOptions returns the defaults: SELECT 1.
func (Suite) NewOptions() workload.Options { return &Options{Query: "SELECT 1"} }

// Preset sizes nothing: the presets' durations are shared fields.
func (o *Options) Preset(string) bool { return false }

// Flags binds --connect-query.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Query, "connect-query", o.Query, "connect suite: the statement each new connection runs")
}

func opts(p workload.Params) *Options {
	return workload.OptionsOf(p, func() *Options { return &Options{Query: "SELECT 1"} })
}

// Check validates the query and the test selection.
func (Suite) Check(p workload.Params) error {
	if strings.TrimSpace(opts(p).Query) == "" {
		return workload.Bad("connect.query", opts(p).Query, "empty; want one statement, e.g. \"SELECT 1\"")
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	return fmt.Sprintf("connection cost: open, %q, close; threads %v, %s measured after a %s warm-up",
		opts(p).Query, p.Threads, p.ReadTime, p.Warmup)
}

// Plan returns the one measured step, run for read_time at each thread
// count; there is no data to load.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	query := opts(p).Query
	return []workload.Step{{
		Name: "connect", Family: "connect", Group: Group, Metric: ConnectMS,
		Duration: p.ReadTime, Warmup: p.Warmup,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			sqldb, err := workload.SQLOf(db, "connect")
			if err != nil {
				return nil, err
			}
			return &worker{db: sqldb, query: query}, nil
		},
	}}, nil
}

// worker opens, queries and closes one connection per operation.
type worker struct {
	db    engine.SQL
	query string
}

// Op opens a connection, runs the query and closes the connection; a
// failure at any of the three is the operation's error.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) {
	c, err := w.db.Connect(ctx)
	if err != nil {
		return workload.Tally{}, fmt.Errorf("connect: %w", err)
	}
	rows, err := c.Query(ctx, w.query)
	if err != nil {
		c.Close()
		return workload.Tally{Statements: 1}, fmt.Errorf("connect: %s: %w", w.query, err)
	}
	if err := c.Close(); err != nil {
		return workload.Tally{Statements: 1, Rows: rows}, fmt.Errorf("connect: close: %w", err)
	}
	return workload.Tally{Statements: 1, Rows: rows}, nil
}

// Close has nothing to release: every operation closed its connection.
func (w *worker) Close() error { return nil }
