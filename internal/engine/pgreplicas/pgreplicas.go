// Package pgreplicas is a PostgreSQL primary with N streaming replicas
// benchlab starts per run on loopback, from the same install dirs as the
// postgres engine's single servers: the primary by initdb, each replica
// by pg_basebackup from it (with a physical replication slot of its own,
// standby.signal and a primary_conninfo holding the per-start password).
// Replication is asynchronous, or synchronous (synchronous_standby_names
// naming every replica, ANY 1 of them); the synchronous_commit level is an
// ordinary setting. The DB is the postgres engine's on the primary; it
// also reaches each node, kills one, promotes a replica (pg_promote) and
// reads the replicas' lag from pg_stat_replication, for the cluster
// suite (engine.Cluster, engine.Promoter, engine.Lagger). A primary a
// switchover stopped rejoins as a replica on its own data dir, rewound by
// pg_rewind (every node runs with wal_log_hints on unless the target sets
// it), or by a new base backup when that fails.
//
// A target's settings are postgresql.conf variables of every node, except
// benchlab's own: replicas (1 to MaxReplicas, default 1), replication
// (async or sync, default async) and catchup_timeout (how long a new
// replica may take to replay what the primary wrote, default 60s).
package pgreplicas

import (
	"context"
	"errors"
	"slices"

	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

// Name is the engine's name.
const Name = "postgres-replicas"

// MaxReplicas bounds the replicas on one machine: each is a whole server.
const MaxReplicas = 4

func init() { engine.Register(Driver{}) }

// Driver starts PostgreSQL primaries with streaming replicas.
type Driver struct{}

// Name returns "postgres-replicas".
func (Driver) Name() string { return Name }

// Kind says the engine speaks SQL.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "PostgreSQL primary with settings.Replicas streaming replicas (default 1; replication async or sync) started per run on loopback"
}

// Flavor returns PostgreSQL's, for the install checks.
func (Driver) Flavor() server.Flavor { return postgres.Flavor }

// Settings returns nil: the servers check their settings when they start.
func (Driver) Settings() []engine.Setting { return nil }

// shape is what a target asks for.
type shape struct {
	engine.ReplicaShape
	sync bool // replication = "sync"
}

// shapeOf reads and checks benchlab's settings of t; errors name the field.
func shapeOf(t engine.Target) (shape, error) {
	rs, err := engine.ReadReplicaShape(t, MaxReplicas, strings.TrimSpace, func(v string) (string, error) {
		switch m := strings.ToLower(v); m {
		case "async", "sync":
			return m, nil
		}
		return "", fmt.Errorf("settings.%s: %q is not a PostgreSQL replication mode; want async or sync "+
			"(semi-sync is MariaDB's; the synchronous_commit level is a setting of its own)", engine.SettingReplication, v)
	})
	s := shape{ReplicaShape: rs, sync: rs.Mode == "sync"}
	if err != nil {
		return s, err
	}
	if _, ok := t.Setting("synchronous_standby_names"); ok {
		return s, fmt.Errorf("settings.synchronous_standby_names: benchlab sets it from settings.%s (sync names every replica); remove it",
			engine.SettingReplication)
	}
	if _, ok := t.Setting("port"); ok {
		return s, fmt.Errorf("settings.port: each node gets a free port of its own; remove it")
	}
	return s, nil
}

// ClusterShape is the target's shape: a primary and its replicas.
func (Driver) ClusterShape(t engine.Target) (engine.ClusterShape, error) {
	return engine.ReplicaClusterShape(Name, t, MaxReplicas, shapeOf)
}

// CheckTarget validates a target before anything runs: benchlab's
// settings, and the postgres engine's checks of the nodes' fields.
func (Driver) CheckTarget(t engine.Target) error {
	if err := engine.CheckReplicaTarget(Name, "postgres", t, shapeOf); err != nil {
		return err
	}
	return server.CheckTarget(postgres.Flavor, Name, nodeTarget(t, "primary"))
}

// slotName is node i's (from 1 for the first replica) replication slot
// and application name.
func slotName(i int) string { return fmt.Sprintf("replica%d", i) }

// nodeName names node i's dir: primary, replica1, ...
func nodeName(i int) string {
	if i == 0 {
		return "primary"
	}
	return slotName(i)
}

