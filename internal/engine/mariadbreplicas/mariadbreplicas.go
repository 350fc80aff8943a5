// Package mariadbreplicas is a MariaDB primary with N binlog replicas
// benchlab starts per run on loopback, from the same install dirs as the
// mariadb engine's single servers: every node is initialised on its own
// (install-db) with one shared per-start password, writes a binlog with
// GTIDs (gtid_strict_mode), and each replica follows the primary by GTID
// (CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos) as a replication
// user benchlab creates. Replication is asynchronous, or semi-synchronous
// (rpl_semi_sync_master_enabled, built into MariaDB 10.11: a commit waits
// until a replica has received it, or rpl_semi_sync_master_timeout). The
// DB is the MySQL engine's on the primary; it also reaches each node,
// kills one, promotes a replica and reads the replicas' lag from SHOW
// SLAVE STATUS and the GTID positions, for the cluster suite.
//
// A target's settings are my.cnf variables of every node, except
// benchlab's own: replicas (1 to MaxReplicas, default 1), replication
// (async or semisync, default async) and catchup_timeout (default 60s).
package mariadbreplicas

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
)

// Name is the engine's name.
const Name = "mariadb-replicas"

// MaxReplicas bounds the replicas on one machine: each is a whole server.
const MaxReplicas = 4

// replUser is the account replicas connect to the primary as.
const replUser = "benchlab_repl"

func init() { engine.Register(Driver{}) }

// family is the nodes' programs: Debian's MariaDB.
var family = mysql.MariaDB.Family

// Driver starts MariaDB primaries with binlog replicas.
type Driver struct{}

// Name returns "mariadb-replicas".
func (Driver) Name() string { return Name }

// Kind says the engine speaks SQL.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "MariaDB primary with settings.Replicas binlog replicas by GTID (default 1; replication async or semisync) started per run on loopback"
}

// Flavor returns the nodes' flavor, for the install checks.
func (Driver) Flavor() server.Flavor { return node{Family: family} }

// Settings returns nil: the servers check their settings when they start.
func (Driver) Settings() []engine.Setting { return nil }

// shape is what a target asks for.
type shape struct {
	engine.ReplicaShape
	semisync bool // replication = "semisync"
}

// shapeOf reads and checks benchlab's settings of t; errors name the field.
func shapeOf(t engine.Target) (shape, error) {
	trim := func(v string) string { return strings.Trim(strings.TrimSpace(v), `"`) }
	rs, err := engine.ReadReplicaShape(t, MaxReplicas, trim, func(v string) (string, error) {
		switch strings.ToLower(v) {
		case "async":
			return "async", nil
		case "semisync", "semi-sync":
			return "semisync", nil
		}
		return "", fmt.Errorf("settings.%s: %q is not a MariaDB replication mode; want async or semisync "+
			"(fully synchronous replication is the galera engine)", engine.SettingReplication, v)
	})
	s := shape{ReplicaShape: rs, semisync: rs.Mode == "semisync"}
	if err != nil {
		return s, err
	}
	for k := range t.Settings {
		if server.IsOwned(node{Family: family}, k) {
			return s, fmt.Errorf("settings.%s: benchlab sets it on every node; remove it", k)
		}
	}
	return s, nil
}

// ClusterShape is the target's shape: a primary and its replicas.
func (Driver) ClusterShape(t engine.Target) (engine.ClusterShape, error) {
	return engine.ReplicaClusterShape(Name, t, MaxReplicas, shapeOf)
}

// CheckTarget validates a target before anything runs.
func (Driver) CheckTarget(t engine.Target) error {
	if err := engine.CheckReplicaTarget(Name, "mariadb", t, shapeOf); err != nil {
		return err
	}
	return server.CheckTarget(node{Family: family}, Name, engine.ReplicaNodeTarget(t, "primary"))
}

