package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/postgres"
	"benchlab/internal/server/servertest"
)

// These tests start real PostgreSQL 15 servers from Debian's postgresql-15
// package (.ci/run installs it) with small memory settings.

func TestMatrix(t *testing.T) {
	servertest.Matrix(t, "postgres", "15.",
		map[string]string{"shared_buffers": "32MB", "synchronous_commit": "on"},
		map[string]string{"shared_buffers": "64MB", "synchronous_commit": "off"})
}

// TestInterleavedEfficiency: two servers interleaved each get their own
// CPU and IO per operation.
func TestInterleavedEfficiency(t *testing.T) {
	servertest.InterleavedEfficiency(t, "postgres",
		map[string]string{"shared_buffers": "32MB", "synchronous_commit": "on"},
		map[string]string{"shared_buffers": "32MB", "synchronous_commit": "off"})
}

func TestBadSetting(t *testing.T) {
	servertest.BadSetting(t, "postgres", map[string]string{"shared_buffers": "lots"}, `"shared_buffers"`)
}

func TestPortInUse(t *testing.T) { servertest.PortInUse(t, "postgres") }

func TestKilledServer(t *testing.T) { servertest.Killed(t, "postgres") }

func TestCancel(t *testing.T) { servertest.Cancel(t, "postgres") }

// TestServerPinned starts a server with cpus = "1": the postmaster and every
// backend it forks may run on CPU 1 only (pinning must hold for the whole
// process tree, or the server competes with the client it was kept from).
func TestServerPinned(t *testing.T) {
	getenv, _ := servertest.Env(t)
	db := enginetest.Open(t, engine.Target{Name: "pinned", Engine: "postgres", CPUs: "1", Getenv: getenv})
	roots := db.(engine.Server).PIDs()
	if len(roots) == 0 {
		t.Fatal("no server process")
	}
	procs := append([]int(nil), roots...)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent pid is the 2nd field after the command in parentheses.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(roots[0]) {
			procs = append(procs, pid)
		}
	}
	if len(procs) < 3 {
		t.Errorf("found %d server processes, want the postmaster and its background processes", len(procs))
	}
	for _, pid := range procs {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue // exited meanwhile
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != "1" {
				t.Errorf("server process %d may run on CPUs %s, want 1", pid, strings.TrimSpace(v))
			}
		}
	}
}

func TestCustomSQL(t *testing.T) { servertest.Custom(t, "postgres") }

func TestTPCC(t *testing.T) { servertest.TPCC(t, "postgres") }

// TestSettledAfterLoad checks that a test selection settles the fresh load
// before its first read: right after the load no page of the tables is
// all-visible (the first reads would set hint bits and dirty pages) and
// nothing was vacuumed or analyzed (autovacuum would come during the
// measured read); after the postload cleanup every page is all-visible,
// both tables are vacuumed and analyzed, and a checkpoint has run.
func TestSettledAfterLoad(t *testing.T) {
	ctx := context.Background()
	// The last checkpoint's position comes from the control file, which a
	// checkpoint writes before CHECKPOINT returns; pg_stat_bgwriter's
	// counters are reported by the checkpointer after it wakes the waiting
	// backend, so reading them races with the report.
	state := func(t *testing.T, c engine.Conn) (visible, pages, vacuumed, analyzed, checkpointLSN int) {
		t.Helper()
		v, err := c.Values(ctx, `SELECT sum(c.relallvisible), sum(c.relpages),
			count(s.last_vacuum), count(s.last_analyze), (SELECT pg_wal_lsn_diff(checkpoint_lsn, '0/0')::bigint FROM pg_control_checkpoint())
			FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname LIKE 'sbtest%'`)
		if err != nil {
			t.Fatal(err)
		}
		n := make([]int, 5)
		for i := range n {
			if n[i], err = strconv.Atoi(v[0][i]); err != nil {
				t.Fatalf("%v: %v", v, err)
			}
		}
		return n[0], n[1], n[2], n[3], n[4]
	}
	var before int
	servertest.Settled(t, "postgres", func(t *testing.T, c engine.Conn) {
		var visible, vacuumed int
		visible, _, vacuumed, _, before = state(t, c)
		if visible != 0 || vacuumed != 0 {
			t.Errorf("after the load: %d all-visible pages, %d tables vacuumed; want a fresh state (0, 0)", visible, vacuumed)
		}
	}, func(t *testing.T, c engine.Conn) {
		visible, pages, vacuumed, analyzed, after := state(t, c)
		t.Logf("after postload: %d of %d pages all-visible, %d tables vacuumed, %d analyzed, last checkpoint at WAL byte %d (was %d)",
			visible, pages, vacuumed, analyzed, after, before)
		if pages == 0 || visible < pages || vacuumed != 2 || analyzed != 2 || after <= before {
			t.Errorf("after postload: %d of %d pages all-visible, %d vacuumed, %d analyzed, checkpoint at %d (was %d); want all, 2, 2, a later checkpoint",
				visible, pages, vacuumed, analyzed, after, before)
		}
	})
}

