package mysql_test

import (
	"testing"

	_ "benchlab/internal/engine/mysql"
	"benchlab/internal/server/servertest"
)

// These tests start real MariaDB 10.11 servers from Debian's mariadb-server
// package (.ci/run installs it) with small memory settings. The "mysql"
// engine runs the same binaries (Debian 12 has no Oracle MySQL server).

func TestMatrix(t *testing.T) {
	servertest.Matrix(t, "mariadb", "10.11.",
		map[string]string{"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_flush_log_at_trx_commit": "1"},
		map[string]string{"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_flush_log_at_trx_commit": "2"})
}

func TestBadSetting(t *testing.T) {
	servertest.BadSetting(t, "mariadb", map[string]string{"no_such_setting": "1"}, "no_such_setting")
}

func TestPortInUse(t *testing.T) { servertest.PortInUse(t, "mysql") }

func TestKilledServer(t *testing.T) { servertest.Killed(t, "mariadb") }

func TestCancel(t *testing.T) { servertest.Cancel(t, "mysql") }

func TestCustomSQL(t *testing.T) { servertest.Custom(t, "mariadb") }

func TestTPCC(t *testing.T) { servertest.TPCC(t, "mariadb") }
