// Package servertest holds the scenarios every server engine is tested with,
// against real servers the tests start themselves (never a mock): a 2-config
// matrix end to end through the command line, a setting the server rejects,
// a port in use, a server killed mid-test, and an interrupted experiment.
// Engine packages call them from their own tests, so each family's server
// tests live in that engine's package.
package servertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/runner"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload"
	_ "benchlab/internal/workload/sysbench" // the suite every scenario runs
)

// Tests is the small test selection the scenarios run: a point query, an
// index update (which puts a postwrite cleanup in the plan) and a
// transactional range test.
var Tests = []string{"point-query", "update-index", "read-only_range=10"}

// Env returns the environment a test runs benchlab with, injected as the
// command line injects its own (cli.Env.Getenv, engine.Target.Getenv,
// spec.Spec.Getenv), never set in the process: BENCHLAB_SERVER_LOGS points
// the server logs at logs, a dir of the test's own, so tests leave nothing
// in the user's cache dir.
func Env(t *testing.T) (getenv func(string) string, logs string) {
	t.Helper()
	logs = filepath.Join(t.TempDir(), "server-logs")
	return func(k string) string {
		if k == "BENCHLAB_SERVER_LOGS" {
			return logs
		}
		return ""
	}, logs
}

// Spec returns a validated small spec: 5000 rows, 1 s tests, no postwrite
// wait, the test's environment (Env).
func Spec(t *testing.T, name, workdir string, targets ...spec.Target) spec.Spec {
	t.Helper()
	s := spec.Default()
	s.Name, s.WorkDir, s.Seed, s.Targets = name, workdir, 42, targets
	s.Getenv, _ = Env(t)
	w := &s.Workload
	w.Tests = Tests
	w.TableSize = 5000
	w.ReadTime, w.WriteTime = spec.Duration{Duration: time.Second}, spec.Duration{Duration: time.Second}
	w.Warmup = spec.Duration{Duration: 200 * time.Millisecond}
	w.PostwriteWait = spec.AutoDuration{}
	w.ReportInterval = spec.Duration{}
	if err := s.Validate(); err != nil {
		t.Fatalf("spec: %v", err)
	}
	return s
}