// Open starts the primary under dir/primary and each replica under
// dir/replicaN, points the replicas at the primary, creates the benchmark
// database on the primary and waits until every replica has applied it
// (catchup_timeout) and, for semisync, until the primary counts them as
// semi-synchronous clients. Whatever fails stops every server started.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := d.CheckTarget(t); err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	s, _ := shapeOf(t)
	password, err := server.NewPassword()
	if err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	var insts []*server.Instance
	stopAll := func() {
		for i := len(insts) - 1; i >= 0; i-- {
			insts[i].Stop()
		}
	}
	for i := 0; i <= s.Replicas; i++ {
		name := "primary"
		if i > 0 {
			name = fmt.Sprintf("replica%d", i)
		}
		f := node{Family: family, id: i + 1, replica: i > 0, semisync: s.semisync}
		cfg, err := server.TargetConfig(f, Name, engine.ReplicaNodeTarget(t, name), filepath.Join(dir, name))
		if err != nil {
			stopAll()
			return nil, err
		}
		cfg.Password = password
		in, err := server.Launch(ctx, cfg, mysql.Probe)
		if err != nil {
			stopAll()
			return nil, err
		}
		insts = append(insts, in)
	}
	db := &DB{nodes: insts, set: server.NewNodes(Name, insts...), semisync: s.semisync, mode: s.Mode, roots: make([]*sql.DB, len(insts))}
	for i, in := range insts {
		conn, err := gomysql.NewConnector(mysql.RootConfig(in))
		if err != nil {
			stopAll()
			return nil, err
		}
		db.roots[i] = sql.OpenDB(conn)
		db.roots[i].SetMaxOpenConns(2)
	}
	if err := db.replicate(ctx); err != nil {
		db.closeRoots()
		stopAll()
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	mdb, err := mysql.OpenManaged(ctx, Name, t, server.Manage(insts...), insts[0].Addr())
	if err != nil {
		db.closeRoots()
		return nil, err // OpenManaged stopped them
	}
	db.DB = mdb
	if err := db.settle(ctx, s); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	return db, nil
}

// DB is a primary with replicas benchlab started: the MySQL engine's DB
// on the primary, plus every node and a root handle on each (over its
// private socket).
type DB struct {
	*mysql.DB
	nodes    []*server.Instance // 0 the first primary, i replica i
	set      *server.Nodes
	semisync bool
	mode     string // the replication mode, for Info
	roots    []*sql.DB
	writer   engine.ReplicaWriter
}

// closeRoots closes the root handles.
func (db *DB) closeRoots() {
	for _, r := range db.roots {
		if r != nil {
			r.Close()
		}
	}
}

// Close closes the root handles and the MySQL DB, which stops every node.
func (db *DB) Close() error {
	db.closeRoots()
	return db.DB.Close()
}

// Nodes returns the primary and the replicas.
func (db *DB) Nodes() int { return len(db.nodes) }

// Primary is the node that takes writes now.
func (db *DB) Primary() int { return db.writer.Primary() }

// FollowsWriter is true: Connect reaches the current primary.
func (db *DB) FollowsWriter() bool { return true }

// ConnectNode opens a worker connection to node i.
func (db *DB) ConnectNode(ctx context.Context, i int) (engine.Conn, error) {
	if err := db.set.Check(i); err != nil {
		return nil, err
	}
	return db.DB.ConnectAddr(ctx, db.nodes[i].Addr())
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

// KillNode kills node i as a crash would; its death is expected (Died).
func (db *DB) KillNode(i int) error { return db.set.Kill(i) }

// Died says why the cluster can no longer serve: a node died that
// KillNode did not kill, or every node is dead.
func (db *DB) Died() error { return db.set.DiedAll() }

// Wrap adds the cluster's death, when it died, to a failed call's error.
func (db *DB) Wrap(err error) error { return engine.WrapDied(err, db) }

// Info is the MySQL engine's, with the cluster's shape.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info, err := db.DB.Info(ctx)
	if err != nil {
		return info, err
	}
	return engine.ReplicaInfo(info, Name, len(db.nodes)-1, db.mode), nil
}
