package engine

import (
	"context"
	"fmt"
)

// Cluster is a DB of several servers benchlab started and reaches one by
// one: a Galera cluster, or a primary with streaming or binlog replicas.
// The cluster suite measures through it, so that it knows no engine by name.
type Cluster interface {
	SQL
	// Nodes is the node count the cluster started with.
	Nodes() int
	// Primary is the node (from 0) that takes writes now: the one a
	// promotion made primary, or 0 on a multi-primary cluster.
	Primary() int
	// ConnectNode opens a worker connection to node i (from 0), bypassing
	// any proxy.
	ConnectNode(ctx context.Context, i int) (Conn, error)
	// KillNode kills node i (from 0) as a crash would; the DB's Died does
	// not report that death unless the cluster can no longer serve.
	KillNode(i int) error
	// FollowsWriter reports whether Connect reaches a node that takes
	// writes whichever it is (a proxy's health checks, or the DB's own
	// record of the primary after a promotion).
	FollowsWriter() bool
}

// Promoter is a Cluster whose writes go to one primary, and whose replica
// can become the primary: after the primary was killed (failover), or in a
// planned switchover, where the old primary is shut down cleanly first.
type Promoter interface {
	Cluster
	// Promote makes replica i (from 0) the primary (PostgreSQL's
	// pg_promote, MariaDB's STOP REPLICA and read_only off) and points
	// the other live replicas at it. It returns when i takes writes.
	Promote(ctx context.Context, i int) error
	// Switchover moves the primary to replica i as planned: the current
	// primary stops taking writes (Connect fails meanwhile), i applies
	// everything it wrote and is promoted. It returns once i takes writes;
	// the old primary then takes none until Rejoin.
	Switchover(ctx context.Context, i int) error
	// Rejoin makes node j, the primary a switchover left, a replica of the
	// current primary; it returns once j streams from it, saying how.
	Rejoin(ctx context.Context, j int) (Rejoined, error)
}

// Rejoined is how a Rejoin brought the old primary back as a replica.
type Rejoined struct {
	// Copied is true when the node's data were copied anew from the
	// primary (PostgreSQL's base backup), false when they were kept
	// (rewound by pg_rewind, or followed on from MariaDB's own GTID
	// position): a copy's time grows with the data.
	Copied bool
	// Fallback, when not empty, says why the node's own data could not be
	// kept, so that they were copied.
	Fallback string
}

// ReplicaLag is how far one node is behind the node whose changes it
// applies, as that engine's own views tell it. A field the engine has no
// view of is negative.
type ReplicaLag struct {
	// Node is the replica (from 0).
	Node int
	// SentBytes, WriteBytes, FlushBytes and ReplayBytes are the primary's
	// current WAL position minus the replica's sent, written, flushed and
	// replayed positions (PostgreSQL's pg_stat_replication).
	SentBytes, WriteBytes, FlushBytes, ReplayBytes int64
	// Seconds is the engine's own lag in seconds (PostgreSQL's replay_lag,
	// MariaDB's Seconds_Behind_Master).
	Seconds float64
	// Transactions are the transactions received and not yet applied
	// (MariaDB's GTID sequence numbers, Galera's receive queue).
	Transactions int64
}

// Lagger is a Cluster that reads its replicas' lag from the engine's views.
type Lagger interface {
	ReplicaLags(ctx context.Context) ([]ReplicaLag, error)
}

// NodeReading is one node's engine counters at one time, by the engine's
// own names: Counters only grow (their change over a step is the figure),
// Gauges are levels (queues, clients, whether the node is in recovery).
type NodeReading struct {
	Counters, Gauges map[string]float64
}

// NodeCounters is a Cluster that reads engine counters of every node (not
// only the one its DB is opened on): Galera's wsrep_* status, the
// replication views. A node that is down has an empty reading.
type NodeCounters interface {
	NodeCounters(ctx context.Context) ([]NodeReading, error)
}

// ClusterShape is what a cluster target will be, known before it starts:
// the cluster suite checks its scenarios against it.
type ClusterShape struct {
	// Nodes is the node count the target asks for; MaxNodes the most the
	// engine starts on one machine.
	Nodes, MaxNodes int
	// NodesField names the target field giving the node count
	// ("settings.nodes", "settings.replicas").
	NodesField string
	// MultiPrimary is true when every node takes writes (Galera); false
	// for a primary with replicas, whose failover is a promotion.
	MultiPrimary bool
	// Replication names the replication mode ("galera", "async", "sync",
	// "semisync").
	Replication string
}

// ClusterDriver is a Driver of a cluster engine.
type ClusterDriver interface {
	Driver
	// ClusterShape reads target t's shape; the error names the field.
	ClusterShape(t Target) (ClusterShape, error)
}

// ClusterShapeOf returns the shape of target t when its engine is a
// cluster engine; the error says what t is not.
func ClusterShapeOf(t Target) (ClusterShape, error) {
	d, ok := Lookup(t.Engine)
	if !ok {
		return ClusterShape{}, fmt.Errorf("engine: %q is not an engine", t.Engine)
	}
	cd, ok := d.(ClusterDriver)
	if !ok {
		return ClusterShape{}, fmt.Errorf("engine: %s is not a cluster; the cluster suite runs on %v", t.Engine, ClusterEngines())
	}
	return cd.ClusterShape(t)
}

// ClusterEngines names the registered cluster engines.
func ClusterEngines() []string {
	var out []string
	for _, n := range Names() {
		if d, ok := Lookup(n); ok {
			if _, ok := d.(ClusterDriver); ok {
				out = append(out, n)
			}
		}
	}
	return out
}
