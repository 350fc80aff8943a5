// Package galera is a MariaDB Galera cluster benchlab starts on loopback:
// N nodes (MariaDB 10.11 from Debian's mariadb-server with the galera-4
// provider), each with its own data dir, SQL port, group communication
// (gcomm) port and state transfer ports, optionally behind an HAProxy.
// The nodes follow the MySQL family's lifecycle (package mysql's Family,
// server.Launch per node) with the wsrep settings added; the DB is the
// MySQL engine's, on the proxy's address (or node 1's without a proxy), and
// also reaches each node (Nodes, ConnectNode) and can kill one (KillNode)
// for the cluster suite's scenarios.
//
// A target's settings are my.cnf variables of every node, as for the mysql
// engine, except benchlab's own: nodes (1 to 5, default 3), proxy (haproxy
// or none; default haproxy when installed) and proxy_balance (first or
// roundrobin). An existing cluster is a dsn naming its proxy.
package galera

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
)

// Name is the engine's name.
const Name = "galera"

// The settings that are benchlab's, not my.cnf's.
const (
	SettingNodes   = "nodes"
	SettingProxy   = "proxy"
	SettingBalance = "proxy_balance"
)

// MaxNodes bounds a cluster on one machine: each node is a full server.
const MaxNodes = 5

// DefaultNodes is the size of a cluster whose target does not say.
const DefaultNodes = 3

func init() { engine.Register(Driver{}) }

// Driver starts Galera clusters.
type Driver struct{}

// nodeFamily is the nodes' programs: Debian's MariaDB.
var nodeFamily = mysql.MariaDB.Family

// Name returns "galera".
func (Driver) Name() string { return Name }

// ChoosesClient says a cluster target may choose its client path, as a
// MySQL target does (the mysql engine's DB serves its workers).
func (Driver) ChoosesClient() {}

// Kind says the engine speaks SQL.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "MariaDB Galera cluster of settings.nodes nodes (default 3) started per run on loopback, behind HAProxy when installed; or an existing cluster by dsn"
}

// Flavor returns the nodes' flavor, for the install checks.
func (Driver) Flavor() server.Flavor { return node{Family: nodeFamily} }

// Settings returns nil: the nodes check their settings when they start.
func (Driver) Settings() []engine.Setting { return nil }

