package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	if !regexp.MustCompile(`planned for 1d \d+h\d+m, more than an hour`).MatchString(stderr) ||
		!regexp.MustCompile(`--preset smoke takes \d+m\d+s, --preset credible takes \dh\d+m`).MatchString(stderr) ||
		!strings.Contains(stderr, "--yes") {
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
	if plan < 0 || first < plan || !strings.Contains(out[plan:first], "all 1 run(s): 2s") {
		t.Fatalf("no plan before the run:\n%s", out)
	}
	live := regexp.MustCompile(`(?m)^\[ +\d+s \] point-query thds: 1 .* \| (\d+)% done, eta \d\d:\d\d:\d\d \(in [0-9.]+m?s\)$`).
		FindAllStringSubmatch(out, -1)
	if len(live) < 1 {
		t.Fatalf("no live line with an ETA:\n%s", out)
	}
	if !regexp.MustCompile(`== run 1/1: .* \| \d+% done, eta`).MatchString(out) {
		t.Errorf("run header without progress:\n%s", out)
	}
}
