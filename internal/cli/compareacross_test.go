package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/results/resultstest"
)

// TestCompareAcrossExperiments compares two planted experiments of one
// test through cli.Main. The values are fixed (no run measures them), so
// the verdicts are deterministic: 5 runs at 1000±2% against 5 at 800±2%
// (x0.80) give every base run above every other, Mann-Whitney's exact
// floor p = 2/C(10,5) = 0.0079 < alpha 0.01, one cell (no correction
// bites), and a ratio far beyond the 5% threshold; 5 against 5 identical
// values are never called.
func TestCompareAcrossExperiments(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	at := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	wobble := func(level float64) []float64 {
		return []float64{level * 1.01, level * 0.98, level, level * 1.02, level * 0.99}
	}
	ids := resultstest.Plant(t, db,
		resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: "3.45", Created: at,
			Test: "point-query", Threads: 1, Values: wobble(1000)},
		resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: "3.46", Created: at.Add(24 * time.Hour),
			Test: "point-query", Threads: 1, Values: wobble(800)},
		resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: "3.46", Created: at.Add(48 * time.Hour),
			Test: "update-index", Threads: 1, Values: wobble(500)},
		resultstest.Experiment{Name: "pgbench", Target: "pg", Engine: "postgres", Version: "16.4", Created: at,
			Test: "point-query", Threads: 1, Metric: "tps", Values: wobble(900)},
		resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: "3.47", Created: at.Add(72 * time.Hour),
			Test: "point-query", Threads: 1, Values: wobble(1000)},
	)
	exp := func(i int) string { return fmt.Sprintf("experiment:%d", ids[i]) }
	code, out, errs := run(t, Env{}, "compare", "--store", db, "--base", exp(0), "--vs", exp(1)+" version:3.*",
		"--fail-on-regression", "--threshold", "0.1")
	if code != ExitRegression {
		t.Fatalf("exit %d, want %d (a 20%% slowdown gated at 10%%)\n%s\n%s", code, ExitRegression, out, errs)
	}
	for _, want := range []string{"base " + exp(0) + ": 5 runs of target lite (sqlite 3.45)", "point-query @1",
		"slower", "REGRESSION " + exp(1) + " version:3.*: point-query @1 threads: x0.800"} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Two others at once: each judged against the base.
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", exp(0), "--vs", exp(1), "--vs", exp(0)+",threads:1")
	if code != ExitUsage || !strings.Contains(errs, "selects run") {
		t.Errorf("a run on two sides: exit %d, stderr %q, want 2 naming the run", code, errs)
	}
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", exp(0), "--vs", exp(1), "--vs", "version:3.47")
	// Two cells under Benjamini-Hochberg need p < 0.005 for a lone change,
	// below 5 against 5 runs' floor: compare says so rather than call it.
	if code != ExitOK || !strings.Contains(out, "verdicts over 2 cells") || !strings.Contains(unwrap(out), "6 repeats per side needed") {
		t.Errorf("two others: exit %d, want 0, two verdicts and the repeats they need\n%s\n%s", code, out, errs)
	}
	// Without the gate the slowdown exits 0; a cell one side holds is
	// listed, not dropped.
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", exp(0), "--vs", "version:3.46")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Cells on one side only") || !strings.Contains(out, "update-index @1") {
		t.Errorf("update-index, held by one side only, is not listed:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--base", "experiment:nosuch", "--vs", exp(1)}, `flag --base: selector "experiment:nosuch" matches no stored result`},
		{[]string{"--base", exp(0), "--vs", "target:nosuch"}, `flag --vs: selector "target:nosuch" matches no stored result`},
		{[]string{"--base", exp(0), "--vs", exp(3)}, "incomparable units"},
		{[]string{"--base", "engine:*", "--vs", exp(1)}, "matches runs of 2 targets"},
		{[]string{"--base", exp(0), "--vs", exp(0)}, "given twice"},
		{[]string{"--base", "colour:red", "--vs", exp(0)}, `flag --base: selector "colour:red": term "colour:red": unknown key`},
		{[]string{"--vs", exp(0)}, "flag --vs: needs --base"},
		{[]string{"--base", exp(0), "--vs", exp(1), "--experiment", "3"}, "flag --experiment"},
	} {
		code, out, errs := run(t, Env{}, append([]string{"compare", "--store", db}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(unwrap(errs), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 with %q\n%s", tc.args, code, errs, tc.want, out)
		}
	}
}

// TestCompareImportedWithNative sets an imported sysbench file against
// benchlab's own SQLite run of the same test at the same threads: one
// cell, both in queries per second, judged (whatever the verdict: the two
// are different engines, and one imported run against one native run
// cannot be called without a history).
func TestCompareImportedWithNative(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "spec.toml", `name = "native"
[[target]]
name = "lite"
engine = "sqlite"
[workload]
tests = ["point-query"]
table_size = 1000
threads = [2]
read_time = "1s"
warmup = "0s"
`)
	if code, out, errs := run(t, Env{}, "run", sp, "--store", db, "--yes"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	file := filepath.Join("..", "importer", "testdata", "sysbench-point-select.txt")
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, Env{}, "import", "--store", db, "--tool", "sysbench", "--test", "point-query",
		"--engine", "postgres", "--experiment-name", "pg-sysbench", "--target", "pg="+file); code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := run(t, Env{}, "compare", "--store", db, "--base", "experiment:pg-sysbench", "--vs", "experiment:native")
	if code != ExitOK {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"imported from sysbench output", "point-query @2"} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The cell is judged, unless the native run completed no operation (a
	// loaded machine can stall a 1-second step): then it is named as not
	// judged, never judged as a ratio of 0.
	judged := strings.Contains(unwrap(out), "verdicts over 1 cells")
	stalled := strings.Contains(unwrap(out), "not judged: point-query @2 on experiment:native") &&
		strings.Contains(unwrap(out), "verdicts over 0 cells")
	if judged == stalled {
		t.Errorf("want the cell judged, or named as stalled and not judged; judged %v, stalled %v:\n%s", judged, stalled, out)
	}
	// pgbench's tps of a test named alike at the same 2 clients is refused,
	// not set against sysbench's qps.
	pgb := filepath.Join("..", "importer", "testdata", "pgbench-tpcb.1.txt")
	if code, out, errs := run(t, Env{}, "import", "--store", db, "--tool", "pgbench", "--test", "point-query",
		"--engine", "postgres", "--experiment-name", "pgbench", "--target", "pg="+pgb); code != ExitOK {
		t.Fatalf("import pgbench: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", "experiment:pg-sysbench", "--vs", "experiment:pgbench")
	if want := "point-query @2 is measured in tps and in the base (experiment:pg-sysbench) in qps: incomparable units"; code != ExitUsage ||
		!strings.Contains(unwrap(errs), want) {
		t.Errorf("pgbench tps against sysbench qps: exit %d, stderr %q, want exit 2 with %q\n%s", code, errs, want, out)
	}
	// fio's JSON imports too, and report reads it.
	fioFile := filepath.Join("..", "importer", "testdata", "fio-randread-2jobs.json")
	if code, out, errs := run(t, Env{}, "import", "--store", db, "--tool", "fio", "--target", "disk="+fioFile); code != ExitOK {
		t.Fatalf("import fio: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := run(t, Env{}, "report", "--store", db); code != ExitOK || !strings.Contains(out, "fio-randread-2jobs") {
		t.Errorf("report of the fio import: exit %d\n%s\n%s", code, out, errs)
	}
}
