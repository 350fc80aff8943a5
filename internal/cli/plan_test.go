package cli

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestLongRunRefused runs examples/sqlite-sync.toml (about 26 hours as
// written) without --yes: the plan is printed, the run is refused with exit
// 2 and advice naming the presets' times, and no store is created; with
// --dry-run the plan alone exits 0.
func TestLongRunRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	code, out, stderr := run(t, Env{}, "run", "../../examples/sqlite-sync.toml", "--store", db)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitUsage, out, stderr)
	}
	if !regexp.MustCompile(`planned for 1d \d+h\d+m, more than an hour`).MatchString(unwrap(stderr)) ||
		!regexp.MustCompile(`--preset smoke takes \d+m\d+s, --preset credible takes \dh\d+m`).MatchString(unwrap(stderr)) ||
		!strings.Contains(unwrap(stderr), "--yes") {
		t.Errorf("refusal does not say how long and how to shorten: %q", stderr)
	}
	for _, w := range []string{"Plan: 2 run(s) = 2 target(s) x 1 repeat(s)", "update-index", "5s+15m", "estimated end:"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan lacks %q:\n%s", w, out)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a store was created for a refused run")
	}
	code, out, _ = run(t, Env{}, "run", "../../examples/sqlite-sync.toml", "--store", db, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "all 2 run(s): 1d ") {
		t.Errorf("--dry-run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a store was created by --dry-run")
	}
	// The same spec with the smoke preset is short: it would run.
	code, out, _ = run(t, Env{}, "run", "../../examples/sqlite-sync.toml", "--store", db, "--dry-run", "--preset", "smoke")
	if code != ExitOK || !strings.Contains(out, "preset smoke") {
		t.Errorf("--dry-run --preset smoke: exit %d\n%s", code, out)
	}
}

// TestPlanAndETA runs a short experiment with live lines: the plan comes
// first, and every live line and run header carries the progress and ETA.
func TestPlanAndETA(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "2", "--warmup", "0", "--report-interval", "1", "--store", filepath.Join(dir, "r.db"))
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	plan := strings.Index(out, "Plan: 1 run(s)")
	first := strings.Index(out, "== run 1/1")
	// 2 s measured and the load of 2,000 rows at the assumed 15,000 rows/s.
	if plan < 0 || first < plan || !strings.Contains(out[plan:first], "all 1 run(s): 2.1s") {
		t.Fatalf("no plan before the run:\n%s", out)
	}
	// The progress ends the live line, or starts its continuation line
	// when the line would pass 120 columns.
	live := regexp.MustCompile(`(?m)^\[ +\d+s \] point-query thds: 1 [^\n]*\s+\| (\d+)% done, eta \d\d:\d\d:\d\d \(in [0-9.]+m?s\)$`).
		FindAllStringSubmatch(out, -1)
	if len(live) < 1 {
		t.Fatalf("no live line with an ETA:\n%s", out)
	}
	if !regexp.MustCompile(`== run 1/1: .* \| \d+% done, eta`).MatchString(out) {
		t.Errorf("run header without progress:\n%s", out)
	}
	// Before the first run the load was estimated at the assumed rate;
	// now the store holds one load of the same engine and suite, whose
	// measured rate the next plan uses.
	if !strings.Contains(out[plan:first], "prepare of sqlite: ~") || !strings.Contains(out[plan:first], "assumed 15k rows/s") {
		t.Errorf("the first plan does not estimate the load at the assumed rate:\n%s", out[plan:first])
	}
	code, out, stderr = run(t, Env{}, "plan", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "2", "--warmup", "0", "--store", filepath.Join(dir, "r.db"))
	if code != ExitOK || !regexp.MustCompile(`prepare of sqlite: ~\S+ at [0-9.]+k? rows/s, median of 1 earlier load\(s\) in the store`).MatchString(out) {
		t.Errorf("plan after a run: exit %d, no measured load rate\n%s\n%s", code, out, stderr)
	}
}

