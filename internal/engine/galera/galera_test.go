package galera_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/galera"
	"benchlab/internal/server/servertest"
)

// These tests start real MariaDB 10.11 Galera clusters from Debian's
// mariadb-server and galera-4 packages (scripts/install-deps.sh installs
// them, and haproxy) with tiny buffer pools.

// small are the nodes' settings: small memory, quick start.
var small = map[string]string{"innodb_buffer_pool_size": "32M", "innodb_log_file_size": "16M",
	"innodb_flush_log_at_trx_commit": "2", "performance_schema": "OFF"}

// target is a cluster target of n nodes with the small settings and extra.
func target(t *testing.T, n int, extra map[string]string) engine.Target {
	getenv, _ := servertest.Env(t)
	if keep := os.Getenv("GALERA_TEST_LOGS"); keep != "" {
		// Debugging: keep the nodes' logs where the caller says.
		getenv = func(k string) string {
			if k == "BENCHLAB_SERVER_LOGS" {
				return keep
			}
			return ""
		}
	}
	set := map[string]string{galera.SettingNodes: fmt.Sprint(n)}
	for k, v := range small {
		set[k] = v
	}
	for k, v := range extra {
		set[k] = v
	}
	return engine.Target{Name: "g", Engine: galera.Name, Settings: set, Getenv: getenv}
}

// procs counts the processes of each program name whose command line
// mentions dir (the cluster's own: other tests' servers may run at once).
func procs(dir string) map[string]int {
	out := map[string]int{}
	for _, pid := range servertest.Procs(dir) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil {
			out[strings.TrimSpace(string(comm))]++
		}
	}
	return out
}

// TestCluster starts three nodes behind HAProxy, checks that every node
// sees a cluster of three, that a row written on node 1 is read on node 3
// and through the proxy, that the target's processes are all measured, and
// that Close leaves no mariadbd or haproxy and no file in the cell's dir
// but what the runner removes.
func TestCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	d, _ := engine.Lookup(galera.Name)
	tg := target(t, 3, nil)
	if err := d.(engine.TargetChecker).CheckTarget(tg); err != nil {
		t.Fatal(err)
	}
	edb, err := d.Open(ctx, tg, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := edb.(*galera.DB)
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	if db.Nodes() != 3 {
		t.Fatalf("nodes %d, want 3", db.Nodes())
	}
	if got := len(db.PIDs()); got != 3+1 {
		t.Errorf("PIDs %v: want the 3 nodes and the proxy", db.PIDs())
	}
	// Nobody else gets in (as for a single server): under root every process runs as an
	// unprivileged user, and each node (the joiners, whose accounts came
	// by node 1's state transfer, too) refuses root and benchlab over TCP
	// without the password.
	for _, pid := range db.PIDs() {
		if uid := procUID(t, pid); os.Geteuid() == 0 && uid == 0 {
			t.Errorf("process %d runs as root", pid)
		}
	}
	for i := range db.Nodes() {
		for _, u := range []string{"root", "benchlab"} {
			h, err := sql.Open("mysql", u+"@tcp("+db.NodeAddr(i)+")/")
			if err != nil {
				t.Fatal(err)
			}
			if err := h.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "Access denied") {
				t.Errorf("node %d, user %s without a password: %v; want access denied", i+1, u, err)
			}
			h.Close()
		}
	}
	info, err := db.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings["wsrep_cluster_size"] != "3" {
		t.Errorf("wsrep_cluster_size %q, want 3 (settings %v)", info.Settings["wsrep_cluster_size"], info.Settings)
	}
	c1, err := db.ConnectNode(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 42)"} {
		if _, err := c1.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c3, err := db.ConnectNode(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	// wsrep_sync_wait makes the read wait for what the cluster committed.
	if _, err := c3.Exec(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		t.Fatal(err)
	}
	v, err := c3.Values(ctx, "SELECT v FROM t WHERE id = 1")
	if err != nil || len(v) != 1 || v[0][0] != "42" {
		t.Fatalf("node 3 reads %v (%v), want 42", v, err)
	}
	cp, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := cp.Values(ctx, "SELECT @@port")
	cp.Close()
	if err != nil || port[0][0] != strings.Split(db.NodeAddr(0), ":")[1] {
		t.Errorf("through the proxy: port %v (%v), want node 1's %s (balance first)", port, err, db.NodeAddr(0))
	}
	if db.Died() != nil {
		t.Fatalf("died: %v", db.Died())
	}
	// One node killed is a failover, not the target's death; two of three
	// is the loss of quorum.
	if err := db.KillNode(2); err != nil {
		t.Fatal(err)
	}
	// The killed node ends when the kernel gets to it: wait for it (a
	// hang guard, not a window), where a fixed 300 ms may fall short on a
	// loaded machine.
	for end := time.Now().Add(time.Minute); procs(dir)["mariadbd"] > 2 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.Died(); err != nil {
		t.Errorf("one node of three killed: Died says %v", err)
	}
	if got := procs(dir); got["mariadbd"] != 2 || got["haproxy"] != 1 {
		t.Errorf("processes of the cluster after one node's kill: %v; want 2 mariadbd and 1 haproxy", got)
	}
	c1.Close()
	c3.Close()
	if err := db.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	closed = true
	// No mariadbd or haproxy of this cluster is left (other tests' may run
	// at the same time: processes are matched by the cluster's dir).
	if got := procs(dir); len(got) > 0 {
		t.Errorf("processes left after Close: %v", got)
	}
	servertest.NoProcs(t, dir)
}

// TestBadTargets checks that bad node counts and proxies are refused
// before anything starts, naming the setting.
func TestBadTargets(t *testing.T) {
	d, _ := engine.Lookup(galera.Name)
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{galera.SettingNodes: "0"}, "settings.nodes: \"0\""},
		{map[string]string{galera.SettingNodes: "6"}, "want 1 to 5"},
		{map[string]string{galera.SettingNodes: "three"}, "settings.nodes"},
		{map[string]string{galera.SettingProxy: "nginx"}, "settings.proxy: \"nginx\""},
		{map[string]string{galera.SettingBalance: "leastconn"}, "settings.proxy_balance"},
		{map[string]string{"port": "3306"}, "settings.port"},
		{map[string]string{"wsrep_cluster_address": "gcomm://10.0.0.1"}, "settings.wsrep_cluster_address: benchlab sets it"},
		{map[string]string{"default_storage_engine": "RocksDB"}, "settings.default_storage_engine: Galera replicates InnoDB tables only"},
		{map[string]string{"rocksdb_block_cache_size": "1G"}, "settings.rocksdb_block_cache_size: Galera"},
	} {
		err := d.(engine.TargetChecker).CheckTarget(engine.Target{Name: "g", Engine: galera.Name, Settings: c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.set, err, c.want)
		}
	}
}

// procUID reads the real uid of process pid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}