// Nodes returns the number of nodes target t asks for: its nodes setting,
// DefaultNodes when absent. The error names the setting.
func Nodes(t engine.Target) (int, error) {
	v, ok := t.Setting(SettingNodes)
	if !ok {
		return DefaultNodes, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > MaxNodes {
		return 0, fmt.Errorf("settings.%s: %q is not a node count; want 1 to %d (a node is a whole server on this machine)", SettingNodes, v, MaxNodes)
	}
	return n, nil
}

// proxyOf returns the proxy target t asks for ("haproxy" or "none") and
// the balance.
func proxyOf(t engine.Target) (kind, balance string, err error) {
	kind, given := t.Setting(SettingProxy)
	kind = strings.ToLower(strings.TrimSpace(kind))
	if !given {
		kind = "none"
		if _, err := (proxy{}).FindBinaries(""); err == nil {
			kind = "haproxy"
		}
	}
	switch kind {
	case "none":
	case "haproxy":
		if _, err := (proxy{}).FindBinaries(""); err != nil {
			return "", "", fmt.Errorf("settings.%s: %w", SettingProxy, err)
		}
	default:
		return "", "", fmt.Errorf("settings.%s: %q is not a proxy; want haproxy or none", SettingProxy, kind)
	}
	balance, ok := t.Setting(SettingBalance)
	balance = strings.ToLower(strings.TrimSpace(balance))
	if !ok {
		balance = "first"
	}
	if balance != "first" && balance != "roundrobin" {
		return "", "", fmt.Errorf("settings.%s: %q is not a balance; want first (one node, the others backups) or roundrobin", SettingBalance, balance)
	}
	return kind, balance, nil
}

// sstMethod is how a joining node gets the cluster's state: a copy of a
// donor's data dir by rsync (Debian's wsrep_sst_rsync), the usual method.
const sstMethod = "rsync"

// nodeTarget is t as each node's server sees it: benchlab's settings and
// the provider options left out, named after the node.
func nodeTarget(t engine.Target, i int) (engine.Target, string) {
	nt := t
	nt.Name = fmt.Sprintf("%s-node%d", t.Name, i+1)
	nt.Settings = map[string]string{}
	var options string
	for k, v := range t.Settings {
		switch strings.ToLower(k) {
		case SettingNodes, SettingProxy, SettingBalance:
		case "wsrep_provider_options", "wsrep-provider-options":
			options = strings.Trim(v, `"`)
		default:
			nt.Settings[k] = v
		}
	}
	return nt, options
}

// ClusterShape is the target's node count (settings.nodes); every node
// takes writes.
func (Driver) ClusterShape(t engine.Target) (engine.ClusterShape, error) {
	n, err := Nodes(t)
	if err != nil {
		return engine.ClusterShape{}, err
	}
	if t.DSN != "" {
		return engine.ClusterShape{}, fmt.Errorf("dsn: the cluster suite reaches each node and kills one; it needs a cluster benchlab starts (remove dsn)")
	}
	return engine.ClusterShape{Nodes: n, MaxNodes: MaxNodes, NodesField: "settings." + SettingNodes, MultiPrimary: true,
		Replication: "galera"}, nil
}

// CheckTarget validates a target before anything runs: the node count, the
// proxy, Galera's provider, and the MySQL
// family's checks of the nodes' fields.
func (d Driver) CheckTarget(t engine.Target) error {
	if t.DSN != "" {
		return mysql.NewDriver(Name, "", nodeFamily).CheckTarget(t)
	}
	if _, err := Nodes(t); err != nil {
		return err
	}
	if _, _, err := proxyOf(t); err != nil {
		return err
	}
	if _, ok := t.Setting("port"); ok {
		return fmt.Errorf("settings.port: each node gets a free port of its own; remove it")
	}
	if field := mysql.MyRocksSetting(t.Settings); field != "" {
		return fmt.Errorf("settings.%s: Galera replicates InnoDB tables only; MyRocks runs on a mariadb target", field)
	}
	if _, err := os.Stat(provider); err != nil {
		return fmt.Errorf("engine: Galera is not installed (%s: %v); install the Debian package galera-4 (scripts/install-deps.sh)",
			provider, errors.Unwrap(err))
	}
	nt, _ := nodeTarget(t, 0)
	return server.CheckTarget(d.Flavor(), Name, nt)
}

// DB is a Galera cluster benchlab started: the MySQL engine's DB on the
// proxy (or node 1), plus the nodes.
type DB struct {
	*mysql.DB
	nodes []*server.Instance
	proxy *server.Instance // nil without a proxy
	set   *server.Nodes
}

// Open starts the cluster under dir (node1/, node2/, ..., proxy/), waits
// until every node is synced in a cluster of all of them, and creates the
// benchmark database and user; or connects to the target's dsn.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if t.DSN != "" {
		return mysql.NewDriver(Name, "", nodeFamily).Open(ctx, t, dir)
	}
	if err := d.CheckTarget(t); err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	n, _ := Nodes(t)
	kind, balance, _ := proxyOf(t)
	// Each node's group, state-transfer and SQL ports are picked together,
	// so no two of them are the same port.
	ports, err := server.FreePorts(4 * n)
	if err != nil {
		return nil, fmt.Errorf("%s target %s: pick ports: %w", Name, t.Name, err)
	}
	cluster := make([]string, n)
	for i := range cluster {
		cluster[i] = fmt.Sprintf("%s:%d", server.Host, ports[3*i])
	}
	password, err := server.NewPassword()
	if err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	// Node 1 bootstraps the cluster; the others then join at once, each
	// taking its state transfer when the donor is free.
	insts := make([]*server.Instance, n)
	errs := make([]error, n)
	launch := func(i int) {
		nt, options := nodeTarget(t, i)
		nt.Settings["port"] = strconv.Itoa(ports[3*n+i])
		f := node{Family: nodeFamily, index: i, cluster: cluster, ist: ports[3*i+1], sst: ports[3*i+2],
			name: "benchlab_" + t.Name, sstMethod: sstMethod, options: options, bootstrap: i == 0}
		cfg, err := server.TargetConfig(f, Name, nt, filepath.Join(dir, fmt.Sprintf("node%d", i+1)))
		if err != nil {
			errs[i] = err
			return
		}
		// One password for every node: a joiner's state transfer copies
		// node 1's accounts.
		cfg.Password = password
		insts[i], errs[i] = server.Launch(ctx, cfg, synced)
	}
	launch(0)
	if errs[0] == nil {
		var wg sync.WaitGroup
		for i := 1; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				launch(i)
			}()
		}
		wg.Wait()
	}
	stopAll := func() {
		for i := len(insts) - 1; i >= 0; i-- {
			if insts[i] != nil {
				insts[i].Stop()
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		stopAll()
		return nil, err
	}
	if err := waitClusterSize(ctx, insts, clusterWait); err != nil {
		stopAll()
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	db := &DB{nodes: insts, set: server.NewNodes(Name, insts...)}
	addr := insts[0].Addr()
	if kind == "haproxy" {
		backends := make([]string, n)
		for i, in := range insts {
			backends[i] = in.Addr()
		}
		px, err := server.Launch(ctx, server.Config{Flavor: proxy{backends: backends, balance: balance}, Env: server.Env(t.Getenv),
			Engine: Name, Target: t.Name + "-haproxy", Dir: filepath.Join(dir, "proxy")}, dialable)
		if err != nil {
			stopAll()
			return nil, err
		}
		insts = append(insts, px)
		db.proxy, addr = px, px.Addr()
	}
	// Node 1 first (its data dir is the one DBSize measures), the proxy
	// last (Stop stops it first).
	mdb, err := mysql.OpenManaged(ctx, Name, t, server.Manage(insts...), addr)
	if err != nil {
		return nil, err
	}
	db.DB = mdb
	return db, nil
}

// clusterWait bounds the wait for every node to see the whole cluster.
const clusterWait = 60 * time.Second

// rootDB opens a database/sql handle on a node's root account over its
// private socket.
func rootDB(in *server.Instance) (*sql.DB, error) {
	conn, err := gomysql.NewConnector(mysql.RootConfig(in))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

// status reads the global status variables names of a node.
func status(ctx context.Context, db *sql.DB, names ...string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(names, "','")+"')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}

// synced is a node's readiness probe: it accepts queries, is Synced with
// the cluster and ready (wsrep_ready ON).
func synced(ctx context.Context, in *server.Instance) error {
	db, err := rootDB(in)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := status(ctx, db, "wsrep_local_state_comment", "wsrep_ready")
	if err != nil {
		return err
	}
	if st["wsrep_local_state_comment"] != "Synced" || st["wsrep_ready"] != "ON" {
		return fmt.Errorf("node not synced yet (wsrep_local_state_comment %q, wsrep_ready %q)", st["wsrep_local_state_comment"], st["wsrep_ready"])
	}
	return nil
}

// waitClusterSize waits until every node reports a cluster of all of them,
// synced.
func waitClusterSize(ctx context.Context, nodes []*server.Instance, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	want := strconv.Itoa(len(nodes))
	for i, in := range nodes {
		for {
			err := func() error {
				db, err := rootDB(in)
				if err != nil {
					return err
				}
				defer db.Close()
				st, err := status(ctx, db, "wsrep_cluster_size", "wsrep_local_state_comment")
				if err != nil {
					return err
				}
				if st["wsrep_cluster_size"] != want || st["wsrep_local_state_comment"] != "Synced" {
					return fmt.Errorf("wsrep_cluster_size %s, wsrep_local_state_comment %q; want %s and Synced",
						st["wsrep_cluster_size"], st["wsrep_local_state_comment"], want)
				}
				return nil
			}()
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("node %d (%s) did not see the whole cluster within %s: %v%s", i+1, in.Addr(), limit, err,
					"\n"+in.LogTail(10))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// dialable is the proxy's readiness probe: its port accepts connections.
func dialable(ctx context.Context, in *server.Instance) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", in.Addr())
	if err != nil {
		return err
	}
	return c.Close()
}

// Nodes returns the number of nodes the cluster started with.
func (db *DB) Nodes() int { return len(db.nodes) }

// NodeAddr is node i's SQL address (from 0).
func (db *DB) NodeAddr(i int) string { return db.nodes[i].Addr() }

// FollowsWriter reports whether Connect goes through the proxy, whose
// health checks move new connections off a dead node.
func (db *DB) FollowsWriter() bool { return db.proxy != nil }

// Primary is 0: every node takes writes; node 1 is the one scenarios
// write on when they need a single writer.
func (db *DB) Primary() int { return 0 }

// ConnectNode opens a worker connection to node i (from 0) directly,
// bypassing the proxy.
func (db *DB) ConnectNode(ctx context.Context, i int) (engine.Conn, error) {
	if err := db.set.Check(i); err != nil {
		return nil, err
	}
	return db.DB.ConnectAddr(ctx, db.nodes[i].Addr())
}

// KillNode kills node i (from 0) with SIGKILL, its whole process group, as
// a crash would: its death is expected, so Died does not report it unless
// the cluster lost its quorum.
func (db *DB) KillNode(i int) error {
	if err := db.set.Check(i); err != nil {
		return err
	}
	if err := db.set.Kill(i); err != nil {
		return fmt.Errorf("%s: node %d: %w", Name, i+1, err)
	}
	return nil
}

// Died says why the cluster can no longer serve: the proxy died, a node
// died that KillNode did not kill, or so many nodes were killed that the
// rest lost the quorum (half or more gone). One killed node of three is a
// failover, not a death.
func (db *DB) Died() error {
	if db.proxy != nil {
		if err := db.proxy.Died(); err != nil {
			return err
		}
	}
	return db.set.DiedQuorum()
}

// Wrap adds the cluster's death, when it died, to a failed call's error.
func (db *DB) Wrap(err error) error { return engine.WrapDied(err, db) }

// Info is the MySQL engine's, with the cluster's shape: node count, proxy,
// Galera's version and the cluster size node 1 sees.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info, err := db.DB.Info(ctx)
	if err != nil {
		return info, err
	}
	info.Engine = Name
	set := map[string]string{"benchlab.nodes": strconv.Itoa(len(db.nodes)), "benchlab.proxy": "none"}
	if db.proxy != nil {
		set["benchlab.proxy"] = "haproxy " + db.proxy.Addr()
	}
	if r, err := rootDB(db.nodes[0]); err == nil {
		defer r.Close()
		if st, err := status(ctx, r, "wsrep_cluster_size", "wsrep_provider_version"); err == nil {
			maps.Copy(set, st)
		}
	}
	maps.Copy(info.Settings, set)
	info.Build += fmt.Sprintf("; Galera %s", set["wsrep_provider_version"])
	return info, nil
}