// TestPlanWithNoiseHistory: a gate at 2 repeats over one cell cannot fire on
// repeats alone (2 vs 2 reach p = 1/3 at best, Welch's t-test needs 3 a
// side, 8 s steps are needed for within-run evidence), so plan refuses it
// with exit 2 on an empty store.
// After one A/A experiment of the same workload with three identical
// targets of 6 repeats (one configuration of 18 runs: 17 degrees of freedom
// of history, 10 needed), plan reads the history, prints the smallest
// slowdown the gate can call per test, and accepts the gate.
//
// What a busy machine changes, accounted for rather than skipped: a 100 ms
// step that completes no operation (a stall) teaches the history nothing,
// so the history has one degree of freedom less per stall; plan must then
// say what the runs that completed left (history of 10-17 df: accepted;
// fewer: refused, naming the missing history). A noisy history makes the
// slowdown the gate can call larger, never the gate refused: its t-test
// has no floor. At a load average of 24-33 about 20% of 300 ms steps
// stalled; a refusal takes 8 stalls in 18, a binomial tail of 0.04 at 20%
// and 3e-4 at 10%, and even then the test still checks the refusal.
func TestPlanWithNoiseHistory(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	workload := `[workload]
suite = "sysbench"
tests = ["point-query"]
table_size = 1000
threads = [1]
read_time = "100ms"
write_time = "100ms"
warmup = "50ms"
postwrite_wait = "0s"
report_interval = "0s"
interleave = "off"
`
	target := func(name string) string { return "[[target]]\nname = \"" + name + "\"\nengine = \"sqlite\"\n" }
	gated := writeFile(t, dir, "gated.toml", "name = \"g\"\n"+target("a")+target("b")+workload+"repeats = 2\n[gate]\nfail_on_regression = true\n")
	code, out, stderr := run(t, Env{}, "plan", gated, "--store", db)
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "--store") {
		t.Fatalf("plan with a missing store: exit %d\n%s\n%s", code, out, stderr)
	}
	// The same spec in a directory without a store: refused, naming the
	// missing history.
	empty := t.TempDir()
	code, _, stderr = run(t, Env{Getenv: func(k string) string {
		if k == "BENCHLAB_STORE" {
			return filepath.Join(empty, "none.db")
		}
		return ""
	}}, "plan", gated)
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "workload.repeats") || !strings.Contains(unwrap(stderr), "no noise history") {
		t.Errorf("plan without history: exit %d, stderr %q; want 2 naming workload.repeats and the missing history", code, stderr)
	}

	aa := writeFile(t, dir, "aa.toml", "name = \"aa\"\n"+target("a")+target("b")+target("c")+workload+"repeats = 6\n")
	if code, out, stderr := run(t, Env{}, "run", aa, "--store", db, "--yes"); code != ExitOK {
		t.Fatalf("A/A run: exit %d\n%s\n%s", code, out, stderr)
	}
	learned := func() int {
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return learnableRuns(context.Background(), t, st, 1, "point-query")
	}()
	code, out, stderr = run(t, Env{}, "plan", gated, "--store", db)
	df := learned - 1
	if learned < 18 {
		t.Logf("%d of the A/A experiment's 18 steps completed an operation (stalls on a busy machine): %d df of history", learned, df)
	}
	if df < 10 {
		if code != ExitUsage || !strings.Contains(out, "the gate cannot rely on history") ||
			!strings.Contains(unwrap(stderr), "workload.repeats") {
			t.Errorf("plan with %d df of history: exit %d, want 2 refusing the gate for too little history\n%s\n%s", df, code, out, stderr)
		}
	} else {
		if code != ExitOK {
			t.Fatalf("plan with a history of %d df: exit %d, want 0\n%s\n%s", df, code, out, stderr)
		}
		if !regexp.MustCompile(`point-query @1 +s=[0-9.]+% \(`+strconv.Itoa(df)+` df\): marks callable [0-9.]+%, 90%: [0-9.]+%; gate callable [0-9.]+%`).MatchString(out) ||
			!strings.Contains(out, "the gate can fire with this history on every compared test") {
			t.Errorf("plan does not state the history's power (%d df):\n%s", df, out)
		}
	}
	// A store whose history was never learned (copied by other means,
	// written by an older benchlab): plan learns it, as report does, and
	// says the same.
	forget, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DELETE FROM noise", "DELETE FROM noise_learned"} {
		if _, err := forget.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	forget.Close()
	if code2, out2, stderr2 := run(t, Env{}, "plan", gated, "--store", db); code2 != code || historySection(out2) != historySection(out) {
		t.Errorf("plan on a store that forgot its history: exit %d, want %d with the history learned again\n%s\n%s\nbefore:\n%s", code2, code, out2, stderr2, out)
	}
}

// historySection is plan's noise-history section: from its heading to
// the time plan that follows it, whose estimated end is a clock time and
// differs between two calls a second apart.
func historySection(planOut string) string {
	i := strings.Index(planOut, "\nnoise history")
	if i < 0 {
		return ""
	}
	s := planOut[i:]
	if j := strings.Index(s, "\nPlan:"); j >= 0 {
		s = s[:j]
	}
	return s
}
