package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlantedRegression runs SQLite with synchronous=OFF (base) against FULL
// in WAL mode, 6 repeats interleaved: update-index must come out slower and
// significant, point-query (no writes, no fsync) must not, and the gate must
// fail with exit code 3 even after Holm-Bonferroni over the cells.
func TestPlantedRegression(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", `name = "planted"
base = "off"
[[target]]
name = "off"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "off"
[[target]]
name = "full"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "full"
[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1]
read_time = "300ms"
write_time = "300ms"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
repeats = 6
`)
	if code, out, stderr := run(t, Env{}, "run", sp, "--store", storeFile); code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr := run(t, Env{}, "compare", "--store", storeFile, "--fail-on-regression")
	if code != ExitRegression {
		t.Fatalf("compare exit %d, want %d\n%s\n%s", code, ExitRegression, out, stderr)
	}
	line := func(test string) string {
		m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(test) + ` +(\S+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s row in:\n%s", test, out)
		}
		return m[1]
	}
	if got := line("update-index"); !strings.HasSuffix(got, "-") {
		t.Errorf("update-index with synchronous=FULL: %q, want a significant slowdown (-)\n%s", got, out)
	}
	if got := line("point-query"); strings.HasSuffix(got, "-") {
		t.Errorf("point-query does not fsync but was judged slower: %q\n%s", got, out)
	}
	if !strings.Contains(out, "REGRESSION full: update-index") || strings.Contains(out, "REGRESSION full: point-query") {
		t.Errorf("gate output:\n%s", out)
	}
	if !strings.Contains(out, "Holm-Bonferroni over 2 cells") {
		t.Errorf("gate does not say how it controls the family-wise error:\n%s", out)
	}
	code, out, stderr = run(t, Env{}, "compare", "--store", storeFile, "--format", "html")
	if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, "Verdicts cell by cell") ||
		!strings.HasSuffix(strings.TrimSpace(out), "</html>") {
		t.Errorf("compare --format html: exit %d, %.200s ... %s", code, out, stderr)
	}
	// The same verdicts as JSON (format names in any case), with the gate's
	// regressions and its exit code.
	code, out, stderr = run(t, Env{}, "compare", "--store", storeFile, "--format", "JSON", "--fail-on-regression")
	var doc struct {
		Counts   map[string]int
		Verdicts []struct {
			Target, Test, Outcome string
			Ratio                 float64
			P                     *float64
		}
		Regressions []struct{ Test string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitRegression {
		t.Fatalf("compare --format json: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	if len(doc.Verdicts) != 2 || doc.Counts["slower"] < 1 || len(doc.Regressions) != 1 || doc.Regressions[0].Test != "update-index" {
		t.Errorf("compare json: %+v", doc)
	}
	for _, v := range doc.Verdicts {
		if v.Test == "update-index" && (v.Outcome != "slower" || v.Ratio >= 1 || v.P == nil || *v.P > 0.05) {
			t.Errorf("update-index verdict in JSON: %+v", v)
		}
	}
}

func TestCompareBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--alpha", "2"}, {"--min-effect", "0"}, {"--format", "pdf"},
		{"--format", "html", "--fail-on-regression"}} {
		code, _, stderr := run(t, Env{}, append([]string{"compare", "--store", filepath.Join(t.TempDir(), "x.db")}, args...)...)
		if code != ExitUsage || !strings.Contains(stderr, strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: exit %d stderr %q", args, code, stderr)
		}
	}
}
