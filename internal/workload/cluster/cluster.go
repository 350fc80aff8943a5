// Package cluster is the cluster suite: what a database of several servers
// does that one server cannot, measured on a cluster benchlab starts. It
// talks to the cluster through engine.Cluster (and engine.Promoter,
// engine.Lagger), so it runs on every cluster engine: Galera, where every
// node takes writes, and a primary with replicas (postgres-replicas), whose
// failover is a promotion. The scenarios, each with a headline of its own:
//
//   - stale-read: one writer on the primary (node 1 on Galera) sets a
//     counter to 1, 2, 3, ...; readers on the other nodes read it at once.
//     A read that returns less than the last value acknowledged to the
//     writer before the read began is stale. Headline stale_share; the
//     facts give how long the oldest write a stale read missed had been
//     acknowledged (stale_lag_*_ms).
//   - replica-lag: writers on the primary while a sampler reads every
//     replica's lag from the engine's own views five times a second
//     (bytes behind and seconds on PostgreSQL, queued write-sets on
//     Galera); headline the writers' cluster_wps, the lag percentiles as
//     facts.
//   - write-scaling (multi-primary only): transactions of two row updates
//     with the writers spread over 1, 2, ... nodes; headline cluster_wps;
//     conflicts are retried and counted.
//   - failover: writers keep writing while benchlab kills a node with
//     SIGKILL at kill_at (on a primary with replicas, the primary, and then
//     promotes a replica); a probe writer's retried operations give the
//     headline downtime_s. The probe inserts sequence numbers and, once
//     writes succeed again, counts the ones acknowledged before the kill
//     that the cluster lost (failover_lost_acked_writes).
//
// Scenario order is stale-read, replica-lag, write-scaling, failover: the
// kill is last because the node stays dead for the rest of the cell.
package cluster

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Cluster is what the scenarios need of a cluster engine's DB: its nodes,
// a connection to each, and a way to kill one (engine.Cluster).
type Cluster = engine.Cluster

// StaleShare is stale-read's headline: the share of the readers' reads
// that returned an older value than the last write acknowledged before the
// read began. A reader's operation counts one row when its read was stale.
var StaleShare = metric.Register(metric.Metric{
	Name: "stale_share", Unit: "share of reads", Legend: "share of reads on other nodes older than the last acknowledged write",
	Direction: analysis.LowerIsBetter, Quantity: "staleness", Symbol: "stale",
	Value: func(c metric.Counts) float64 {
		if c.Events == 0 {
			return 0
		}
		return float64(c.Rows) / float64(c.Events)
	},
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Rows, c.Seconds) }, SeriesUnit: "stale reads",
})

// WPS is writes per second, the headline of write-scaling and of the
// writers of the other scenarios.
var WPS = metric.Register(metric.Metric{
	Name: "cluster_wps", Unit: "writes/s", Legend: "committed writes (transactions) per second over the cluster",
	Direction: analysis.HigherIsBetter, Symbol: "WPS",
	Value:  func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) }, SeriesUnit: "writes",
})

// DowntimeS is failover's headline: the seconds the probe writer's
// operations spent failing and retrying until they succeeded (each such
// operation counts its milliseconds as rows). Lower is better.
var DowntimeS = metric.Register(metric.Metric{
	Name: "downtime_s", Unit: "s", Legend: "seconds a writer's operations spent failing and retrying after a node was killed",
	Direction: analysis.LowerIsBetter, Quantity: "downtime", Symbol: "downtime",
	Value:  func(c metric.Counts) float64 { return float64(c.Rows) / 1000 },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) }, SeriesUnit: "probe writes",
	NoSeries: true,
})

// Group is the report group of the suite's tests.
const Group = "cluster"

// The suite's tests.
const (
	StaleRead    = "stale-read"
	ReplicaLag   = "replica-lag"
	WriteScaling = "write-scaling"
	Failover     = "failover"
	Switchover   = "switchover"
)

// Suite is the cluster suite.
type Suite struct{}

// Name returns "cluster".
func (Suite) Name() string { return "cluster" }

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "cluster scenarios (galera, postgres-replicas, mariadb-replicas): stale reads, replica lag, write scaling, switchover, downtime and lost writes when a node is killed"
}

