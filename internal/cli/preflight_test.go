package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
		{"kv engine, sql suite", []string{"--engine", "pebble", "--suite", "sysbench"}, "target[0].engine: pebble is a kv engine; the sysbench suite runs on sql engines: mariadb, mysql, postgres, sqlite"},
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
			if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
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
