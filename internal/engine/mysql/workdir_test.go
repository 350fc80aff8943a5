package mysql_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"benchlab/internal/cli"
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

// TestOddWorkDirRun is the probe as a user meets it: `benchlab run
// --workdir` with a space and a # in the path, on a MariaDB target, ends
// ok and leaves no process behind.
func TestOddWorkDirRun(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "odd.toml")
	spec := `name = "odd"
[[target]]
name = "odd"
engine = "mariadb"
[target.settings]
innodb_buffer_pool_size = "32M"
[workload]
suite = "sysbench"
tests = ["point-query"]
table_size = 1000
threads = [1]
read_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
`
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work dir #1")
	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: getenv}
	args := []string{"run", specFile, "--store", filepath.Join(dir, "r.db"), "--workdir", work}
	if code := cli.Main(env, args); code != cli.ExitOK {
		t.Fatalf("benchlab run --workdir %q: exit %d\n%s\n%s", work, code, stdout.String(), stderr.String())
	}
	// The server ran in a dir under work (its cwd), reached by a symlink
	// of a private temporary dir (its command line): neither is left.
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, work) {
			t.Errorf("process %s still runs in %s", filepath.Base(filepath.Dir(p)), cwd)
		}
	}
	links, _ := filepath.Glob(filepath.Join(os.TempDir(), "bl-dir-*", "dir"))
	for _, l := range links {
		if to, err := os.Readlink(l); err == nil && strings.HasPrefix(to, work) {
			t.Errorf("symlink %s to %s left", l, to)
		}
	}
}