// Tests lists the scenarios in run order.
func (Suite) Tests() []workload.Test {
	return []workload.Test{
		{Name: StaleRead, Family: StaleRead, Group: Group, Summary: "a writer on node 1, readers on the others; share of stale reads (stale_share)"},
		{Name: ReplicaLag, Family: ReplicaLag, Group: Group, Summary: "writers on the primary, every replica's lag sampled 5 times a second; lag percentiles"},
		{Name: WriteScaling, Family: WriteScaling, Group: Group, Summary: "2-row update transactions spread over 1..k nodes (cluster.spread); commits/s and conflicts; multi-primary only"},
		{Name: Failover, Family: Failover, Group: Group, Summary: "writers while node cluster.kill_node is killed at cluster.kill_at (a replica promoted); downtime_s, lost acknowledged writes"},
		{Name: Switchover, Family: Switchover, Group: Group, Summary: "primary with replicas, when selected: planned switchover at cluster.kill_at and back; downtime_s, lost writes"},
	}
}

// Needs says the suite runs on SQL engines only.
func (Suite) Needs() engine.Kind { return engine.KindSQL }

// Options are the suite's own options, read from [workload.cluster].
type Options struct {
	// Rows is the size of the table write-scaling and failover update.
	Rows int `toml:"rows"`
	// Spread lists the node counts write-scaling spreads its writers over.
	Spread []int `toml:"spread"`
	// KillNode is the node failover kills (from 1).
	KillNode int `toml:"kill_node"`
	// KillAt is when failover kills it, from the start of the step (its
	// warm-up included); 0 means a third into the measured part.
	KillAt workload.Duration `toml:"kill_at"`
}

func defaults() *Options { return &Options{Rows: 1000, Spread: []int{1, 2, 3}, KillNode: 1} }

// NewOptions returns the defaults: 1000 rows, spread 1,2,3, node 1 killed
// a third into failover's measured part.
func (Suite) NewOptions() workload.Options { return defaults() }

// Preset sizes nothing: the durations are shared fields.
func (o *Options) Preset(string) bool { return false }

// Flags binds --cluster-rows, --cluster-spread, --cluster-kill-node and
// --cluster-kill-at.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Rows, "cluster-rows", o.Rows, "cluster suite: rows of the table write-scaling and failover update")
	fs.IntSliceVar(&o.Spread, "cluster-spread", o.Spread, "cluster suite: node counts write-scaling spreads its writers over, e.g. 1,2,3")
	fs.IntVar(&o.KillNode, "cluster-kill-node", o.KillNode, "cluster suite: the node failover kills (from 1)")
	fs.Var(&o.KillAt, "cluster-kill-at", "cluster suite: when failover kills the node, from the step's start (0: a third into the measured part)")
}

