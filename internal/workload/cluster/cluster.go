// Package cluster is the cluster suite: what a multi-node database does
// that one server cannot, measured on a cluster benchlab starts (the galera
// engine). Three scenarios, each with a headline of its own:
//
//   - stale-read: one writer on node 1 sets a counter to 1, 2, 3, ...;
//     readers on the other nodes read it at once. A read that returns less
//     than the last value acknowledged to the writer before the read began
//     is stale. Headline stale_share, the stale reads' share of all reads;
//     the facts give how long the oldest write a stale read missed had been
//     acknowledged (stale_lag_*_ms). Two targets with wsrep_sync_wait = 0
//     and 1 show what causal reads cost and buy.
//   - write-scaling: transactions of two row updates with the writers
//     spread over 1, 2, ... nodes (write-scaling_nodes=k); headline
//     cluster_wps, transactions per second; conflicts (certification
//     failures, deadlocks) are retried and counted (the retries facts).
//   - failover: writers keep updating rows through the proxy (or, without
//     one, node by node with client-side retry) while benchlab kills a node
//     with SIGKILL at kill_at; a probe writer's operations that had to be
//     retried give the headline downtime_s, and the facts the longest gap
//     between any two successful writes, the errors and the time until the
//     writers' throughput is back to 90% of what it was before the kill.
//     The engine knows the killed node's death is expected (KillNode): the
//     step fails only if the cluster loses its quorum.
//
// Scenario order is stale-read, write-scaling, failover: the kill is last
// because the node stays dead for the rest of the cell.
package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Cluster is what the scenarios need of a cluster engine's DB (the galera
// engine's): its nodes, a connection to each, and a way to kill one.
type Cluster interface {
	engine.SQL
	// Nodes is the node count the cluster started with.
	Nodes() int
	// ConnectNode opens a connection to node i (from 0), bypassing any proxy.
	ConnectNode(ctx context.Context, i int) (engine.Conn, error)
	// KillNode kills node i (from 0) as a crash would; the DB's Died does
	// not report that death unless the cluster lost its quorum.
	KillNode(i int) error
	// Proxied reports whether Connect goes through a proxy.
	Proxied() bool
}

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
	WriteScaling = "write-scaling"
	Failover     = "failover"
)

// Suite is the cluster suite.
type Suite struct{}

// Name returns "cluster".
func (Suite) Name() string { return "cluster" }

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "cluster scenarios on a galera target: stale reads on other nodes, write scaling over nodes, downtime when a node is killed"
}

