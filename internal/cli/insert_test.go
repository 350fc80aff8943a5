package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInsertSuiteFromFlags runs a small Insert Benchmark from flags alone and
// checks that the report has its summary and SLA tables.
func TestInsertSuiteFromFlags(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--suite", "insert", "--rows", "4000", "--inserts", "500",
		"--query-time", "1", "--rates", "100", "--tests", "qp100", "--report-interval", "0", "--store", filepath.Join(dir, "r.db"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"Insert Benchmark summary", "l.i0", "l.x", "qp100", "background insert rate and SLA", "target"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SLA missed") {
		t.Errorf("100 rows/s on SQLite missed its SLA:\n%s", out)
	}
	code, _, stderr = run(t, Env{}, "run", "--engine", "sqlite", "--suite", "insert", "--clients", "0", "--store", filepath.Join(dir, "r.db"))
	if code != 2 || !strings.Contains(stderr, "workload.clients") {
		t.Errorf("--clients 0: exit %d, %s", code, stderr)
	}
}
