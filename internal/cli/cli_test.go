package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/all"
	"benchlab/internal/store"
)

// run executes the command line in-process and returns the exit code and outputs.
func run(t *testing.T, env Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	code := Main(env, args)
	return code, out.String(), errb.String()
}

// unwrap joins the continuation lines of prose wrapped to 120 columns
// (wrapLine) back onto their first line, for checks of a whole sentence.
func unwrap(s string) string { return strings.ReplaceAll(s, "\n  ", " ") }

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodSpec = `name = "t"
[[target]]
name = "a"
engine = "sqlite"
[workload]
threads = [1]
`

// TestBadInput checks that every kind of bad input gives exit code 2 and one
// line naming the field or flag, the bad value and what is allowed.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	cases := []struct {
		name string
		spec string // written to a file and passed first, when set
		args []string
		want []string // substrings of stderr
	}{
		{name: "missing spec", args: []string{filepath.Join(dir, "nope.toml")}, want: []string{"nope.toml", "cannot read"}},
		{name: "malformed toml", spec: "name = \"x\n[[target]", want: []string{"malformed TOML", "line 1"}},
		{name: "unknown key", spec: goodSpec + "bogus = 1\n", want: []string{"unknown field", "workload.bogus"}},
		{name: "unknown top key", spec: "colour = 1\n" + goodSpec, want: []string{"unknown field", "colour"}},
		{name: "unknown engine", spec: strings.Replace(goodSpec, `"sqlite"`, `"oracle"`, 1), want: []string{"target[0].engine", "oracle", "known:", "sqlite"}},
		{name: "unknown suite", spec: goodSpec + "suite = \"tpcx\"\n", want: []string{"workload.suite", "tpcx"}},
		{name: "unknown test", spec: goodSpec + "tests = [\"point-querie\"]\n", want: []string{"workload.tests", "point-querie", "known:"}},
		{name: "threads zero", spec: strings.Replace(goodSpec, "[1]", "[0]", 1), want: []string{"workload.threads", "0 is not allowed"}},
		{name: "negative duration", spec: goodSpec + "read_time = \"-5s\"\n", want: []string{"workload.read_time", "-5s"}},
		{name: "unparseable duration", spec: goodSpec + "warmup = \"soon\"\n", want: []string{"soon", "not a duration"}},
		{name: "base names no target", spec: "base = \"zz\"\n" + goodSpec, want: []string{"base", "zz", "targets are a"}},
		{name: "unknown setting", spec: goodSpec + "", args: nil, want: nil},
		{name: "bad setting value", spec: strings.Replace(goodSpec, "engine = \"sqlite\"", "engine = \"sqlite\"\n[target.settings]\njournal_mode = \"fast\"", 1), want: []string{"target[0].settings", "journal_mode", "fast", "want one of"}},
		{name: "unknown setting name", spec: strings.Replace(goodSpec, "engine = \"sqlite\"", "engine = \"sqlite\"\n[target.settings]\nturbo = 1", 1), want: []string{"unknown sqlite setting", "turbo"}},
		{name: "unknown preset", spec: goodSpec, args: []string{"--preset", "huge"}, want: []string{"preset", "huge", "smoke, credible"}},
		{name: "flag threads", args: []string{"--engine", "sqlite", "--threads", "1,x"}, want: []string{"--threads", `"x"`}},
		{name: "flag time negative", args: []string{"--engine", "sqlite", "--time", "-3"}, want: []string{"--time", "negative"}},
		{name: "flag time garbage", args: []string{"--engine", "sqlite", "--time", "abc"}, want: []string{"--time", "not a duration"}},
		{name: "unknown flag", args: []string{"--engine", "sqlite", "--thread", "2"}, want: []string{"thread"}},
		{name: "no spec no engine", args: []string{}, want: []string{"--engine"}},
		{name: "flag engine unknown", args: []string{"--engine", "db2"}, want: []string{"engine", "db2"}},
		{name: "error rate above 1", spec: goodSpec + "max_error_rate = 1.5\n", want: []string{"workload.max_error_rate", "1.5", "from 0 to 1"}},
		{name: "negative op timeout", spec: goodSpec + "op_timeout = \"-1s\"\n", want: []string{"workload.op_timeout", "-1s", "duration > 0"}},
		{name: "flag error rate", args: []string{"--engine", "sqlite", "--max-error-rate", "-0.1"}, want: []string{"--max-error-rate", "-0.1", "from 0 to 1"}},
		{name: "flag op timeout", args: []string{"--engine", "sqlite", "--op-timeout", "-2s"}, want: []string{"--op-timeout", "-2s", "duration > 0"}},
		{name: "flag op timeout garbage", args: []string{"--engine", "sqlite", "--op-timeout", "soon"}, want: []string{"op-timeout", "soon"}},
		{name: "table size too small", args: []string{"--engine", "sqlite", "--table-size", "10"}, want: []string{"workload.table_size", "10"}},
	}
	for _, c := range cases {
		if c.want == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			args := []string{"run"}
			if c.spec != "" {
				args = append(args, writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_")+".toml", c.spec))
			}
			args = append(args, c.args...)
			args = append(args, "--store", storeFile)
			code, _, stderr := run(t, Env{}, args...)
			if code != ExitUsage {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, ExitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(unwrap(stderr), w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if strings.Count(strings.TrimSpace(unwrap(stderr)), "\n") > 0 || strings.Contains(unwrap(stderr), "goroutine") {
				t.Errorf("want one line without a stack trace, got %q", stderr)
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	if code, _, stderr := run(t, Env{}, "frobnicate"); code != ExitUsage || !strings.Contains(unwrap(stderr), "frobnicate") {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
}

func TestList(t *testing.T) {
	code, out, _ := run(t, Env{}, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"sqlite", "journal_mode", "sysbench", "point-query", "read-only_range=10000", "scan", "smoke"} {
		if !strings.Contains(out, w) {
			t.Errorf("list output lacks %q", w)
		}
	}
}

// TestRunAndReport runs a short two-target experiment end to end and checks
// that the store holds it and the report compares the targets.
func TestRunAndReport(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", `name = "sync"
base = "wal-normal"
[[target]]
name = "wal-normal"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "normal"
[[target]]
name = "delete-full"
engine = "sqlite"
[target.settings]
journal_mode = "delete"
synchronous = "full"
[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1, 2]
read_time = "400ms"
write_time = "400ms"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
`)
	md := filepath.Join(dir, "report.md")
	code, out, stderr := run(t, Env{}, "run", sp, "--store", storeFile, "-o", md)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", code, out, stderr)
	}
	for _, w := range []string{"Relative throughput", "point-query @1", "update-index @2", "delete-full", "no significance was tested"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "| **point queries** |") {
		t.Errorf("markdown report lacks the point queries group:\n%s", b)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Status != store.StatusOK {
			t.Errorf("run %d status %s (%s)", r.ID, r.Status, r.Error)
		}
		m := store.ParseManifest(r.Manifest)
		want := map[string]string{"wal-normal": "wal", "delete-full": "delete"}[r.Target]
		if m.Engine.Settings["journal_mode"] != want {
			t.Errorf("run %s: journal_mode read back %q, want %q", r.Target, m.Engine.Settings["journal_mode"], want)
		}
		if m.Host.Cores < 1 || m.Seed == 0 || !strings.Contains(m.Spec, "table_size = 2000") {
			t.Errorf("manifest incomplete: %+v", m)
		}
		res, err := st.Results(context.Background(), r.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		measured := 0
		for _, x := range res {
			if x.Action {
				continue
			}
			measured++
			if x.Events == 0 && x.Errors == 0 {
				// A busy machine can leave a 400 ms step without one
				// completed operation (seen at a load average of 25); the
				// report must then name the stall rather than show a rate.
				if !stallNamed(out, x.Test, x.Threads, r.Target) {
					t.Errorf("%s/%d on %s completed no operation and the report does not name the stall:\n%s", x.Test, x.Threads, r.Target, out)
				}
				continue
			}
			if x.Events == 0 || x.QPS() <= 0 || x.Latency.P50 <= 0 || len(x.Intervals) == 0 {
				t.Errorf("%s/%d: empty result %+v", x.Test, x.Threads, x)
			}
		}
		if measured != 4 {
			t.Errorf("run %s: %d measured results, want 4 (2 tests x 2 thread counts)", r.Target, measured)
		}
	}
	code, rep, _ := run(t, Env{}, "report", "--store", storeFile, "--format", "markdown")
	if code != 0 || !strings.Contains(rep, "Relative throughput") {
		t.Fatalf("report exit %d: %s", code, rep)
	}
	code, list, _ := run(t, Env{}, "runs", "--store", storeFile)
	if code != 0 || strings.Count(list, "\n  run ") != 2 {
		t.Fatalf("runs exit %d: %s", code, list)
	}
	// Rerun from the stored manifest: same spec, same seed.
	code, out, stderr = run(t, Env{}, "rerun", "--store", storeFile, "--experiment", "1")
	if code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", code, out, stderr)
	}
	runs, _ = st.Runs(context.Background(), 0)
	if len(runs) != 4 {
		t.Fatalf("%d runs after rerun, want 4", len(runs))
	}
	m1, m2 := store.ParseManifest(runs[0].Manifest), store.ParseManifest(runs[3].Manifest)
	if m1.Seed != m2.Seed || m1.Spec != m2.Spec || runs[3].ExperimentID != 2 {
		t.Errorf("rerun differs: seed %d vs %d, experiment %d", m1.Seed, m2.Seed, runs[3].ExperimentID)
	}
}

// TestInterruptKeepsResults interrupts a run and checks that the measured
// results are stored, the run is marked interrupted, the workers stopped
// within 2 seconds and the data dir is gone.
func TestInterruptKeepsResults(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	work := filepath.Join(dir, "work")
	sigs := make(chan os.Signal, 2)
	done := make(chan int)
	var stderr string
	go func() {
		var code int
		code, _, stderr = run(t, Env{Signals: sigs}, "run", "--engine", "sqlite", "--tests", "point-query,update-index",
			"--table-size", "2000", "--time", "30s", "--warmup", "0", "--report-interval", "0", "--flush-every", "1s",
			"--store", storeFile, "--workdir", work)
		done <- code
	}()
	// Wait until the first measured step (update-index: writes run before
	// reads) has stored operations, however slow the machine.
	for !stepStored(t, storeFile, "update-index") {
		select {
		case code := <-done:
			t.Fatalf("run ended (exit %d) before its first measured step began: %s", code, stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	sigs <- os.Interrupt
	var code int
	select {
	case code = <-done:
	case <-time.After(5 * time.Minute): // a hang guard: the run alone lasts a minute
		t.Fatal("run did not stop after the interrupt")
	}
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitInterrupted, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(context.Background(), 0)
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Fatalf("runs = %+v, want one interrupted", runs)
	}
	res, _ := st.Results(context.Background(), runs[0].ID, false)
	var partial *store.Result
	for i := range res {
		if !res[i].Action {
			partial = &res[i]
		}
	}
	// update-index runs first (writes before reads); it was cut short.
	if partial == nil || partial.Test != "update-index" || partial.Status != store.StatusInterrupted ||
		partial.Events == 0 || partial.Seconds <= 0 || partial.Seconds >= 30 {
		t.Fatalf("partial update-index result not kept: %+v", partial)
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 0 {
		t.Errorf("data dirs left behind in %s: %v", work, entries)
	}
}

// stepStored says whether the store at file holds a result of test with
// operations in its stored seconds.
func stepStored(t *testing.T, file, test string) bool {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		return false
	}
	st, err := store.Open(file)
	if err != nil {
		return false
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil || len(runs) == 0 {
		return false
	}
	res, err := st.Results(context.Background(), runs[0].ID, true)
	if err != nil {
		return false
	}
	for _, r := range res {
		for _, iv := range r.Intervals {
			if r.Test == test && iv.Events > 0 {
				return true
			}
		}
	}
	return false
}
