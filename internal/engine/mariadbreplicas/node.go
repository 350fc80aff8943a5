package mariadbreplicas

import (
	"context"
	"fmt"
	"strings"

	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
)

// nodeSettings are what benchlab sets in every node's my.cnf for
// replication; a target may not give them.
var nodeSettings = []string{"server_id", "server-id", "log_bin", "log-bin", "log_slave_updates", "log-slave-updates",
	"gtid_strict_mode", "gtid-strict-mode", "read_only", "read-only", "relay_log", "relay-log", "skip_slave_start",
	"skip-slave-start", "rpl_semi_sync_master_enabled", "rpl-semi-sync-master-enabled", "rpl_semi_sync_slave_enabled",
	"rpl-semi-sync-slave-enabled"}

// node is one server of the cluster: the MySQL family's lifecycle with
// the replication lines added to my.cnf.
type node struct {
	mysql.Family
	id       int // server_id
	replica  bool
	semisync bool
}

// OwnedSettings adds the replication settings to the family's.
func (n node) OwnedSettings() []string {
	return append(n.Family.OwnedSettings(), nodeSettings...)
}

// Init writes the family's my.cnf with the replication block after the
// target's config file and before its settings: a binlog with GTIDs on
// every node (a replica may become the primary), replicas read-only and
// not replicating until benchlab points them at the primary, and the
// replica side of semi-sync (built into MariaDB 10.11); the primary's
// side goes on once the replicas follow it.
func (n node) Init(ctx context.Context, in *server.Instance, extra string) error {
	var b strings.Builder
	if extra != "" {
		b.WriteString(extra + "\n")
	}
	role := "primary"
	if n.replica {
		role = "replica"
	}
	onOff := map[bool]string{true: "ON", false: "OFF"}
	fmt.Fprintf(&b, "# benchlab: %s, server_id %d\n", role, n.id)
	for _, kv := range [][2]string{
		{"server_id", fmt.Sprint(n.id)},
		{"log_bin", "mysql-bin"},
		{"relay_log", "relay-bin"},
		{"binlog_format", "ROW"},
		{"log_slave_updates", "ON"},
		{"gtid_strict_mode", "ON"},
		{"skip_slave_start", "ON"},
		{"read_only", onOff[n.replica]},
		{"rpl_semi_sync_master_enabled", "OFF"}, // on once the replicas follow (settle)
		{"rpl_semi_sync_slave_enabled", onOff[n.semisync]},
	} {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
	}
	return n.Family.Init(ctx, in, b.String())
}
