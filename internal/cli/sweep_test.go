package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// sweepWorkload is a short SQLite workload: a read test and a write test
// at one thread, a few hundred milliseconds each.
const sweepWorkload = `[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1]
read_time = "300ms"
write_time = "300ms"
warmup = "50ms"
postwrite_wait = "0s"
report_interval = "0s"
`

// experimentOf reads experiment id (0: the latest) from the store file.
func experimentOf(t *testing.T, storeFile string, id int64) (store.Experiment, []store.Run) {
	t.Helper()
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp, err := st.Experiment(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	return exp, runs
}

// TestSweepRun runs a spec that sweeps SQLite's cache_size end to end: the
// store holds one target per value, the first as the base, each with its
// value read back from SQLite, and the stored spec the expanded targets
// with their swept marks; the report has the sweep table; rerun runs the
// same targets from the stored spec with the same spec stored again; the
// JSON export names each result's value; plan and compare name the
// values' targets.
func TestSweepRun(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", `name = "cache"
[[target]]
name = "sq"
engine = "sqlite"
[target.sweep]
setting = "cache_size"
values = [-2000, -64000]
`+sweepWorkload)
	code, out, stderr := run(t, Env{}, "plan", sp)
	if code != 0 || !strings.Contains(out, `experiment "cache": 2 target(s), base sq.cache_size=-2000`) {
		t.Errorf("plan exit %d:\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = run(t, Env{}, "run", sp, "--store", storeFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", code, out, stderr)
	}
	want := []string{"sq.cache_size=-2000", "sq.cache_size=-64000"}
	for _, w := range []string{"Sweep of cache_size", "-64000 / -2000", "point-query", "update-index"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	exp, runs := experimentOf(t, storeFile, 1)
	if !slices.Equal(exp.Targets, want) || exp.Base != want[0] {
		t.Errorf("stored targets %v base %q, want %v based on the first", exp.Targets, exp.Base, want)
	}
	if strings.Contains(exp.Spec, "[target.sweep]") || strings.Count(exp.Spec, "[target.swept]") != 2 ||
		!strings.Contains(exp.Spec, "cache_size = -64000") {
		t.Errorf("stored spec should hold the expanded targets:\n%s", exp.Spec)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		got := store.ParseManifest(r.Manifest).Engine.Settings["cache_size"]
		if r.Status != store.StatusOK || "sq.cache_size="+got != r.Target {
			t.Errorf("run %s: status %s, cache_size read back %q", r.Target, r.Status, got)
		}
	}
	code, cmp, _ := run(t, Env{}, "compare", "--store", storeFile)
	if code != 0 || !strings.Contains(cmp, "QPS(target) / QPS(sq.cache_size=-2000)") || !strings.Contains(cmp, "sq.cache_size=-64000") ||
		!strings.Contains(cmp, "Sweep of cache_size") || !strings.Contains(cmp, "best / next") {
		t.Errorf("compare exit %d:\n%s", code, cmp)
	}
	code, js, _ := run(t, Env{}, "report", "--store", storeFile, "--format", "json")
	if code != 0 || !strings.Contains(js, `"sweep_setting": "cache_size"`) || !strings.Contains(js, `"sweep_value": "-64000"`) {
		t.Errorf("json export (exit %d) lacks the sweep's setting and value", code)
	}
	code, out, stderr = run(t, Env{}, "rerun", "--store", storeFile, "--experiment", "1")
	if code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "Sweep of cache_size") {
		t.Errorf("rerun's report lacks the sweep table:\n%s", out)
	}
	exp2, runs2 := experimentOf(t, storeFile, 2)
	if !slices.Equal(exp2.Targets, want) || exp2.Base != want[0] || exp2.Spec != exp.Spec || len(runs2) != 2 {
		t.Errorf("rerun: targets %v base %q, %d runs, same spec %v", exp2.Targets, exp2.Base, len(runs2), exp2.Spec == exp.Spec)
	}
}

// TestSweepFlag runs --sweep on the flag-built target: one target per
// value, named after the engine, and the sweep table in the report.
func TestSweepFlag(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--sweep", "synchronous=off,full", "--tests", "point-query",
		"--table-size", "2000", "--time", "300ms", "--warmup", "50ms", "--report-interval", "0", "--store", storeFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", code, out, stderr)
	}
	exp, runs := experimentOf(t, storeFile, 0)
	if want := []string{"sqlite.synchronous=off", "sqlite.synchronous=full"}; !slices.Equal(exp.Targets, want) || len(runs) != 2 {
		t.Errorf("targets %v (%d runs), want %v", exp.Targets, len(runs), want)
	}
	if !strings.Contains(out, "Sweep of synchronous") || !strings.Contains(out, "full / off") {
		t.Errorf("report lacks the sweep table:\n%s", out)
	}
}

// TestSweepClamped sweeps SQLite's mmap_size past the largest map the
// library allows (SQLITE_MAX_MMAP_SIZE, 0x7fff0000 by default): SQLite
// clamps it, the value read back differs, and the report marks the value
// and says what ran, while the other value is the best by default.
func TestSweepClamped(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--sweep", "mmap_size=0,4000000000", "--tests", "point-query",
		"--table-size", "2000", "--time", "300ms", "--warmup", "50ms", "--report-interval", "0", "--store", storeFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", code, out, stderr)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, w := range []string{"mmap_size = 4000000000 did not take effect: the server runs 2147418112", "4000000000 (!)"} {
		if !strings.Contains(flat, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(stderr+out, "the report flags this value") {
		t.Errorf("the run's log does not say the value did not take effect:\n%s\n%s", out, stderr)
	}
}

// TestSweepBadInput: a bad sweep, in a spec file or in --sweep, exits 2
// with one line naming the field or the flag.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	head := "name = \"x\"\n[[target]]\nname = \"sq\"\nengine = \"sqlite\"\n"
	for _, c := range []struct {
		name string
		spec string
		args []string
		want []string
	}{
		{name: "empty values", spec: head + "[target.sweep]\nsetting = \"cache_size\"\nvalues = []\n",
			want: []string{"target[0].sweep.values", "empty"}},
		{name: "duplicate values", spec: head + "[target.sweep]\nsetting = \"cache_size\"\nvalues = [1, 2, 1]\n",
			want: []string{"target[0].sweep.values", `"1" is given twice`}},
		{name: "engine swept", spec: head + "[target.sweep]\nsetting = \"engine\"\nvalues = [\"sqlite\", \"pebble\"]\n",
			want: []string{"target[0].sweep.setting", "engine is a field of the target"}},
		{name: "fixed in settings", spec: head + "[target.settings]\ncache_size = 5\n[target.sweep]\nsetting = \"cache_size\"\nvalues = [1, 2]\n",
			want: []string{"target[0].sweep.setting", "also fixed in [target.settings]"}},
		{name: "two sweeps", spec: head + "[[target.sweep]]\nsetting = \"cache_size\"\nvalues = [1]\n[[target.sweep]]\nsetting = \"synchronous\"\nvalues = [\"off\"]\n",
			want: []string{"target[0].sweep", "more than one sweep"}},
		{name: "clashing names", spec: head + "[target.sweep]\nsetting = \"cache_size\"\nvalues = [1]\n[[target]]\nname = \"sq.cache_size=1\"\nengine = \"sqlite\"\n",
			want: []string{"target[0].sweep.values[0]", "names must be unique"}},
		{name: "flag with a spec", spec: head, args: []string{"--sweep", "cache_size=1,2"}, want: []string{"--sweep", "only for runs without a spec file"}},
		{name: "flag not key=values", args: []string{"--engine", "sqlite", "--sweep", "cache_size"}, want: []string{"--sweep", "not setting=value"}},
		{name: "flag no values", args: []string{"--engine", "sqlite", "--sweep", "cache_size=,"}, want: []string{"--sweep", "no values"}},
		{name: "flag twice", args: []string{"--engine", "sqlite", "--sweep", "cache_size=1,2", "--sweep", "synchronous=off,full"},
			want: []string{"--sweep", "given 2 times"}},
		{name: "flag duplicate", args: []string{"--engine", "sqlite", "--sweep", "cache_size=1,1"}, want: []string{"--sweep", `"1" is given twice`}},
		{name: "flag field", args: []string{"--engine", "sqlite", "--sweep", "basedir=/a,/b"}, want: []string{"--sweep", "basedir is a field of the target"}},
		{name: "flag bad value", args: []string{"--engine", "sqlite", "--sweep", "synchronous=off,fast"}, want: []string{"--sweep", `"fast"`, "sweep.values[1]"}},
		{name: "flag and set", args: []string{"--engine", "sqlite", "--set", "cache_size=5", "--sweep", "cache_size=1,2"},
			want: []string{"--sweep", "also given with --set"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"run"}
			if c.spec != "" {
				args = append(args, writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_")+".toml", c.spec))
			}
			args = append(append(args, c.args...), "--store", storeFile, "--dry-run")
			code, _, stderr := run(t, Env{}, args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, stderr)
			}
			line := unwrap(stderr)
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if strings.Count(strings.TrimSpace(line), "\n") > 0 {
				t.Errorf("want one line, got %q", stderr)
			}
		})
	}
}
