package cli

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportMachineReadable runs an experiment and reads it back as CSV
// (per result and per second) and JSON through `benchlab report`.
func TestReportMachineReadable(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	// 3 s, not 1: engine internals are read once a second, and a 1 s step
	// on a loaded machine can end before the first read.
	sp := writeFile(t, dir, "s.toml", "name = \"m\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+
		strings.Replace(pointQueryWorkload, `read_time = "1s"`, `read_time = "3s"`, 1))
	if code, _, stderr := run(t, Env{}, "run", sp, "--store", db); code != ExitOK {
		t.Fatalf("run: %d %s", code, stderr)
	}
	code, out, stderr := run(t, Env{}, "report", "--store", db, "--format", "csv")
	lines, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != ExitOK || err != nil || len(lines) < 3 || lines[0][0] != "experiment" {
		t.Fatalf("csv: exit %d %v %s\n%s", code, err, stderr, out)
	}
	code, out, _ = run(t, Env{}, "report", "--store", db, "--format", "csv", "--series")
	series, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != ExitOK || err != nil || len(series) < 2 || series[0][8] != "sec" {
		t.Fatalf("series csv: exit %d %v\n%s", code, err, out)
	}
	code, out, _ = run(t, Env{}, "report", "--store", db, "--format", "json")
	var doc struct{ Results []map[string]any }
	if code != ExitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Results) != len(lines)-1 {
		t.Fatalf("json: exit %d, %d results for %d csv lines", code, len(doc.Results), len(lines)-1)
	}
	if code, _, stderr := run(t, Env{}, "report", "--store", db, "--series"); code != ExitUsage || !strings.Contains(unwrap(stderr), "--series") {
		t.Errorf("--series with text: exit %d %q, want %d naming the flag", code, stderr, ExitUsage)
	}
	// SQLite's WAL gauges per second, as the JSON's engine_series hold them.
	code, out, _ = run(t, Env{}, "report", "--store", db, "--format", "csv", "--engine-series")
	engine, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != ExitOK || err != nil || len(engine) < 2 || engine[0][8] != "name" || !strings.HasPrefix(engine[1][8], "sqlite.") {
		t.Fatalf("engine series csv: exit %d %v\n%s", code, err, out)
	}
	var inJSON int
	for _, r := range doc.Results {
		for _, x := range asSlice(r["engine_series"]) {
			inJSON += len(asSlice(x.(map[string]any)["points"]))
		}
	}
	if inJSON != len(engine)-1 {
		t.Errorf("engine series: %d points in JSON, %d lines in CSV", inJSON, len(engine)-1)
	}
	if code, _, stderr := run(t, Env{}, "report", "--store", db, "--engine-series"); code != ExitUsage ||
		!strings.Contains(unwrap(stderr), "--engine-series") {
		t.Errorf("--engine-series with text: exit %d %q, want %d naming the flag", code, stderr, ExitUsage)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