func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Check validates the options and the test selection.
func (Suite) Check(p workload.Params) error {
	o := opts(p)
	if o.Rows < 1 || o.Rows > 10_000_000 {
		return workload.Bad("cluster.rows", o.Rows, "%d rows; want 1 to 10000000", o.Rows)
	}
	if len(o.Spread) == 0 {
		return workload.Bad("cluster.spread", o.Spread, "empty; want node counts, e.g. [1, 2, 3]")
	}
	for _, k := range o.Spread {
		if k < 1 || k > maxNodes {
			return workload.Bad("cluster.spread", o.Spread, "%d nodes; want 1 to %d", k, maxNodes)
		}
	}
	if o.KillNode < 1 || o.KillNode > maxNodes {
		return workload.Bad("cluster.kill_node", o.KillNode, "node %d; want 1 to %d", o.KillNode, maxNodes)
	}
	if o.KillAt.Duration < 0 || (o.KillAt.Duration > 0 && o.KillAt.Duration >= p.Warmup+p.WriteTime) {
		return workload.Bad("cluster.kill_at", o.KillAt.String(), "%s is not within failover's step (warm-up %s + write_time %s); want less",
			o.KillAt, p.Warmup, p.WriteTime)
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// selected reports whether test runs under p's selection; switchover
// runs only when named (Galera, in the default selection, has none).
func selected(p workload.Params, test string) bool {
	sel, _ := workload.SelectTests(p.Tests, Suite{}.Tests())
	if test == Switchover {
		return sel[test]
	}
	return sel == nil || sel[test]
}

// maxNodes bounds node numbers before the target is known; CheckTarget
// holds them to the target's own count.
const maxNodes = 16

// CheckTarget refuses, before anything runs, a target that is not a cluster
// benchlab starts, or one whose shape does not fit the selected scenarios:
// stale-read needs 2 nodes; failover 3 on a multi-primary cluster (killing
// one of 2 leaves the other without a quorum) and 2 on a primary with
// replicas (one to promote); write-scaling a multi-primary cluster of as
// many nodes as cluster.spread names.
func (Suite) CheckTarget(p workload.Params, t engine.Target) error {
	shape, err := engine.ClusterShapeOf(t)
	if err != nil {
		return err
	}
	n, o := shape.Nodes, opts(p)
	need := func(test string, k int, why string) error {
		if selected(p, test) && n < k {
			return fmt.Errorf("%s: %d node(s); the %s test needs %d or more (%s)", shape.NodesField, n, test, k, why)
		}
		return nil
	}
	if err := need(StaleRead, 2, "a writer's node and a reader's"); err != nil {
		return err
	}
	if err := need(ReplicaLag, 2, "a primary and a replica"); err != nil {
		return err
	}
	if selected(p, Switchover) && shape.MultiPrimary {
		return fmt.Errorf("tests: switchover moves the primary of a cluster with one; every node of %s takes writes "+
			"(replication %s): its failover test kills a node", t.Engine, shape.Replication)
	}
	if shape.MultiPrimary {
		if err := need(Failover, 3, "killing one of 2 nodes leaves the other without a quorum"); err != nil {
			return err
		}
		if err := need(WriteScaling, slices.Max(o.Spread), "cluster.spread names that many"); err != nil {
			return err
		}
	} else {
		if err := need(Failover, 2, "a replica to promote"); err != nil {
			return err
		}
		if err := need(Switchover, 2, "a replica to switch to"); err != nil {
			return err
		}
		if selected(p, Failover) && o.KillNode != 1 {
			return workload.Bad("cluster.kill_node", o.KillNode, "node %d; on a primary with replicas failover kills the "+
				"current primary: remove kill_node", o.KillNode)
		}
		if selected(p, WriteScaling) {
			return fmt.Errorf("tests: write-scaling spreads writers over nodes that all take writes; %s has one primary "+
				"(replication %s): select the other tests, e.g. tests = [%q, %q, %q]", t.Engine, shape.Replication,
				StaleRead, ReplicaLag, Failover)
		}
	}
	if selected(p, Failover) && o.KillNode > n {
		return fmt.Errorf("%s: %d node(s); cluster.kill_node is %d", shape.NodesField, n, o.KillNode)
	}
	return nil
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	o := opts(p)
	return fmt.Sprintf("cluster scenarios (%s): %d rows, spread %v, failover kills node %d; threads %v, %s measured after a %s warm-up",
		workload.TestsLabel(p), o.Rows, o.Spread, o.KillNode, p.Threads, p.WriteTime, p.Warmup)
}

// clusterOf returns db's Cluster view or an error naming who needs it.
func clusterOf(db engine.DB, who string) (Cluster, error) {
	c, ok := db.(Cluster)
	if !ok {
		return nil, fmt.Errorf("%s: the target is not a cluster benchlab started (engines %v)", who, engine.ClusterEngines())
	}
	return c, nil
}

// Plan returns the setup action and the selected scenarios.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	o := opts(p)
	steps := []workload.Step{setupStep(o.Rows)}
	if selected(p, StaleRead) {
		steps = append(steps, staleReadStep(p))
	}
	if selected(p, ReplicaLag) {
		steps = append(steps, lagStep(p))
	}
	if selected(p, WriteScaling) {
		for _, k := range o.Spread {
			steps = append(steps, scalingStep(p, o, k))
		}
	}
	if selected(p, Switchover) {
		steps = append(steps, switchoverStep(p, o))
	}
	if selected(p, Failover) {
		steps = append(steps, failoverStep(p, o))
	}
	return steps, nil
}