// Procs lists the processes whose command line mentions dir: the servers
// (and their helpers) started on data dirs under dir.
func Procs(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(cmd), dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ServerPID returns the one process started with a data dir under dir,
// waiting up to 10 s for it.
func ServerPID(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range Procs(dir) {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			args := strings.Split(string(cmd), "\x00")
			if len(args) > 0 && !strings.Contains(args[0], "install-db") && !strings.Contains(args[0], "initdb") {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no server process under %s", dir)
	return 0
}

// NoProcs fails the test when any process still mentions dir.
func NoProcs(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := Procs(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
				t.Errorf("orphan process %d: %s", p, strings.ReplaceAll(string(cmd), "\x00", " "))
				syscall.Kill(p, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Trigger is a log writer that calls fn once, the first time a line
// containing substr is written. It also keeps everything written.
type Trigger struct {
	mu     sync.Mutex
	substr string
	fn     func()
	fired  bool
	buf    bytes.Buffer
}

// NewTrigger returns a Trigger for substr.
func NewTrigger(substr string, fn func()) *Trigger { return &Trigger{substr: substr, fn: fn} }

func (w *Trigger) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	fire := !w.fired && strings.Contains(w.buf.String(), w.substr)
	if fire {
		w.fired = true
	}
	w.mu.Unlock()
	if fire {
		w.fn()
	}
	return len(p), nil
}

// String returns what was written.
func (w *Trigger) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Run runs s into a fresh store and returns the store, the experiment and
// the error.
func Run(ctx context.Context, t *testing.T, s spec.Spec, out io.Writer) (*store.Store, []store.Run, error) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id, err := runner.RunExperiment(ctx, s, st, runner.ExperimentOptions{Out: out})
	runs, rerr := st.Runs(context.Background(), id)
	if rerr != nil {
		t.Fatalf("runs: %v", rerr)
	}
	return st, runs, err
}

// Matrix runs two config variants end to end through `benchlab run` and
// `benchlab report`: both runs ok with the server's version stored, every
// measured step with operations and server CPU, and a report with relative
// QPS and per-operation tables.
func Matrix(t *testing.T, engine, versionPrefix string, base, variant map[string]string) {
	getenv, logs := Env(t)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "matrix.toml")
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\n\n", engine+"-matrix")
	for i, m := range []map[string]string{base, variant} {
		fmt.Fprintf(&b, "[[target]]\nname = %q\nengine = %q\n[target.settings]\n", []string{"base", "variant"}[i], engine)
		for k, v := range m {
			fmt.Fprintf(&b, "%s = %q\n", k, v)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "[workload]\nsuite = \"sysbench\"\ntests = [%q, %q, %q]\ntable_size = 5000\nthreads = [1]\n", Tests[0], Tests[1], Tests[2])
	b.WriteString("read_time = \"1s\"\nwrite_time = \"1s\"\nwarmup = \"200ms\"\npostwrite_wait = \"0s\"\nreport_interval = \"0s\"\n")
	if err := os.WriteFile(specFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st, runs, db := runSpec(t, dir, specFile, getenv, cli.ExitOK)
	ctx := context.Background()
	if len(runs) != 2 {
		t.Fatalf("runs: %v", runs)
	}
	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdout: &stdout, Stderr: &stderr}
	for _, r := range runs {
		if r.Status != store.StatusOK || !strings.HasPrefix(r.Version, versionPrefix) {
			t.Errorf("run %s: status %s version %q error %q; want ok and version %s*", r.Target, r.Status, r.Version, r.Error, versionPrefix)
		}
		m := store.ParseManifest(r.Manifest)
		if m.Engine.Build == "" || m.Engine.Settings["benchlab.server_log"] == "" {
			t.Errorf("run %s: manifest lacks build or server log: %+v", r.Target, m.Engine)
		}
		if _, err := os.Stat(m.Engine.Settings["benchlab.server_log"]); err != nil {
			t.Errorf("run %s: server log not kept: %v", r.Target, err)
		}
		// The command line's injected environment reached the server.
		if d := filepath.Dir(m.Engine.Settings["benchlab.server_log"]); d != logs {
			t.Errorf("run %s: server log kept in %s, want BENCHLAB_SERVER_LOGS of the injected environment, %s", r.Target, d, logs)
		}
		res, err := st.Results(ctx, r.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		measured := 0
		for _, x := range res {
			if x.Action {
				continue
			}
			measured++
			if x.Events == 0 || x.Errors > 0 {
				t.Errorf("run %s %s: %d events, %d errors %v", r.Target, x.Test, x.Events, x.Errors, x.ErrorSamples)
			}
			if x.Eff == nil || x.Eff.ServerCPU <= 0 || x.Eff.ClientCPU <= 0 {
				t.Errorf("run %s %s: no server/client CPU measured: %+v", r.Target, x.Test, x.Eff)
			} else {
				t.Logf("%s %-20s %8.0f qps  server %5.1f us/op  client %5.1f us/op", r.Target, x.Test,
					float64(x.Statements)/x.Seconds, x.Eff.ServerCPU*1e6/float64(x.Statements), x.Eff.ClientCPU*1e6/float64(x.Statements))
			}
		}
		if measured != len(Tests) {
			t.Errorf("run %s: %d measured results, want %d", r.Target, measured, len(Tests))
		}
	}
	stdout.Reset()
	if code := cli.Main(env, []string{"report", "--store", db}); code != cli.ExitOK {
		t.Fatalf("benchlab report: exit %d: %s", code, stderr.String())
	}
	rep := stdout.String()
	t.Logf("report:\n%s", rep)
	for _, want := range []string{"variant", "point-query", "update-index"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// runSpec runs `benchlab run specFile` in the environment getenv with its
// results and work dir under dir, checks the exit code and that no server
// is left running, and returns the store (closed when the test ends), the
// runs of the one experiment it holds, and its path.
func runSpec(t *testing.T, dir, specFile string, getenv func(string) string, wantCode int) (*store.Store, []store.Run, string) {
	t.Helper()
	work := filepath.Join(dir, "work")
	db := filepath.Join(dir, "results.db")
	var stdout, stderr bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: getenv}, []string{"run", specFile, "--store", db, "--workdir", work})
	t.Logf("benchlab run: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	if code != wantCode {
		t.Fatalf("benchlab run exit code %d, want %d", code, wantCode)
	}
	NoProcs(t, work)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	exps, err := st.Experiments(ctx)
	if err != nil || len(exps) != 1 {
		t.Fatalf("experiments: %v %v", exps, err)
	}
	runs, err := st.Runs(ctx, exps[0].ID)
	if err != nil {
		t.Fatalf("runs: %v", err)
	}
	return st, runs, db
}

// runOneTarget writes spec (a one-target spec) to a file, runs it through
// the command line expecting success, and returns the results of its one
// run, which must be ok.
func runOneTarget(t *testing.T, spec string) []store.Result {
	t.Helper()
	getenv, _ := Env(t)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	st, runs, _ := runSpec(t, dir, specFile, getenv, cli.ExitOK)
	if len(runs) != 1 || runs[0].Status != store.StatusOK {
		t.Fatalf("runs: %+v", runs)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// BadSetting runs a target with a setting the server rejects before a good
// one through `benchlab run`: exit code 1, the bad run failed with an error
// naming the target and quoting the server log, the good run ok.
func BadSetting(t *testing.T, engine string, bad map[string]string, wantInLog string) {
	getenv, _ := Env(t)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "bad.toml")
	var b strings.Builder
	b.WriteString("name = \"bad-setting\"\n\n[[target]]\nname = \"broken\"\nengine = \"" + engine + "\"\n[target.settings]\n")
	for k, v := range bad {
		fmt.Fprintf(&b, "%s = %q\n", k, v)
	}
	b.WriteString("\n[[target]]\nname = \"good\"\nengine = \"" + engine + "\"\n\n")
	fmt.Fprintf(&b, "[workload]\nsuite = \"sysbench\"\ntests = [%q]\ntable_size = 2000\nthreads = [1]\n", Tests[0])
	b.WriteString("read_time = \"1s\"\nwrite_time = \"1s\"\nwarmup = \"100ms\"\npostwrite_wait = \"0s\"\nreport_interval = \"0s\"\n")
	if err := os.WriteFile(specFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, runs, _ := runSpec(t, dir, specFile, getenv, cli.ExitFailure)
	if len(runs) != 2 {
		t.Fatalf("runs: %v", runs)
	}
	if r := runs[0]; r.Status != store.StatusFailed || !strings.Contains(r.Error, "target broken") ||
		!strings.Contains(r.Error, wantInLog) || !strings.Contains(r.Error, "last lines of the server log") {
		t.Errorf("broken run: status %s, error %q; want failed, naming the target and quoting %q from the log", r.Status, r.Error, wantInLog)
	}
	if r := runs[1]; r.Status != store.StatusOK {
		t.Errorf("good run: status %s error %q, want ok", r.Status, r.Error)
	}
}

// PortInUse asks for a port another process holds: the run fails at once
// with an error naming the port, and nothing is left running.
func PortInUse(t *testing.T, engine string) {
	l, err := net.Listen("tcp", server.Host+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	work := t.TempDir()
	s := Spec(t, "port-in-use", work, spec.Target{Name: "busy", Engine: engine, Settings: map[string]any{"port": port}})
	_, runs, err := Run(context.Background(), t, s, io.Discard)
	if !errors.Is(err, runner.ErrCellsFailed) {
		t.Errorf("error %v, want %v", err, runner.ErrCellsFailed)
	}
	want := fmt.Sprintf("port %d", port)
	if len(runs) != 1 || runs[0].Status != store.StatusFailed || !strings.Contains(runs[0].Error, want) ||
		!strings.Contains(runs[0].Error, "in use") {
		t.Errorf("runs %+v; want one failed run whose error says %q is in use", runs, want)
	}
	NoProcs(t, work)
}

// Killed kills the first target's server while a test runs: the run is
// failed with the steps measured so far kept, its error names the step
// that was running (the last one stored, itself failed, and cut short of
// its time), no process is left, and the second target runs.
func Killed(t *testing.T, engine string) {
	work := t.TempDir()
	s := Spec(t, "killed", work, spec.Target{Name: "victim", Engine: engine}, spec.Target{Name: "next", Engine: engine})
	victim := filepath.Join(work, "victim-r1")
	var out *Trigger
	out = NewTrigger("prepare: sbtest1 loaded", func() {
		go func() {
			pid := ServerPID(t, victim)
			time.Sleep(500 * time.Millisecond) // into the first measured test
			syscall.Kill(pid, syscall.SIGKILL)
		}()
	})
	st, runs, err := Run(context.Background(), t, s, out)
	t.Logf("log:\n%s", out.String())
	if !errors.Is(err, runner.ErrCellsFailed) {
		t.Errorf("error %v, want %v", err, runner.ErrCellsFailed)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	if r := runs[0]; r.Status != store.StatusFailed || !strings.Contains(r.Error, "exited unexpectedly") {
		t.Errorf("victim: status %s error %q; want failed saying the server exited", r.Status, r.Error)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil || len(res) < 2 {
		t.Errorf("victim kept %d results (%v); want the load and the step that was running", len(res), err)
	} else {
		last := res[len(res)-1]
		step, _, _ := strings.Cut(runs[0].Error, ":")
		step, _, _ = strings.Cut(step, "/")
		if step != last.Test || last.Status == store.StatusOK {
			t.Errorf("victim: error %q names step %q; want the step that was running, the last stored (%s, %s)",
				runs[0].Error, step, last.Test, last.Status)
		}
		if limit := max(s.Workload.ReadTime.Duration, s.Workload.WriteTime.Duration).Seconds(); !last.Action && last.Seconds >= limit {
			t.Errorf("victim: %s ran %.2f s, its whole time: the kill was not noticed", last.Test, last.Seconds)
		}
	}
	if runs[1].Status != store.StatusOK {
		t.Errorf("next: status %s error %q, want ok", runs[1].Status, runs[1].Error)
	}
	NoProcs(t, work)
}

// Cancel cancels the experiment during the first test (as Ctrl-C does): the
// error is the context's, and no server process or data dir is left.
func Cancel(t *testing.T, engine string) {
	work := t.TempDir()
	s := Spec(t, "cancel", work, spec.Target{Name: "a", Engine: engine}, spec.Target{Name: "b", Engine: engine})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := NewTrigger("prepare: sbtest1 loaded", func() {
		time.AfterFunc(300*time.Millisecond, cancel)
	})
	start := time.Now()
	_, runs, err := Run(ctx, t, s, out)
	t.Logf("cancelled run returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Errorf("runs %+v; want one interrupted run", runs)
	}
	NoProcs(t, work)
	if _, err := os.Stat(filepath.Join(work, "a-r1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir left behind: %v", err)
	}
}

// LostConnection runs a point-query step on a fresh server of engine and,
// once the workers have done measured operations, lets kill end their
// connections (the server keeps running): the step must end on the loss,
// long before its time, and fail with the cause, keeping what it measured
// before. The kill waits for a second of measured operations, never for a
// time, so it holds on a busy machine; the step's time is long enough that
// only ending on the loss lets it end before the hang guard.
func LostConnection(t *testing.T, engineName string, kill func(ctx context.Context, admin engine.Conn)) {
	getenv, _ := Env(t)
	ctx := context.Background()
	drv, _ := engine.Lookup(engineName)
	db, err := drv.Open(ctx, engine.Target{Name: "lost", Engine: engineName, Getenv: getenv}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	suite, _ := workload.Lookup("sysbench")
	steps, err := suite.Plan(workload.Params{Tests: []string{"point-query"}, Tables: 1, TableSize: 2000,
		Threads: []int{2}, ReadTime: 10 * time.Minute, WriteTime: time.Second, PostwriteWait: 0, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	admin, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// The first measured sample may hold the warm-up's end; a later one
	// with operations is wholly measured, and the result must keep it.
	measured := make(chan int64, 1)
	var samples int
	live := func(s runner.LiveSample) {
		if s.Warm {
			return
		}
		if samples++; samples > 1 && s.Events > 0 {
			select {
			case measured <- s.Events:
			default:
			}
		}
	}
	gctx, cancel := context.WithTimeout(ctx, hangGuard) // a hang guard, not a window
	defer cancel()
	var before int64
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		select {
		case before = <-measured:
			kill(ctx, admin)
		case <-gctx.Done():
		}
	}()
	rs, err := runner.MeasureRoles(gctx, db, steps[len(steps)-1], 2, 1, runner.Options{Live: live})
	guarded := gctx.Err() != nil
	cancel()
	<-killed
	if guarded && before > 0 {
		t.Errorf("the step ran on for %s after its connections were lost, want it to end on the loss", hangGuard)
	}
	if err == nil || !strings.Contains(err.Error(), "lost its connection") {
		t.Fatalf("step error %v, want a lost connection", err)
	}
	r := rs[0]
	if r.Status != store.StatusFailed || r.Events < before || r.Errors < 1 {
		t.Errorf("result: status %s, %d events, %d errors; want failed, with the %d events of a measured second before the loss kept",
			r.Status, r.Events, r.Errors, before)
	}
}
