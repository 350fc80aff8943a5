package mysql_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"benchlab/internal/engine"
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

// TestSettledAfterLoad checks that a test selection settles the fresh load
// before its first read: after the postload cleanup InnoDB's dirty pages are
// flushed down to 1% of the buffer pool and purge has worked off the undo
// history, so neither competes with the measured reads.
func TestSettledAfterLoad(t *testing.T) {
	ctx := context.Background()
	state := func(t *testing.T, c engine.Conn) (dirty, total, history int64) {
		t.Helper()
		get := func(sql string) [][]string {
			v, err := c.Values(ctx, sql)
			if err != nil || len(v) == 0 {
				t.Fatalf("%s: %v %v", sql, v, err)
			}
			return v
		}
		dirty, _ = strconv.ParseInt(get("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")[0][1], 10, 64)
		total, _ = strconv.ParseInt(get("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_total'")[0][1], 10, 64)
		st := get("SHOW ENGINE INNODB STATUS")[0]
		m := regexp.MustCompile(`History list length (\d+)`).FindStringSubmatch(st[len(st)-1])
		if m == nil || total == 0 {
			t.Fatalf("no history list length or buffer pool size in the status")
		}
		history, _ = strconv.ParseInt(m[1], 10, 64)
		return dirty, total, history
	}
	servertest.Settled(t, "mariadb", func(t *testing.T, c engine.Conn) {
		dirty, total, history := state(t, c)
		t.Logf("after the load: %d of %d pages dirty, history list length %d", dirty, total, history)
		// The server keeps its temporary files beside its data dir, not in
		// the /tmp that other servers share.
		v, err := c.Values(ctx, "SELECT @@tmpdir, @@datadir")
		if err != nil || len(v) != 1 {
			t.Fatalf("tmpdir: %v %v", v, err)
		}
		if tmp, data := filepath.Clean(v[0][0]), filepath.Clean(v[0][1]); tmp != filepath.Join(filepath.Dir(data), "mysql-tmp") {
			t.Errorf("tmpdir %s, want mysql-tmp beside the data dir %s", tmp, data)
		}
	}, func(t *testing.T, c engine.Conn) {
		dirty, total, history := state(t, c)
		t.Logf("after postload: %d of %d pages dirty, history list length %d", dirty, total, history)
		if dirty*100 > total || history > 1000 {
			t.Errorf("after postload: %d of %d pages dirty, history %d; want at most 1%% and 1000", dirty, total, history)
		}
	})
}
