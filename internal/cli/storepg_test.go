package cli_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
	"benchlab/internal/server/servertest"
	"benchlab/internal/spec/spectest"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
)

// TestPostgresStoreGoneMidRun closes a shared PostgreSQL store to every
// connection while a measured step runs (as the step starts): the step's
// result and the run's end are kept in a journal under the state dir and
// the run exits 1 naming it; once the store takes connections again, the
// next command stores them, says so and removes the journal.
func TestPostgresStoreGoneMidRun(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	getenv, _ := servertest.Env(t)
	db := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres", Getenv: getenv})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	port, pw := in.Port, in.Password()
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", pw, port, postgres.Database)
	admin, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", pw, port))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	allow := func(on bool) {
		if _, err := admin.Exec(fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", postgres.Database, on)); err != nil {
			t.Error(err)
		}
		if !on {
			if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, postgres.Database); err != nil {
				t.Error(err)
			}
		}
	}
	dir := t.TempDir()
	sp := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(sp, []byte(spectest.CommandHead("store-gone", spectest.Target("a", "sqlite"), 1, "1s")+`[[workload.command.steps]]
name = "gone"
parse = "none"
argv = ["true"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := servertest.NewTrigger("gone: true", func() { allow(false) })
	var errb bytes.Buffer
	code := cli.Main(cli.Env{Stdout: out, Stderr: &errb, Getenv: os.Getenv}, []string{"run", sp, "--store", dsn})
	pending := filepath.Join(state, "benchlab", "pending")
	if all := strings.ReplaceAll(out.String()+errb.String(), "\n  ", " "); code != cli.ExitFailure || !strings.Contains(all, pending) {
		t.Fatalf("exit %d, want %d naming a journal under %s\n%s\n%s", code, cli.ExitFailure, pending, out, errb.String())
	}

	allow(true)
	var rout, rerr bytes.Buffer
	code = cli.Main(cli.Env{Stdout: &rout, Stderr: &rerr, Getenv: os.Getenv}, []string{"runs", "--store", dsn})
	if code != 0 || !strings.Contains(rerr.String(), "stored 2 result(s)") {
		t.Errorf("runs once the store is back: exit %d, want 0 saying it stored the journal\n%s\n%s", code, rout.String(), rerr.String())
	}
	r := storetest.OneRun(t, dsn, false)
	if r.Status != store.StatusFailed || len(r.Results) != 1 || r.Results[0].Test != "gone" || r.Results[0].Status != store.StatusOK {
		t.Errorf("stored run %s (%s), results %+v; want failed, with the step's result ok", r.Status, r.Error, r.Results)
	}
	if left, _ := filepath.Glob(filepath.Join(pending, "*")); len(left) > 0 {
		t.Errorf("journals left after the replay: %v", left)
	}
}
