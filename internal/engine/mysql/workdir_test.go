package mysql_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server"
	"benchlab/internal/server/servertest"
)

// TestOddWorkDir starts MariaDB in a dir whose path has a space and a #
// (PostgreSQL always did; MariaDB failed: install-db splits the paths of
// my.cnf at spaces, and my.cnf reads # as a comment): it serves queries,
// and stopping it removes the plain-path symlink it was reached by, not
// the dir.
func TestOddWorkDir(t *testing.T) {
	getenv, _ := servertest.Env(t)
	drv, _ := engine.Lookup("mariadb")
	dir := filepath.Join(t.TempDir(), "work dir #1", "cell")
	ctx := context.Background()
	db, err := drv.Open(ctx, engine.Target{Name: "odd", Engine: "mariadb", Getenv: getenv}, dir)
	if err != nil {
		t.Fatalf("open in %q: %v", dir, err)
	}
	in := db.(interface{ Instance() *server.Instance }).Instance()
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	got, err := c.Values(ctx, "SELECT @@datadir, @@secure_file_priv")
	c.Close()
	if err != nil {
		t.Error(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	log, _ := os.ReadFile(in.KeptLog)
	m := regexp.MustCompile(`is reached as (\S+) \(a symlink\)`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("the log does not say which plain path reached %q:\n%s", dir, log)
	}
	link := string(m[1])
	if got == nil || filepath.Dir(filepath.Clean(got[0][0])) != link {
		t.Errorf("datadir %v; want it under %s", got, link)
	}
	if _, err := os.Lstat(filepath.Dir(link)); !os.IsNotExist(err) {
		t.Errorf("the symlink's dir %s is left after the server stopped: %v", filepath.Dir(link), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Errorf("the data dir in %q: %v", dir, err)
	}
}
