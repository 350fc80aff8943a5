package pgbouncer_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/pgbouncer"
	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/connect"
	_ "benchlab/internal/workload/sysbench"
)

// sessions is the count of sessions the server has established to the
// benchmark database (pg_stat_database.sessions, PostgreSQL 14 and later).
func sessions(t *testing.T, c engine.Conn) int {
	t.Helper()
	rows, err := c.Values(context.Background(), "SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
	if err != nil || len(rows) != 1 {
		t.Fatalf("sessions: %q, %v", rows, err)
	}
	n, err := strconv.Atoi(rows[0][0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPoolerReusesServerSessions opens 40 connections one after another
// through PgBouncer in each pool mode: the server establishes at most the
// pool's few sessions for them (a plain postgres target forks one per
// connection), every connection answers, the target records both
// processes as its own, and the pooler's processes are gone after Close.
func TestPoolerReusesServerSessions(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			drv, _ := engine.Lookup(pgbouncer.Name)
			db, err := drv.Open(ctx, engine.Target{Name: "pooled", Engine: pgbouncer.Name, Getenv: getenv,
				Settings: map[string]string{"pool_mode": mode, "pool_size": "2"}}, dir)
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					db.Close()
				}
			}()
			if pids := db.(engine.Server).PIDs(); len(pids) != 2 {
				t.Fatalf("the target's processes: %v; want the server's and the pooler's", pids)
			}
			info, err := db.Info(ctx)
			if err != nil || info.Client != "fast" {
				t.Fatalf("Info: client %q (notes %q), %v; want the fast path through the pooler", info.Client, info.Notes, err)
			}
			probe := enginetest.Connect(t, db)
			before := sessions(t, probe)
			for i := range 40 {
				c, err := db.(engine.SQL).Connect(ctx)
				if err != nil {
					t.Fatalf("connection %d: %v", i, err)
				}
				if n, err := c.Query(ctx, "SELECT 1"); err != nil || n != 1 {
					t.Fatalf("connection %d: %d rows, %v", i, n, err)
				}
				c.Close()
			}
			// The probe's own server session, and at most pool_size more.
			if grew := sessions(t, probe) - before; grew > 2 {
				t.Errorf("%s pooling: 40 client connections made %d server sessions; want at most the pool's 2", mode, grew)
			}
			probe.Close()
			closed = true
			if err := db.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			servertest.NoProcs(t, dir)
		})
	}
}

// TestConnectSuite runs the connect suite end to end through `benchlab
// run` against PostgreSQL directly and through PgBouncer in both pool
// modes: every run ok, each target's line in the report names its client
// path, and no server or pooler process is left.
func TestConnectSuite(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	src := `name = "pooler"
base = "direct"
[[target]]
name = "direct"
engine = "postgres"
[[target]]
name = "session"
engine = "pgbouncer"
settings = { pool_mode = "session" }
[[target]]
name = "transaction"
engine = "pgbouncer"
client = "driver"
settings = { pool_mode = "transaction" }
[workload]
suite = "connect"
threads = [2]
read_time = "1s"
warmup = "200ms"
repeats = 1
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	db := filepath.Join(dir, "r.db")
	var out, errb bytes.Buffer
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: getenv}
	if code := cli.Main(env, []string{"run", file, "--store", db, "--workdir", work}); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"target direct: postgres", "target session: pgbouncer", "client fast", "client driver"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exps, err := st.Experiments(context.Background())
	if err != nil || len(exps) != 1 {
		t.Fatalf("experiments: %v, %v", exps, err)
	}
	runs, err := st.Runs(context.Background(), exps[0].ID)
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	for _, r := range runs {
		m := store.ParseManifest(r.Manifest)
		want := map[string]string{"direct": "fast", "session": "fast", "transaction": "driver"}[r.Target]
		if r.Status != "ok" || m.Engine.Client != want {
			t.Errorf("run %s: status %s, client %q; want ok, %s (%s)", r.Target, r.Status, m.Engine.Client, want, r.Error)
		}
	}
	servertest.NoProcs(t, work)
}

// TestTransactionPoolingRefusesPrepared: a suite that prepares its
// statements on a transaction-pooled target is refused before anything
// runs (exit 2, naming workload.prepared); sent as text, in session
// pooling, or by a suite that prepares nothing, it is accepted.
func TestTransactionPoolingRefusesPrepared(t *testing.T) {
	for _, c := range []struct {
		suite, mode, extra string
		refused            bool
	}{
		{"sysbench", "transaction", "", true},
		{"sysbench", "transaction", "prepared = false\n", false},
		{"sysbench", "session", "", false},
		{"connect", "transaction", "", false},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "p.toml")
		src := "name = \"p\"\n[[target]]\nname = \"pool\"\nengine = \"pgbouncer\"\nsettings = { pool_mode = \"" + c.mode +
			"\" }\n[workload]\nsuite = \"" + c.suite + "\"\n" + c.extra
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := cli.Main(cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, []string{"plan", file})
		name := c.suite + "/" + c.mode + "/" + strings.TrimSpace(c.extra)
		switch {
		case c.refused && (code != 2 || !strings.Contains(errb.String(), "workload.prepared") ||
			!strings.Contains(errb.String(), "prepared = false")):
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming workload.prepared and the way out", name, code, errb.String())
		case !c.refused && code != 0:
			t.Errorf("%s: exit %d, stderr %q; want it accepted", name, code, errb.String())
		}
	}
}