// Open starts the primary under dir/primary, then each replica under
// dir/replicaN from a base backup of it, creates the benchmark database,
// waits until every replica has replayed it (catchup_timeout) and, for
// sync replication, until the primary counts the replicas synchronous.
// Whatever fails stops every server started.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := d.CheckTarget(t); err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	s, _ := shapeOf(t)
	cfg, err := server.TargetConfig(postgres.Flavor, Name, nodeTarget(t, "primary"), filepath.Join(dir, "primary"))
	if err != nil {
		return nil, err
	}
	primary, err := server.Launch(ctx, cfg, postgres.Probe)
	if err != nil {
		return nil, err
	}
	insts := []*server.Instance{primary}
	stopAll := func() {
		for i := len(insts) - 1; i >= 0; i-- {
			insts[i].Stop()
		}
	}
	for i := 1; i <= s.Replicas; i++ {
		rc, err := server.TargetConfig(postgres.Flavor, Name, nodeTarget(t, slotName(i)), filepath.Join(dir, slotName(i)))
		if err != nil {
			stopAll()
			return nil, err
		}
		rc.Flavor, rc.Password = postgres.StandbyFlavor(primary, slotName(i)), primary.Password()
		in, err := server.Launch(ctx, rc, postgres.Probe)
		if err != nil {
			stopAll()
			return nil, err
		}
		insts = append(insts, in)
	}
	pdb, err := postgres.OpenManaged(ctx, Name, t, server.Manage(insts...))
	if err != nil {
		return nil, err // OpenManaged stopped them
	}
	db := &DB{DB: pdb, nodes: insts, set: server.NewNodes(Name, slices.Clone(insts)...), mode: s.Mode, target: t, dir: dir,
		password: primary.Password(), catchup: s.Catchup}
	if err := db.settle(ctx, s); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	return db, nil
}

// DB is a primary with replicas benchlab started: the postgres engine's
// DB on the primary, plus every node.
type DB struct {
	*postgres.DB
	nodes  []*server.Instance // 0 the first primary, i replica i
	set    *server.Nodes
	mode   string // the replication mode, for Info
	writer engine.ReplicaWriter

	// What rebuilding a node needs: the target, the run's dir, the
	// password and the catch-up bound.
	target   engine.Target
	dir      string
	password string
	catchup  time.Duration

	mu         sync.Mutex
	stopped    map[int]bool       // nodes a switchover stopped
	extra      []*server.Instance // nodes rebuilt by switchovers
	generation int
	lagConn    engine.Conn // on the primary, for the lag views
}

// Nodes returns the primary and the replicas.
func (db *DB) Nodes() int { return len(db.nodes) }

// Primary is the node that takes writes now.
func (db *DB) Primary() int { return db.writer.Primary() }

// FollowsWriter is true: Connect reaches the current primary.
func (db *DB) FollowsWriter() bool { return true }

// ConnectNode opens a worker connection to node i's benchmark database.
func (db *DB) ConnectNode(ctx context.Context, i int) (engine.Conn, error) {
	if err := db.set.Check(i); err != nil {
		return nil, err
	}
	return db.DB.ConnectPort(ctx, db.set.At(i).Port)
}

// Connect opens a worker connection to the current primary; during a
// switchover there is none.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) {
	p, err := db.writer.Writer(Name)
	if err != nil {
		return nil, err
	}
	return db.ConnectNode(ctx, p)
}

// KillNode kills node i's whole process group with SIGKILL, as a crash
// would; its death is expected (Died).
func (db *DB) KillNode(i int) error {
	if err := db.set.Check(i); err != nil {
		return err
	}
	db.mu.Lock()
	if db.lagConn != nil && i == db.writer.Primary() {
		db.lagConn.Close()
		db.lagConn = nil
	}
	db.mu.Unlock()
	return db.set.Kill(i)
}

// Died says why the cluster can no longer serve: a node died that
// KillNode did not kill, or every node is dead.
func (db *DB) Died() error { return db.set.DiedAll() }

// Wrap adds the cluster's death, when it died, to a failed call's error.
func (db *DB) Wrap(err error) error { return engine.WrapDied(err, db) }

// Info is the postgres engine's, with the cluster's shape.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info, err := db.DB.Info(ctx)
	if err != nil {
		return info, err
	}
	info = engine.ReplicaInfo(info, Name, len(db.nodes)-1, db.mode)
	info.Settings["benchlab.rejoin"] = rejoinWay(db.target)
	// benchlab's own default, which the postgres engine does not report.
	if c, err := db.ConnectNode(ctx, db.Primary()); err == nil {
		if v, err := c.Values(ctx, "SELECT current_setting('wal_log_hints')"); err == nil && len(v) == 1 {
			info.Settings["wal_log_hints"] = v[0][0]
		}
		c.Close()
	}
	return info, nil
}

// Close closes the lag views' connection, then the postgres DB, which
// stops every node (the replicas first).
func (db *DB) Close() error {
	db.mu.Lock()
	if db.lagConn != nil {
		db.lagConn.Close()
		db.lagConn = nil
	}
	extra := db.extra
	db.extra = nil
	db.mu.Unlock()
	var errs []error
	for i := len(extra) - 1; i >= 0; i-- {
		errs = append(errs, extra[i].Stop())
	}
	return errors.Join(append(errs, db.DB.Close())...)
}
