// Package metric declares the headline number a measured step reports: a
// typed value with a name (stored with every result), a unit, a direction
// and how it is computed from the step's counts. Suites declare the metrics
// they produce (sysbench's krps, the Insert Benchmark's ips, TPC-C's tpmc)
// and register them from init; QPS is the default of every SQL suite. The
// producers stamp each stored result with its metric's value, unit and
// direction (Stamp), and readers look metrics up by the stored name; no one
// switches on it. (Package meter measures the host; this one names
// results.)
package metric

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"benchlab/internal/analysis"
)

// Counts are what a step, or one second of it, counted: the inputs of every
// metric.
type Counts struct {
	Seconds                  float64
	Events, Statements, Rows int64
	// RowsPerOp is the rows one operation scans (docs/method.md 2.6).
	RowsPerOp int64
	// Mean is the mean latency of one operation.
	Mean time.Duration
	// Facts are the numbers a step's outside program reported (the
	// result's facts), which a metric of such a program may read its value
	// from; nil for a second of a series.
	Facts map[string]float64
}

// Metric is the headline number of a step.
type Metric struct {
	// Name is stored with every result ("qps", "tpmc"); it must never change.
	Name string
	// Unit labels the number in tables and charts ("queries/s").
	Unit string
	// Legend says what the number is in a phrase, for table legends
	// ("thousand rows scanned per second").
	Legend string
	// Direction says whether more is better (throughput) or worse (a
	// latency).
	Direction analysis.Direction
	// Quantity is what the number measures, in the title of the report's
	// table of absolute values ("Absolute latency"); "" is "throughput".
	Quantity string
	// Symbol names the number in formulas, such as the relative table's
	// title ("QPS(target) / QPS(base)"); "" is the name in capitals.
	Symbol string
	// Value computes the metric of a whole step from its counts.
	Value func(Counts) float64
	// Series computes one second's value from that second's counts, for
	// per-second charts; SeriesUnit says what it counts.
	Series     func(Counts) float64
	SeriesUnit string
	// PerRow marks metrics that count rows (live lines show rows/s).
	PerRow bool
	// NoSeries marks metrics that no per-second series measures (krps,
	// derived from the latency of scans that may each last seconds): noise
	// estimates from the series do not apply to them.
	NoSeries bool
}

// PerSecond is n over secs, 0 when secs is not positive.
func PerSecond(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// statementsPerSecond is the series of metrics without one of their own.
func statementsPerSecond(c Counts) float64 { return PerSecond(c.Statements, c.Seconds) }

// QPS is statements per second, as sysbench counts them (BEGIN and COMMIT
// included): the default of every SQL suite.
var QPS = Register(Metric{
	Name: "qps", Unit: "queries/s", Legend: "queries per second", Direction: analysis.HigherIsBetter,
	Value: statementsPerSecond, Series: statementsPerSecond, SeriesUnit: "statements",
})

var (
	mu      sync.RWMutex
	metrics = map[string]Metric{}
)

// Register makes m known by its name and returns it, so a suite can declare
// a metric as a package variable. A duplicate or incomplete metric is a
// programming error.
func Register(m Metric) Metric {
	if m.Name == "" || m.Value == nil {
		panic("metric: registration without a name or a value function")
	}
	if m.Series == nil {
		m.Series, m.SeriesUnit = statementsPerSecond, "statements"
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := metrics[m.Name]; dup {
		panic(fmt.Sprintf("metric: duplicate registration of %q", m.Name))
	}
	metrics[m.Name] = m
	return m
}

// QuantityOf is what m measures: its Quantity, "throughput" by default.
func (m Metric) QuantityOf() string {
	if m.Quantity == "" {
		return "throughput"
	}
	return m.Quantity
}

// SymbolOf is m's short name in formulas: its Symbol, or its name in
// capitals ("QPS").
func (m Metric) SymbolOf() string {
	if m.Symbol == "" {
		return strings.ToUpper(m.Name)
	}
	return m.Symbol
}

// Lookup returns the metric registered under name.
func Lookup(name string) (Metric, bool) {
	mu.RLock()
	defer mu.RUnlock()
	m, ok := metrics[name]
	return m, ok
}

// Of returns the metric registered under name, or QPS for a name no linked
// suite declares (results stored by a build with more suites).
func Of(name string) Metric {
	if m, ok := Lookup(name); ok {
		return m
	}
	return QPS
}

// Names lists the registered metrics in order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(metrics))
	for n := range metrics {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
