package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server/servertest"
)

// TestManagedIgnoresPGEnv starts a real PostgreSQL 15 with libpq's PG*
// variables set in the test process, each to a value that would change the
// measured sessions (PGOPTIONS sets work_mem, PGTZ the time zone, PGAPPNAME
// the application name) or break the connection (another database, user,
// host and port, TLS required, a standby wanted, a password or channel
// binding demanded of a server that trusts its local superuser, unparsable
// values): a server benchlab started is reached as benchlab says, with the
// server's own defaults, whatever the user's shell holds.
func TestManagedIgnoresPGEnv(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("*:*:*:*:from-passfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"PGOPTIONS": "-c work_mem=64kB", "PGDATABASE": "nonexistent", "PGUSER": "nobody", "PGPASSWORD": "wrong",
		"PGPASSFILE": passfile, "PGHOST": "192.0.2.1", "PGPORT": "1", "PGSSLMODE": "require", "PGAPPNAME": "from-env",
		"PGTZ": "Asia/Tokyo", "PGTARGETSESSIONATTRS": "standby", "PGCONNECT_TIMEOUT": "soon", "PGSSLCERTMODE": "bogus",
		"PGCHANNELBINDING": "require", "PGREQUIREAUTH": "password", "PGMINPROTOCOLVERSION": "9.9",
		"PGSSLNEGOTIATION": "direct", "PGSSLSNI": "0",
	} {
		t.Setenv(k, v)
	}
	getenv, _ := servertest.Env(t)
	db := enginetest.Open(t, engine.Target{Name: "env", Engine: "postgres", Getenv: getenv})
	ctx := context.Background()
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatalf("worker connection with PG* set: %v", err)
	}
	defer c.Close()
	got, err := c.Values(ctx, "SELECT current_setting('work_mem'), current_database(), current_user, "+
		"current_setting('application_name'), current_setting('TimeZone')")
	if err != nil {
		t.Fatal(err)
	}
	row := got[0]
	want := map[int]string{0: "4MB", 1: postgres.Database, 2: "postgres"}
	for i, name := range []string{"work_mem", "database", "user"} {
		if row[i] != want[i] {
			t.Errorf("%s = %q, want %q (the server's, not the environment's)", name, row[i], want[i])
		}
	}
	if row[3] == "from-env" || row[4] == "Asia/Tokyo" {
		t.Errorf("application_name %q, TimeZone %q: taken from PGAPPNAME and PGTZ", row[3], row[4])
	}
}

// TestManagedPGService: PGSERVICE is the one variable a DSN cannot
// override (pgx reads the service before the DSN applies): with it set,
// opening a managed target fails at once, before any server starts, with an
// error that names it, not a panic or a readiness timeout.
func TestManagedPGService(t *testing.T) {
	t.Setenv("PGSERVICE", "nonexistent")
	getenv, _ := servertest.Env(t)
	drv, _ := engine.Lookup("postgres")
	dir := t.TempDir()
	db, err := drv.Open(context.Background(), engine.Target{Name: "svc", Engine: "postgres", Getenv: getenv}, dir)
	if err == nil {
		db.Close()
		t.Fatal("opened a managed target with PGSERVICE naming no service")
	}
	if !strings.Contains(err.Error(), "unset PGSERVICE") || !strings.Contains(err.Error(), "postgres target svc") {
		t.Errorf("error %q; want one naming the target and PGSERVICE", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d entries left in the cell's dir; want nothing started", len(ents))
	}
}