// TestSettleUnprivileged runs a sysbench test selection through `benchlab
// run` on an existing server (dsn) as a role that is neither superuser nor
// a member of pg_checkpoint: the postload cleanup vacuums the tables but may
// not CHECKPOINT. The run still succeeds, and says what it left out: a
// warning in its log, a note in its manifest, and one line in the report
// (an unprivileged user's run must say what it did not do). The superuser's run of the same spec has no such note.
func TestSettleUnprivileged(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "owner", Engine: "postgres", Getenv: getenv})
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr, err := c.Values(ctx, "SELECT host(inet_server_addr()), inet_server_port()")
	if err != nil {
		t.Fatal(err)
	}
	// Every account of a server benchlab starts logs in with a password.
	for _, q := range []string{"CREATE ROLE plain LOGIN PASSWORD 'plain-pw'", "GRANT CREATE ON SCHEMA public TO plain"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dsn := fmt.Sprintf("postgres://plain:plain-pw@%s:%s/sbtest?sslmode=disable", addr[0][0], addr[0][1])
	out, rep, lines := servertest.RunUnprivileged(t, "postgres", dsn, getenv, "CHECKPOINT left out")
	if !strings.Contains(out, "warning: postload: CHECKPOINT left out: user plain") {
		t.Errorf("the run's log does not warn that the checkpoint was left out:\n%s", out)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "- plain: postload: CHECKPOINT left out: user plain") {
		t.Errorf("report lines on the checkpoint: %q; want one note naming the target, the step and the user\n%s", lines, rep)
	}
	// The vacuum still ran as the plain role, which owns the tables.
	v, err := c.Values(ctx, "SELECT count(last_vacuum) FROM pg_stat_user_tables WHERE relname = 'sbtest1'")
	if err != nil || v[0][0] != "1" {
		t.Errorf("sbtest1 vacuumed: %v %v; want once", v, err)
	}
}

func TestTextStatements(t *testing.T) { servertest.TextStatements(t, "postgres") }

// TestEngineStats measures 500 one-row autocommit inserts and checks
// the counters per insert: one commit and one row inserted (within the
// second that backends may hold their counts back, see DB.ReadStats), a
// few WAL records (heap, index, commit) of some bytes, one transaction id
// and as many WAL bytes by the exact positions. A step whose counters
// cannot be read (the administrative session terminated) still succeeds.
func TestEngineStats(t *testing.T) {
	servertest.EngineStats(t, "postgres", map[string]servertest.Range{
		"pg_stat_database.xact_commit":  {Min: 0.9, Max: 1.1},
		"pg_stat_database.tup_inserted": {Min: 0.9, Max: 1.1},
		"pg_stat_wal.wal_records":       {Min: 1, Max: 10},
		"pg_stat_wal.wal_bytes":         {Min: 50, Max: 5000},
		"pg_exact.xids_assigned":        {Min: 0.98, Max: 1.02},
		"pg_exact.wal_insert_bytes":     {Min: 50, Max: 5000},
	}, nil, func(t *testing.T, c engine.Conn) {
		t.Helper()
		n, err := c.Query(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
		if err != nil || n == 0 {
			t.Fatalf("terminating the administrative session: %d sessions, %v; want it", n, err)
		}
	})
}

// TestInternals checks PostgreSQL's per-second series: backends by wait
// event type, autovacuum workers and dirty buffers (pg_buffercache,
// installed on the server benchlab started) as gauges, WAL bytes,
// commits and checkpoint buffers as rates.
func TestInternals(t *testing.T) {
	servertest.Internals(t, "postgres", nil,
		[]string{"pg_activity.autovacuum_workers", "pg_activity.active_backends", "pg_wait.CPU", "pg_wait.IO",
			"pg_buffercache.dirty_buffers"},
		[]string{"pg_stat_wal.wal_bytes", "pg_exact.wal_insert_bytes", "pg_stat_bgwriter.buffers_checkpoint",
			"pg_stat_bgwriter.buffers_backend", "pg_stat_database.xact_commit"},
		[]string{"pg_exact.wal_insert_bytes"})
}
