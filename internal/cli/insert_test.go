package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"benchlab/internal/store"
)

// TestInsertSuiteFromFlags runs a small Insert Benchmark from flags alone and
// checks that the report has its summary and SLA tables. It paces with the
// "even" schedule (--pacing), which catches up after a stall of a loaded
// machine, so that the SLA check below tests the flags and the report, not
// the machine's idle time; a 3-second query step leaves the SLA a margin of
// 150 ms of lag at its end (a 1-second step missed it once on a loaded
// machine).
func TestInsertSuiteFromFlags(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--suite", "insert", "--rows", "4000", "--inserts", "500",
		"--query-time", "3", "--rates", "100", "--pacing", "even", "--tests", "qp100", "--report-interval", "0", "--store", filepath.Join(dir, "r.db"))
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
	st, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs(context.Background(), 0)
	res, _ := st.Results(context.Background(), runs[0].ID, false)
	st.Close()
	for _, r := range res {
		// 4000 rows of about 60 bytes: the data dir holds at least 200 kB.
		if r.Test == "l.i0" && r.Role.Name == "insert" && (r.DBBytes < 200_000 || r.Facts["db_bytes"] < 160_000) {
			t.Errorf("l.i0 stored a data dir size of %d bytes and a database size of %v", r.DBBytes, r.Facts["db_bytes"])
		}
	}
	code, _, stderr = run(t, Env{}, "run", "--engine", "sqlite", "--suite", "insert", "--clients", "0", "--store", filepath.Join(dir, "r.db"))
	if code != 2 || !strings.Contains(unwrap(stderr), "workload.insert.clients") {
		t.Errorf("--clients 0: exit %d, %s", code, stderr)
	}
}

// TestSuiteFlags checks the flags that suites declare (workload.Options.Flags):
// they reach the chosen suite's options, bad values and another suite's
// flags are usage errors naming the flag.
func TestSuiteFlags(t *testing.T) {
	f := newRunFlags(pflag.NewFlagSet("run", pflag.ContinueOnError))
	if err := f.fs.Parse([]string{"--engine", "sqlite", "--suite", "insert", "--rates", "7,9", "--query-time", "3", "--pacing", "even"}); err != nil {
		t.Fatal(err)
	}
	s, err := f.buildSpec()
	if err != nil {
		t.Fatal(err)
	}
	stored := s.TOML()
	for _, want := range []string{"rates = [7, 9]", `query_time = "3s"`, `pacing = "even"`} {
		if !strings.Contains(stored, want) {
			t.Errorf("spec lacks %q:\n%s", want, stored)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "sqlite", "--warehouses", "2"}, "flag --warehouses: an option of the tpcc suite, but this run's suite is sysbench"},
		{[]string{"--engine", "sqlite", "--suite", "insert", "--rates", "x"}, "rates"},
		{[]string{"--engine", "sqlite", "--suite", "tpcc", "--warehouses", "0"}, "workload.tpcc.warehouses"},
	} {
		code, _, stderr := run(t, Env{}, append([]string{"run", "--store", filepath.Join(t.TempDir(), "r.db")}, c.args...)...)
		if code != 2 || !strings.Contains(unwrap(stderr), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestInsertBenchmarkCompare runs a small Insert Benchmark on two SQLite
// targets, 2 repeats each, and compares them: compare's verdicts table has
// a row per measured step (the load steps judged on inserts per second,
// the query step on queries per second), the relative table comes first
// with the suite's per-metric title, the JSON form has the same cells, and
// a gate its repeats cannot fire is refused (exit 2) naming the repeats
// needed.
func TestInsertBenchmarkCompare(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", `name = "ib"
base = "off"
`+syncTargets+`[workload]
suite = "insert"
repeats = 2
`)
	code, out, stderr := run(t, Env{}, "run", sp, "--rows", "4000", "--inserts", "500", "--query-time", "1", "--rates", "100",
		"--pacing", "even", "--tests", "qp100", "--report-interval", "0", "--store", storeFile)
	if code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = run(t, Env{}, "compare", "--store", storeFile)
	if code != 0 {
		t.Fatalf("compare exit %d\n%s\n%s", code, out, stderr)
	}
	rel := strings.Index(out, "Insert Benchmark relative throughput: IPS(target) / IPS(off) for l.i0, l.x; QPS(target) / QPS(off) for qp100")
	verdicts := strings.Index(out, "Verdicts cell by cell (throughput)")
	if rel < 0 || verdicts < rel {
		t.Errorf("compare output lacks the relative table before the verdicts:\n%s", out)
	}
	for _, step := range []string{"l.i0", "l.x", "qp100"} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(step) + ` @1 +full `).MatchString(out) {
			t.Errorf("compare has no verdict row for %s:\n%s", step, out)
		}
	}
	code, out, stderr = run(t, Env{}, "compare", "--store", storeFile, "--format", "json")
	var doc struct {
		Verdicts []struct{ Target, Test, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("compare --format json: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	var tests []string
	for _, v := range doc.Verdicts {
		tests = append(tests, v.Target+":"+v.Test)
	}
	if got := strings.Join(tests, " "); got != "full:l.i0 full:l.x full:qp100" {
		t.Errorf("JSON verdicts for %s; want full's l.i0, l.x and qp100", got)
	}
	code, _, stderr = run(t, Env{}, "compare", "--store", storeFile, "--fail-on-regression")
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "--fail-on-regression") || !strings.Contains(unwrap(stderr), "repeats per target") {
		t.Errorf("a gate 2 repeats cannot fire: exit %d, want %d naming the repeats needed\n%s", code, ExitUsage, stderr)
	}
}