// Tests lists the scenarios in run order.
func (Suite) Tests() []workload.Test {
	return []workload.Test{
		{Name: StaleRead, Family: StaleRead, Group: Group, Summary: "a writer on node 1, readers on the others; share of stale reads (stale_share)"},
		{Name: WriteScaling, Family: WriteScaling, Group: Group, Summary: "2-row update transactions spread over 1..k nodes (cluster.spread); commits/s and conflicts"},
		{Name: Failover, Family: Failover, Group: Group, Summary: "writers while node cluster.kill_node is killed at cluster.kill_at; downtime_s"},
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
		if k < 1 || k > engine.MaxClusterNodes {
			return workload.Bad("cluster.spread", o.Spread, "%d nodes; want 1 to %d", k, engine.MaxClusterNodes)
		}
	}
	if o.KillNode < 1 || o.KillNode > engine.MaxClusterNodes {
		return workload.Bad("cluster.kill_node", o.KillNode, "node %d; want 1 to %d", o.KillNode, engine.MaxClusterNodes)
	}
	if o.KillAt.Duration < 0 || (o.KillAt.Duration > 0 && o.KillAt.Duration >= p.Warmup+p.WriteTime) {
		return workload.Bad("cluster.kill_at", o.KillAt.String(), "%s is not within failover's step (warm-up %s + write_time %s); want less",
			o.KillAt, p.Warmup, p.WriteTime)
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// selected reports whether test runs under p's selection.
func selected(p workload.Params, test string) bool {
	sel, _ := workload.SelectTests(p.Tests, Suite{}.Tests())
	return sel == nil || sel[test]
}

// CheckTarget refuses, before anything runs, a target that is not a cluster
// benchlab starts, or one with too few nodes for the selected scenarios:
// stale-read needs 2, failover 3 (killing one of 2 leaves the other without
// a quorum), write-scaling as many as cluster.spread names.
func (Suite) CheckTarget(p workload.Params, t engine.Target) error {
	d, _ := engine.Lookup(t.Engine)
	clustered, ok := d.(engine.Clustered)
	if !ok {
		return fmt.Errorf("engine: %s is not a cluster; the cluster suite runs on engine %s", t.Engine,
			strings.Join(engine.ClusterEngines(), " or "))
	}
	if t.DSN != "" {
		return fmt.Errorf("dsn: the cluster suite reaches each node and kills one; it needs a cluster benchlab starts (remove dsn)")
	}
	n, err := clustered.Nodes(t)
	if err != nil {
		return err
	}
	o := opts(p)
	need := func(test string, k int, why string) error {
		if selected(p, test) && n < k {
			return fmt.Errorf("settings.%s: %d node(s); the %s test needs %d or more (%s)", engine.ClusterNodesSetting, n, test, k, why)
		}
		return nil
	}
	if err := need(StaleRead, 2, "a writer's node and a reader's"); err != nil {
		return err
	}
	if err := need(Failover, 3, "killing one of 2 nodes leaves the other without a quorum"); err != nil {
		return err
	}
	if err := need(WriteScaling, slices.Max(o.Spread), "cluster.spread names that many"); err != nil {
		return err
	}
	if selected(p, Failover) && o.KillNode > n {
		return fmt.Errorf("settings.%s: %d node(s); cluster.kill_node is %d", engine.ClusterNodesSetting, n, o.KillNode)
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
		return nil, fmt.Errorf("%s: the target is not a cluster benchlab started (engine %s)", who,
			strings.Join(engine.ClusterEngines(), " or "))
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
	if selected(p, WriteScaling) {
		for _, k := range o.Spread {
			steps = append(steps, scalingStep(p, o, k))
		}
	}
	if selected(p, Failover) {
		steps = append(steps, failoverStep(p, o))
	}
	return steps, nil
}

// The scenarios' tables.
const (
	counterTable = "cluster_counter"
	rowsTable    = "cluster_rows"
)

// setupStep creates the counter row and the rows table, through the DB's
// own address (the proxy's or node 1's); Galera replicates both.
func setupStep(rows int) workload.Step {
	return workload.Step{
		Name: "cluster.setup", Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			_, c, err := workload.ConnectSQL(ctx, db, "cluster.setup")
			if err != nil {
				return workload.Tally{}, err
			}
			defer c.Close()
			var t workload.Tally
			exec := func(q string) error {
				t.Statements++
				if _, err := c.Exec(ctx, q); err != nil {
					return fmt.Errorf("cluster.setup: %s: %w", q, err)
				}
				return nil
			}
			for _, q := range []string{
				"CREATE TABLE " + counterTable + " (id INT PRIMARY KEY, v BIGINT NOT NULL)",
				"INSERT INTO " + counterTable + " VALUES (1, 0)",
				"CREATE TABLE " + rowsTable + " (id INT PRIMARY KEY, v BIGINT NOT NULL, pad CHAR(60) NOT NULL)",
			} {
				if err := exec(q); err != nil {
					return t, err
				}
			}
			const batch = 1000
			for lo := 1; lo <= rows; lo += batch {
				var b strings.Builder
				b.WriteString("INSERT INTO " + rowsTable + " VALUES ")
				for id := lo; id < lo+batch && id <= rows; id++ {
					if id > lo {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d, 0, 'cluster')", id)
				}
				if err := exec(b.String()); err != nil {
					return t, err
				}
			}
			t.Rows = int64(rows + 1)
			fmt.Fprintf(log, "cluster.setup: %s and %d rows of %s\n", counterTable, rows, rowsTable)
			return t, nil
		},
	}
}

// conn is a worker's connection that moves to the next node when its
// node fails: through the proxy it reconnects to the proxy, without one to
// the next node in turn.
type conn struct {
	cl   Cluster
	node int // the node connected to, -1 through the proxy
	c    engine.Conn
}

// open connects to node (or the proxy when node < 0).
func (k *conn) open(ctx context.Context) error {
	var c engine.Conn
	var err error
	if k.node < 0 {
		c, err = k.cl.Connect(ctx)
	} else {
		c, err = k.cl.ConnectNode(ctx, k.node)
	}
	if err != nil {
		return err // c may be a nil pointer in a non-nil interface
	}
	k.c = c
	return nil
}

// reset drops the connection and, without a proxy, moves to the next node.
func (k *conn) reset() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
	if k.node >= 0 {
		k.node = (k.node + 1) % k.cl.Nodes()
	}
}

// Close closes the connection.
func (k *conn) Close() error {
	if k.c == nil {
		return nil
	}
	return k.c.Close()
}

// flat turns err into an error of the same text that wraps nothing, so
// that the runner counts a failed try without ending the step on a lost
// connection (engine.ErrConnLost): losing a connection is what failover
// measures.
func flat(err error) error { return fmt.Errorf("%s", err.Error()) }

// staleState is what a stale-read step's writer and readers share: the
// last acknowledged counter value, when each value was acknowledged, and
// the lags of the stale reads.
type staleState struct {
	acked atomic.Int64
	ackAt [1 << 16]atomic.Int64 // unix ns of the ack of value v, at v % len

	mu     sync.Mutex
	lags   []float64 // ms
	stale  int64
	reads  int64
	writes int64
}

// lagLimit bounds the stale lags kept for the percentiles.
const lagLimit = 200_000

// staleReadStep is one writer on node 1 (its own role) and the step's
// threads reading on the other nodes in turn (the headline role).
func staleReadStep(p workload.Params) workload.Step {
	var st *staleState
	return workload.Step{
		Name: StaleRead, Family: StaleRead, Group: Group, Metric: StaleShare, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup,
		Roles: []workload.Role{
			{Name: "reader", Metric: StaleShare,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					cl, err := clusterOf(db, StaleRead)
					if err != nil {
						return nil, err
					}
					if cl.Nodes() < 2 {
						return nil, fmt.Errorf("%s: the cluster has %d node; readers need a node the writer is not on", StaleRead, cl.Nodes())
					}
					if id == 0 {
						st = &staleState{}
					}
					node := 1 + id%(cl.Nodes()-1)
					c, err := cl.ConnectNode(ctx, node)
					if err != nil {
						return nil, fmt.Errorf("%s: reader %d on node %d: %w", StaleRead, id, node+1, err)
					}
					return &reader{c: c, st: st, first: id == 0}, nil
				}},
			{Name: "writer", Threads: 1, Metric: WPS,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					cl, err := clusterOf(db, StaleRead)
					if err != nil {
						return nil, err
					}
					c, err := cl.ConnectNode(ctx, 0)
					if err != nil {
						return nil, fmt.Errorf("%s: writer on node 1: %w", StaleRead, err)
					}
					// The counter goes on from where an earlier thread count left it.
					v, err := c.Values(ctx, "SELECT v FROM "+counterTable+" WHERE id = 1")
					if err != nil || len(v) != 1 {
						c.Close()
						return nil, fmt.Errorf("%s: read the counter: %v %w", StaleRead, v, err)
					}
					last, _ := strconv.ParseInt(v[0][0], 10, 64)
					st.acked.Store(last)
					st.ackAt[last%int64(len(st.ackAt))].Store(time.Now().UnixNano())
					return &writer{c: c, st: st, next: last + 1}, nil
				}},
		},
	}
}

