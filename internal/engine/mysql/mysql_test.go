package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
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

// TestSettleUnprivileged runs a sysbench test selection through `benchlab
// run` on an existing MariaDB (dsn) as a user with every right on the
// benchmark database but neither PROCESS (SHOW ENGINE INNODB STATUS, which
// the purge wait reads) nor SUPER (SET GLOBAL, which the dirty-page flush
// needs). The postload cleanup analyzes the table and leaves both out; the
// run succeeds and says so: warnings in its log and one report line per
// part (an unprivileged user's run must say what it did not do).
func TestSettleUnprivileged(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "owner", Engine: "mariadb", Getenv: getenv})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	root, err := sql.Open("mysql", mysql.RootConfig(in).FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{"CREATE USER 'plain'@'127.0.0.1'", "GRANT ALL ON sbtest.* TO 'plain'@'127.0.0.1'"} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dsn := fmt.Sprintf("plain@tcp(127.0.0.1:%d)/sbtest", in.Port)
	out, rep, lines := servertest.RunUnprivileged(t, "mariadb", dsn, getenv, " left out: ")
	for _, want := range []string{"warning: postload: purge wait left out: user plain lacks the PROCESS privilege",
		"warning: postload: dirty-page flush left out: user plain may not SET GLOBAL"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's log lacks %q:\n%s", want, out)
		}
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "- plain: postload: purge wait left out") ||
		!strings.HasPrefix(lines[1], "- plain: postload: dirty-page flush left out") {
		t.Errorf("report lines on the cleanup: %q; want one for the purge wait and one for the flush\n%s", lines, rep)
	}
}

func TestTextStatements(t *testing.T) { servertest.TextStatements(t, "mariadb") }

// TestEngineStats measures 500 one-row autocommit inserts and checks the
// status counters per insert: one INSERT statement, one handler write
// (the row; MariaDB 10.11 has no Innodb_rows_inserted) and one handler
// commit (within 2%, as the report counts per operation over the sampled
// seconds), and some redo log bytes. A step
// whose counters cannot be read (the administrative session killed) still
// succeeds. The reads' own temporary tables and scans are taken off.
func TestEngineStats(t *testing.T) {
	servertest.EngineStats(t, "mariadb", map[string]servertest.Range{
		"status.Com_insert":            {Min: 0.98, Max: 1.02},
		"status.Handler_write":         {Min: 0.98, Max: 1.02},
		"status.Handler_commit":        {Min: 0.98, Max: 1.02},
		"status.Innodb_os_log_written": {Min: 50, Max: 5000},
	}, []string{"status.Created_tmp_tables", "status.Select_scan", "status.Handler_read_rnd_next"},
		func(t *testing.T, c engine.Conn) {
			t.Helper()
			ctx := context.Background()
			ids, err := c.Values(ctx, "SELECT id FROM information_schema.processlist WHERE command = 'Sleep' AND id <> CONNECTION_ID()")
			if err != nil || len(ids) == 0 {
				t.Fatalf("the administrative session: %v %v", ids, err)
			}
			for _, id := range ids {
				if _, err := c.Exec(ctx, "KILL "+id[0]); err != nil {
					t.Fatal(err)
				}
			}
		})
}

// TestInternals checks InnoDB's per-second series on a server whose
// io_capacity is at its least: checkpoint age, dirty pages and history
// list length as gauges, pages flushed, redo bytes and inserts as rates.
func TestInternals(t *testing.T) {
	servertest.Internals(t, "mariadb", map[string]string{"innodb_io_capacity": "100"},
		[]string{"status.Innodb_checkpoint_age", "status.Innodb_buffer_pool_pages_dirty", "status.Innodb_history_list_length",
			"status.Threads_connected"},
		[]string{"status.Innodb_buffer_pool_pages_flushed", "status.Innodb_os_log_written", "status.Com_insert",
			"status.Innodb_lsn_current", "status.Innodb_log_waits", "status.Innodb_row_lock_waits"},
		[]string{"status.Com_insert", "status.Innodb_os_log_written"})
}

// TestSweepRemovedVariable sweeps innodb_buffer_pool_instances, which
// MariaDB 10.11 accepts in its configuration but removed ("does nothing
// now", says its log): the run exits 2 naming the sweep's setting.
func TestSweepRemovedVariable(t *testing.T) {
	servertest.SweepUnknownSetting(t, "mariadb", "innodb_buffer_pool_instances", []string{"1", "4"})
}
