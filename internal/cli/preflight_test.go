package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/disktest"
)

// TestEarlyValidation checks that what used to fail late fails first: an
// engine that cannot run the suite, a results database that cannot be
// written, a DSN nothing answers at, a work dir that cannot be written.
// Each exits 2 with one line naming the cause, and no store is created.
func TestEarlyValidation(t *testing.T) {
	dir := t.TempDir()
	// A port nothing listens on: one the kernel gave and took back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"kv engine, sql suite", []string{"--engine", "pebble", "--suite", "sysbench"}, "target[0].engine: pebble is a kv engine; the sysbench suite runs on sql engines: galera"},
		{"sql engine, kv suite", []string{"--engine", "sqlite", "--suite", "kv"}, "the kv suite runs on kv engines"},
		{"store dir missing", []string{"--engine", "sqlite", "--store", filepath.Join(dir, "no", "r.db")}, "directory " + filepath.Join(dir, "no") + " does not exist"},
		{"store dir not writable", []string{"--engine", "sqlite", "--store", "/sys/r.db"}, "directory /sys is not writable"},
		{"store is a dir", []string{"--engine", "sqlite", "--store", dir}, "is a directory"},
		{"dsn refused", []string{"--pgsql-host", "127.0.0.1", "--pgsql-port", itoa(closed)}, "no server answers at 127.0.0.1:" + itoa(closed)},
		{"workdir under a file", []string{"--engine", "sqlite", "--workdir", filepath.Join(file, "w")}, "is not a directory"},
		{"workdir not writable", []string{"--engine", "sqlite", "--workdir", "/sys/w"}, "/sys is not writable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--store", db, "--tests", "point-query", "--time", "1"}, c.args...)
			code, out, stderr := run(t, Env{}, args...)
			if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) || strings.Count(strings.TrimSpace(unwrap(stderr)), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line naming %q", code, stderr, ExitUsage, c.want)
			}
			if strings.Contains(out, "Plan:") {
				t.Errorf("the plan was printed before the error:\n%s", out)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a store was created")
				os.Remove(db)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestEarlyValidationServers checks the managed-server checks before a run:
// a port a target names that something already listens on, and an install
// dir whose programs are there but do not run. Each exits 2 naming the
// field, before any store exists.
func TestEarlyValidationServers(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := itoa(l.Addr().(*net.TCPAddr).Port)
	// An install dir with initdb and postgres that cannot run (not
	// executables of this machine, as a build for another one).
	broken := filepath.Join(dir, "pg")
	if err := os.MkdirAll(filepath.Join(broken, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(broken, "bin", p), []byte("\x7fELF not really\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sp := writeFile(t, dir, "broken.toml", "name = \"b\"\n[[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \""+broken+
		"\"\n[workload]\ntests = [\"point-query\"]\n")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"port in use", []string{"--engine", "postgres", "--set", "port=" + busy, "--tests", "point-query"},
			[]string{"target[0].settings.port: port " + busy + " on 127.0.0.1 is in use", "pick another port"}},
		{"install does not run", []string{sp},
			[]string{"target[0].basedir: " + broken + ": " + filepath.Join(broken, "bin", "postgres") + " --version failed",
				"exec format error"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(t, Env{}, append([]string{"run", "--store", db, "--time", "1"}, c.args...)...)
			if code != ExitUsage || strings.Count(strings.TrimSpace(unwrap(stderr)), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line", code, stderr, ExitUsage)
			}
			for _, w := range c.want {
				if !strings.Contains(unwrap(stderr), w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(out, "Plan:") {
				t.Errorf("the plan was printed before the error:\n%s", out)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a store was created")
				os.Remove(db)
			}
		})
	}
}

// TestDiskSpaceCheck checks the free-space check against the suite's own
// estimate of its data: a sysbench load of 100,000 rows (about 76 MiB at
// the estimate's 800 B a row) is refused on a 2 MiB filesystem with exit 2,
// the numbers, the field that sizes it and the override, before any store
// exists; so is a load larger than any disk on the temp dir; with
// --skip-space-check the plan goes on (shown with --dry-run), its load
// estimated from the rows.
func TestDiskSpaceCheck(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	check := func(args []string, want ...string) {
		t.Helper()
		code, out, stderr := run(t, Env{}, append([]string{"run", "--engine", "sqlite", "--tests", "point-query", "--time", "1",
			"--store", db}, args...)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(unwrap(stderr)), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line", args, code, stderr, ExitUsage)
		}
		for _, w := range want {
			if !strings.Contains(unwrap(stderr), w) {
				t.Errorf("%v: stderr %q lacks %q", args, stderr, w)
			}
		}
		if strings.Contains(out, "Plan:") {
			t.Errorf("%v: the plan was printed before the error:\n%s", args, out)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%v: a store was created", args)
			os.Remove(db)
		}
	}
	// Larger than any disk: 10^12 rows x 800 B = 728 TiB.
	check([]string{"--tables", "1000", "--table-size", "1000000000"}, "disk space: one run's data needs about 727.6 TiB for target(s) sqlite",
		"sysbench suite: 1000 table(s) x 1000000000 rows (tables, table_size) x ~800 B", "free", "--skip-space-check")
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--time", "1", "--store", db,
		"--tables", "1000", "--table-size", "1000000000", "--skip-space-check", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "prepare of sqlite: ~") || !strings.Contains(out, "load 1000000M rows") {
		t.Errorf("--skip-space-check --dry-run: exit %d\n%s\n%s", code, out, stderr)
	}
	disk := disktest.Small(t, "size=2m")
	check([]string{"--table-size", "100000", "--workdir", disk}, "needs about 76.3 MiB", disk+" has ", "free")
}