// writer sets the counter to the next value and publishes the ack.
type writer struct {
	c    engine.Conn
	st   *staleState
	next int64
}

// Op writes the next value; once the server acknowledged it, it is the
// value readers must not read older than.
func (w *writer) Op(ctx context.Context) (workload.Tally, error) {
	if _, err := w.c.Exec(ctx, "UPDATE "+counterTable+" SET v = ? WHERE id = 1", w.next); err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: write %d: %w", StaleRead, w.next, err)
	}
	w.st.ackAt[w.next%int64(len(w.st.ackAt))].Store(time.Now().UnixNano())
	w.st.acked.Store(w.next)
	w.next++
	w.st.mu.Lock()
	w.st.writes++
	w.st.mu.Unlock()
	return workload.Tally{Statements: 1, Rows: 1}, nil
}

// Close closes the connection.
func (w *writer) Close() error { return w.c.Close() }

// reader reads the counter on its node.
type reader struct {
	c     engine.Conn
	st    *staleState
	first bool
}

// Kinds are the two outcomes of a read.
func (r *reader) Kinds() []string { return []string{"fresh_read", "stale_read"} }

// Op reads the counter: stale when older than the last ack before the
// read began. A stale read's lag is how long the oldest write it missed
// had been acknowledged when the read returned.
func (r *reader) Op(ctx context.Context) (workload.Tally, error) {
	before := r.st.acked.Load()
	v, err := r.c.Values(ctx, "SELECT v FROM "+counterTable+" WHERE id = 1")
	if err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: read: %w", StaleRead, err)
	}
	if len(v) != 1 {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: read %d rows of the counter; want 1", StaleRead, len(v))
	}
	got, err := strconv.ParseInt(v[0][0], 10, 64)
	if err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: counter %q: %w", StaleRead, v[0][0], err)
	}
	now := time.Now().UnixNano()
	t := workload.Tally{Statements: 1}
	r.st.mu.Lock()
	r.st.reads++
	if got < before {
		t.Rows, t.Kind = 1, 1
		r.st.stale++
		missed := got + 1
		if before-missed < int64(len(r.st.ackAt)) && len(r.st.lags) < lagLimit {
			at := r.st.ackAt[missed%int64(len(r.st.ackAt))].Load()
			r.st.lags = append(r.st.lags, float64(now-at)/1e6)
		}
	}
	r.st.mu.Unlock()
	return t, nil
}

