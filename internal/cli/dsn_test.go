package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// TestExistingServerByDSN runs against a PostgreSQL server that benchlab did
// not start for the run (a DSN target, no lifecycle): the run is ok, the
// server keeps running afterwards, and the DSN's password appears nowhere
// in the output, the manifest or the stored spec.
func TestExistingServerByDSN(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	getenv := envOf(map[string]string{"BENCHLAB_SERVER_LOGS": filepath.Join(dir, "logs")})
	// The "existing" server: one the postgres engine starts and keeps
	// running for the whole test, outside the experiment.
	drv, _ := engine.Lookup("postgres")
	db, err := drv.Open(context.Background(), engine.Target{Name: "existing", Engine: "postgres", Getenv: getenv}, filepath.Join(dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := db.(interface{ Instance() *server.Instance }).Instance()
	secret := in.Password()
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", secret, in.Port)
	sp := writeFile(t, dir, "dsn.toml", `name = "dsn"
[[target]]
name = "ext"
engine = "postgres"
dsn = "`+dsn+`"
`+pointQueryWorkload)
	runs, out := runStored(t, Env{Getenv: getenv}, dir, sp)
	if in.Died() != nil {
		t.Errorf("the existing server stopped with the run: %v", in.Died())
	}
	st, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp, _ := st.Experiment(context.Background(), 0)
	if len(runs) != 1 || runs[0].Status != store.StatusOK || !strings.HasPrefix(runs[0].Version, "15.") {
		t.Fatalf("runs %+v", runs)
	}
	for what, text := range map[string]string{"output": out, "manifest": runs[0].Manifest, "stored spec": exp.Spec} {
		if strings.Contains(text, secret) {
			t.Errorf("the DSN's password is in the %s", what)
		}
	}
	if !strings.Contains(runs[0].Manifest, "existing server (dsn)") {
		t.Errorf("manifest does not say the server was an existing one")
	}
	// The same server through sysbench's connection flags, without a spec
	// file: the engine follows from --pgsql-*.
	db2 := filepath.Join(dir, "r2.db")
	code, out2, stderr := run(t, Env{}, "run", "--pgsql-host", "127.0.0.1", "--pgsql-port", fmt.Sprint(in.Port),
		"--pgsql-user", "postgres", "--pgsql-password", secret, "--pgsql-db", "postgres", "--tests", "point-query",
		"--table-size", "2000", "--time", "1", "--warmup", "0.2", "--report-interval", "0", "--store", db2)
	if code != ExitOK {
		t.Fatalf("run --pgsql-*: exit %d\n%s\n%s", code, out2, stderr)
	}
	st2, err := store.Open(db2)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	runs2, _ := st2.Runs(context.Background(), 0)
	exp2, _ := st2.Experiment(context.Background(), 0)
	if len(runs2) != 1 || runs2[0].Status != store.StatusOK || runs2[0].Engine != "postgres" ||
		!strings.Contains(exp2.Spec, "127.0.0.1:"+fmt.Sprint(in.Port)+"/postgres") {
		t.Fatalf("run --pgsql-*: runs %+v\nspec %s", runs2, exp2.Spec)
	}
	for what, text := range map[string]string{"output": out2 + stderr, "manifest": runs2[0].Manifest, "stored spec": exp2.Spec} {
		if strings.Contains(text, secret) {
			t.Errorf("--pgsql-password is in the %s", what)
		}
	}
}

// TestExistingMariaDBByDSN runs against a MariaDB server by a DSN with a
// password: the password is not stored, and a rerun takes it from
// MYSQL_PWD (without it the rerun is refused by the server), which comes
// through the injected environment (Env.Getenv), not the process's.
func TestExistingMariaDBByDSN(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"BENCHLAB_SERVER_LOGS": filepath.Join(dir, "logs")}
	ctx := context.Background()
	drv, _ := engine.Lookup("mariadb")
	db, err := drv.Open(ctx, engine.Target{Name: "existing", Engine: "mariadb", Getenv: envOf(vars)}, filepath.Join(dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := db.(interface{ Instance() *server.Instance }).Instance()
	// As root over the server's private socket: the benchmark account may
	// not grant.
	root, err := sql.Open("mysql", mysql.RootConfig(in).FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const secret = "s3cr3t-pw"
	for _, q := range []string{"CREATE USER 'pwuser'@'127.0.0.1' IDENTIFIED BY '" + secret + "'",
		"GRANT ALL ON sbtest.* TO 'pwuser'@'127.0.0.1'"} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sp := writeFile(t, dir, "dsn.toml", fmt.Sprintf(`name = "dsn"
[[target]]
name = "ext"
engine = "mariadb"
dsn = "pwuser:%s@tcp(127.0.0.1:%d)/sbtest"
`, secret, in.Port)+pointQueryWorkload)
	runs, out := runStored(t, Env{Getenv: envOf(vars)}, dir, sp)
	if strings.Contains(out+runs[0].Manifest, secret) {
		t.Error("the DSN's password is in the output or the manifest")
	}
	storeFile := filepath.Join(dir, "r.db")
	if code, _, stderr := run(t, Env{Getenv: envOf(vars)}, "rerun", "--store", storeFile); code == 0 {
		t.Errorf("rerun without MYSQL_PWD connected with a stored password? %s", stderr)
	}
	// In the process's environment MYSQL_PWD is nothing to benchlab: the
	// rerun still has no password.
	t.Setenv("MYSQL_PWD", secret)
	if code, _, stderr := run(t, Env{Getenv: envOf(vars)}, "rerun", "--store", storeFile); code == 0 {
		t.Errorf("rerun read MYSQL_PWD from the process's environment instead of the injected one: %s", stderr)
	}
	vars["MYSQL_PWD"] = secret
	if code, out, stderr := run(t, Env{Getenv: envOf(vars)}, "rerun", "--store", storeFile); code != 0 {
		t.Errorf("rerun with MYSQL_PWD: exit %d\n%s\n%s", code, out, stderr)
	}
}
