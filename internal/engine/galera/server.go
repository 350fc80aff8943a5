package galera

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
)

// Provider is the Galera library Debian's galera-4 package installs.
const Provider = "/usr/lib/galera/libgalera_smm.so"

// provider is the library the nodes load: Provider (a test points it at a
// missing file).
var provider = Provider

// nodeSettings are the settings each node's my.cnf gets from benchlab: the
// cluster's addresses and what Galera requires of InnoDB and the binlog.
// A target may not give them (OwnedSettings); its wsrep_provider_options
// are appended to benchlab's, and its other wsrep settings (wsrep_sync_wait,
// wsrep_sst_method, ...) come after benchlab's and win.
var nodeSettings = []string{"wsrep_on", "wsrep_cluster_address", "wsrep_node_address", "wsrep_node_incoming_address",
	"wsrep_sst_receive_address", "wsrep_cluster_name", "wsrep_node_name", "wsrep_provider", "wsrep-new-cluster"}

// node is one cluster node's flavor: the MySQL family's lifecycle (MariaDB's
// programs, my.cnf, install-db) with the wsrep settings added to my.cnf and,
// on the first node, --wsrep-new-cluster, which bootstraps the cluster.
type node struct {
	mysql.Family
	// Index is the node's number from 0; cluster names every node's gcomm
	// address (127.0.0.1:port), own is this node's, ist and sst its state
	// transfer ports.
	index     int
	cluster   []string
	ist, sst  int
	name      string // the cluster's name
	sstMethod string
	options   string // the target's wsrep_provider_options, appended
	bootstrap bool
}

// OwnedSettings adds the cluster's address settings to the family's.
func (n node) OwnedSettings() []string {
	return append(n.Family.OwnedSettings(), nodeSettings...)
}

// Command starts the node; the first one with --wsrep-new-cluster.
func (n node) Command(in *server.Instance) (string, []string) {
	prog, args := n.Family.Command(in)
	if n.bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	return prog, args
}

// Init writes the family's my.cnf with the wsrep block after the target's
// config file and before its settings, then initialises the data dir.
func (n node) Init(ctx context.Context, in *server.Instance, extra string) error {
	opts := fmt.Sprintf("gmcast.listen_addr=tcp://%s;ist.recv_addr=%s:%d;gcache.size=64M", n.cluster[n.index], server.Host, n.ist)
	if n.options != "" {
		opts += ";" + n.options
	}
	var b strings.Builder
	if extra != "" {
		b.WriteString(extra + "\n")
	}
	fmt.Fprintf(&b, "# benchlab: galera node %d of %d\n", n.index+1, len(n.cluster))
	for _, kv := range [][2]string{
		{"wsrep_on", "ON"},
		{"wsrep_provider", provider},
		{"wsrep_cluster_name", n.name},
		{"wsrep_cluster_address", "gcomm://" + strings.Join(n.cluster, ",")},
		{"wsrep_node_address", n.cluster[n.index]},
		{"wsrep_node_incoming_address", in.Addr()},
		{"wsrep_node_name", fmt.Sprintf("node%d", n.index+1)},
		{"wsrep_provider_options", `"` + opts + `"`},
		{"wsrep_sst_method", n.sstMethod},
		{"wsrep_sst_receive_address", fmt.Sprintf("%s:%d", server.Host, n.sst)},
		{"binlog_format", "ROW"},
		{"default_storage_engine", "InnoDB"},
		{"innodb_autoinc_lock_mode", "2"},
	} {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
	}
	return n.Family.Init(ctx, in, b.String())
}

// proxy is HAProxy in TCP mode in front of the nodes: with balance
// "first", every connection goes to the first node that passes its health
// check (the others are backups), as a single-writer Galera setup does;
// with "roundrobin", connections are spread over all nodes.
type proxy struct {
	backends []string // the nodes' SQL addresses
	balance  string
}

// Name is "haproxy".
func (proxy) Name() string { return "haproxy" }

// FindBinaries finds haproxy in the install dir (default /usr: Debian's
// haproxy package).
func (proxy) FindBinaries(basedir string) (server.Binaries, error) {
	if basedir == "" {
		basedir = "/usr"
	}
	p := server.FindProgram(basedir, "haproxy")
	if p == "" {
		return server.Binaries{}, fmt.Errorf("%s has no %s/haproxy; install the Debian package haproxy (scripts/install-deps.sh)",
			basedir, server.ProgramDirs)
	}
	return server.Binaries{Basedir: basedir, Server: p}, nil
}

// OwnedSettings: the proxy takes no settings.
func (proxy) OwnedSettings() []string { return nil }

// SettingName keeps the name.
func (proxy) SettingName(name string) string { return name }

// RunAs is haproxy (Debian's package creates the user): under root the
// proxy runs as it, never as root.
func (proxy) RunAs() string { return "haproxy" }

// StopSignal is SIGTERM, HAProxy's immediate stop (SIGUSR1 would wait for
// the clients' sessions to end).
func (proxy) StopSignal() syscall.Signal { return syscall.SIGTERM }

// proxyCfg is the proxy's config file.
func proxyCfg(in *server.Instance) string { return filepath.Join(in.Dir(), "haproxy.cfg") }

// Init writes haproxy.cfg: one TCP listener on the proxy's port, a health
// check of each node every 500 ms (down after 2 failures, up after 2
// passes), and a connection that fails to reach a node sent to the next.
func (p proxy) Init(_ context.Context, in *server.Instance, _ string) error {
	var b strings.Builder
	fmt.Fprintf(&b, `# written by benchlab for target %s
global
  maxconn 4096
defaults
  mode tcp
  timeout connect 2s
  timeout client 1h
  timeout server 1h
  retries 3
  option redispatch
listen galera
  bind %s
  balance %s
`, in.TargetName(), in.Addr(), map[string]string{"first": "first", "roundrobin": "roundrobin"}[p.balance])
	for i, a := range p.backends {
		backup := ""
		if p.balance == "first" && i > 0 {
			backup = " backup"
		}
		fmt.Fprintf(&b, "  server node%d %s check inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions%s\n", i+1, a, backup)
	}
	if err := os.WriteFile(proxyCfg(in), []byte(b.String()), 0o644); err != nil {
		return in.Errorf("haproxy.cfg: %w", err)
	}
	return nil
}

// Command runs haproxy in the foreground (-db), so that benchlab holds its
// process.
func (proxy) Command(in *server.Instance) (string, []string) {
	return in.Binaries().Server, []string{"-f", proxyCfg(in), "-db"}
}