// Facts are the step's counts and stale lags, warm-up included (the
// runner's stale_read_ops and fresh_read_ops count the measured part): the
// same for every reader, kept from the first.
func (r *reader) Facts() map[string]float64 {
	if !r.first {
		return nil
	}
	r.st.mu.Lock()
	defer r.st.mu.Unlock()
	f := map[string]float64{"stale_reads_total": float64(r.st.stale), "reads_total": float64(r.st.reads),
		"writer_acks_total": float64(r.st.writes)}
	if len(r.st.lags) > 0 {
		lags := slices.Clone(r.st.lags)
		slices.Sort(lags)
		q := func(p float64) float64 { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
		f["stale_lag_p50_ms"], f["stale_lag_p99_ms"], f["stale_lag_max_ms"] = q(0.5), q(0.99), lags[len(lags)-1]
	}
	return f
}

// Close closes the connection.
func (r *reader) Close() error { return r.c.Close() }

// maxTries bounds the tries of a write that conflicts.
const maxTries = 10

// scalingStep runs transactions of two random row updates with the
// step's threads spread over k nodes (worker i on node i % k); a conflict
// is tried again, up to maxTries.
func scalingStep(p workload.Params, o *Options, k int) workload.Step {
	name := fmt.Sprintf("%s_nodes=%d", WriteScaling, k)
	return workload.Step{
		Name: name, Family: WriteScaling, Group: Group, Metric: WPS, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			cl, err := clusterOf(db, name)
			if err != nil {
				return nil, err
			}
			if k > cl.Nodes() {
				return nil, fmt.Errorf("%s: the cluster has %d nodes", name, cl.Nodes())
			}
			c, err := cl.ConnectNode(ctx, id%k)
			if err != nil {
				return nil, fmt.Errorf("%s: worker %d on node %d: %w", name, id, id%k+1, err)
			}
			return &updater{c: c, rows: o.Rows, rng: seed | 1, name: name}, nil
		},
	}
}

// updater adds one to random rows' values.
type updater struct {
	c    engine.Conn
	rows int
	rng  uint64
	name string
}

// id draws a row (xorshift).
func (u *updater) id() int {
	u.rng ^= u.rng << 13
	u.rng ^= u.rng >> 7
	u.rng ^= u.rng << 17
	return 1 + int(u.rng%uint64(u.rows))
}

// Op updates two rows in one transaction, trying it again after a
// conflict: a certification failure is a deadlock error on the node that
// loses. (An autocommit statement would hide most of them: the server
// retries it itself, wsrep_retry_autocommit.)
func (u *updater) Op(ctx context.Context) (workload.Tally, error) {
	a, b := u.id(), u.id()
	var t workload.Tally
	for try := 1; ; try++ {
		err := u.txn(ctx, &t, a, b)
		if err == nil {
			t.Rows = 2
			return t, nil
		}
		t.Statements++
		_, _ = u.c.Exec(ctx, "ROLLBACK")
		if engine.ConflictOf(err) == engine.NoConflict || try == maxTries {
			return t, fmt.Errorf("%s: update rows %d and %d (try %d): %w", u.name, a, b, try, err)
		}
		t.Retries++
	}
}

// txn runs BEGIN, the two updates and COMMIT, counting the statements.
func (u *updater) txn(ctx context.Context, t *workload.Tally, a, b int) error {
	for _, q := range []struct {
		sql  string
		args []any
	}{{"BEGIN", nil}, {"UPDATE " + rowsTable + " SET v = v + 1 WHERE id = ?", []any{a}},
		{"UPDATE " + rowsTable + " SET v = v + 1 WHERE id = ?", []any{b}}, {"COMMIT", nil}} {
		t.Statements++
		if _, err := u.c.Exec(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the connection.
func (u *updater) Close() error { return u.c.Close() }
