package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLinesFit120 runs what a user reads on a terminal: a run on SQLite with
// its plan and live lines (a long test name, the progress and ETA), the
// report, compare with its power lines, plan, runs, list and every
// command's help. No line passes 120 columns.
func TestLinesFit120(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "w.toml", `name = "width"
[[target]]
name = "normal-sync-target"
engine = "sqlite"
[[target]]
name = "full-sync-target"
engine = "sqlite"
[target.settings]
synchronous = "full"
[workload]
tests = ["point-query", "read-only_range=10000"]
table_size = 20000
threads = [1]
read_time = "2s"
write_time = "1s"
warmup = "0s"
report_interval = "1s"
interleave = "off"
`)
	outputs := map[string]string{}
	cmd := func(args ...string) {
		t.Helper()
		code, out, stderr := run(t, Env{}, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		outputs[strings.Join(args, " ")] = out + stderr
	}
	cmd("run", sp, "--store", db, "--color", "never")
	cmd("report", "--store", db, "--color", "never")
	cmd("compare", "--store", db, "--color", "never")
	cmd("plan", sp, "--store", db)
	cmd("run", sp, "--store", db, "--dry-run")
	cmd("runs", "--store", db)
	cmd("list")
	root := newRoot(Env{})
	for _, c := range root.Commands() {
		cmd(c.Name(), "--help")
	}
	cmd("--help")
	run := outputs["run "+sp+" --store "+db+" --color never"]
	if !strings.Contains(run, "read-only_range=10000 thds: 1") || !strings.Contains(run, "% done, eta") {
		t.Fatalf("no live line with progress to check:\n%s", run)
	}
	if !strings.Contains(unwrap(outputs["compare --store "+db+" --color never"]), "verdicts power with repeats alone") {
		t.Fatalf("no power line to check:\n%s", outputs["compare --store "+db+" --color never"])
	}
	for name, out := range outputs {
		for _, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > lineWidth {
				t.Errorf("%s: line of %d columns: %q", name, n, l)
			}
		}
	}
}

// TestFitLine fits the widest live lines (many threads, a long test name,
// three roles) to 120 columns: the progress goes under the test's name,
// nothing is lost, a line that fits is left alone.
func TestFitLine(t *testing.T) {
	for _, l := range []string{
		"[ 123s ] read-only_range=10000 thds: 64 tps: 123456.78 qps: 1234567.89 lat (ms,99.9%): 12345.678 max: 12345.678 " +
			"err/s: 0.00 | 56% done, eta 07:35:40 (in 1d 1h42m)",
		"[  60s ] qr1000 query: 12345.6/s max 12.345 ms err 0 insert: 1000.0 rows/s max 1.234 ms err 0 delete: 1000.0 rows/s " +
			"max 1.234 ms err 0 (warm-up) | 56% done, eta 07:35:40 (in 1h2m)",
		"[   1s ] point-query thds: 1 tps: 12345.67 qps: 12345.67 lat (ms,95%): 0.081 max: 1.234 err/s: 0.00 | 12% done, eta 09:12:30 (in 2s)",
	} {
		got := fitLine(l)
		lines := strings.Split(got, "\n")
		if len(lines) < 2 {
			t.Errorf("not broken: %q", got)
		}
		for _, g := range lines {
			if len(g) > lineWidth {
				t.Errorf("line of %d columns: %q", len(g), g)
			}
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(strings.TrimLeft(last, " "), "| 56% done") &&
			!strings.HasPrefix(strings.TrimLeft(last, " "), "| 12% done") {
			t.Errorf("progress not on its own line: %q", got)
		}
		if !strings.HasPrefix(lines[len(lines)-1], "         ") {
			t.Errorf("progress not under the test name: %q", lines[len(lines)-1])
		}
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(l), " ") {
			t.Errorf("fitting changed the words:\n%s\n%s", l, got)
		}
	}
	short := "[   1s ] point-query thds: 1 tps: 1.00 | 12% done"
	if fitLine(short) != short {
		t.Errorf("a line that fits was changed: %q", fitLine(short))
	}
}

// TestErrorsFit120 extends the 120-column rule to stderr: the errors of bad
// input (flags, spec fields, engines) wrap at spaces, and still name the
// flag or field and what was expected, exit 2.
func TestErrorsFit120(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	badIsolation := writeFile(t, dir, "iso.toml", `name = "iso"
[[target]]
name = "a-target-with-a-rather-long-name"
engine = "sqlite"
[workload]
suite = "tpcc"
[workload.tpcc]
isolation = "snapshot-isolation-please"
`)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--engine", "sqlite", "--suite", "tpcc", "--trx_level", "read-committed-snapshot"},
			[]string{`"--trx_level"`, "want RC, RR or SER", "benchlab run --help"}},
		{[]string{"run", "--engine", "sqlite", "--suite", "tpcc", "--isolation", "snapshot-isolation-please"},
			[]string{`"--isolation"`, "read-committed, repeatable-read or serializable"}},
		{[]string{"run", badIsolation}, []string{"workload.tpcc.isolation", "read-committed, repeatable-read or serializable"}},
		{[]string{"run", "--engine", "no-such-engine-of-a-long-name", "--suite", "sysbench"}, []string{"no-such-engine-of-a-long-name", "sqlite"}},
		{[]string{"run", "--engine", "sqlite", "--suite", "insert", "--clients", "0"}, []string{"workload.insert.clients"}},
	} {
		code, _, stderr := run(t, Env{}, append(c.args, "--store", db)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", c.args, code, stderr)
		}
		for _, l := range strings.Split(stderr, "\n") {
			if n := len([]rune(l)); n > lineWidth {
				t.Errorf("%v: stderr line of %d columns: %q", c.args, n, l)
			}
		}
		for _, w := range c.want {
			if !strings.Contains(unwrap(stderr), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
	}
}
