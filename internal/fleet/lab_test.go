package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "benchlab/internal/all" // the engines and suites the lab runs, and PostgreSQL for its store
	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/fleet"
	"benchlab/internal/server"
	"benchlab/internal/spec/spectest"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
)

// childArgs is the variable that makes this test binary run benchlab's
// Main with the arguments it holds (joined by \x1f) instead of the tests:
// the lab's workers are processes of their own, as on their machines.
const childArgs = "BENCHLAB_FLEET_CHILD"

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgs); args != "" {
		os.Exit(cli.Main(cli.OSEnv(), strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}

// childCmd returns a command that runs `benchlab args...` in a child
// process, with extra environment.
func childCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), childArgs+"="+strings.Join(args, "\x1f")), env...)
	return cmd
}

// run runs benchlab in-process and returns its exit code and outputs.
func run(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// fleetSpec is a small SQLite experiment: a 1000-row load and one point
// query test of the given seconds.
const fleetSpec = `name = %q
[[target]]
name = "lite"
engine = "sqlite"
[workload]
suite = "sysbench"
tests = ["point-query"]
threads = [1]
read_time = "%ds"
write_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
table_size = 1000
repeats = 1
`

// failingSpec is a custom SQL experiment on SQLite whose only test fails.
const failingSpec = `name = "failing"
[[target]]
name = "lite"
engine = "sqlite"
[workload]
suite = "custom"
threads = [1]
read_time = "1s"
write_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
repeats = 1
[workload.custom]
setup = ["CREATE TABLE t (id INTEGER PRIMARY KEY)"]
tables = ["t"]
[[workload.custom.test]]
name = "broken"
statements = ["SELECT no_such_column FROM t"]
`

// labStore starts a real PostgreSQL server for the test and returns the
// URL of a results store on it.
func labStore(t testing.TB) string {
	t.Helper()
	logs := filepath.Join(t.TempDir(), "logs")
	db := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres",
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }})
	in := db.(interface{ Instance() *server.Instance }).Instance()
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port)
}

// writeSpec writes a fleetSpec to dir and returns its path.
func writeSpec(t *testing.T, dir, name string, seconds int) string {
	t.Helper()
	p := filepath.Join(dir, name+".toml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(fleetSpec, name, seconds)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// queueJob queues a spec and returns the job's ID, which queue prints alone.
func queueJob(t *testing.T, dsn string, args ...string) int64 {
	t.Helper()
	code, out, errOut := run(t, append([]string{"queue", "--store", dsn}, args...)...)
	id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if code != 0 || err != nil {
		t.Fatalf("queue %v: exit %d, stdout %q, stderr %s", args, code, out, errOut)
	}
	return id
}

// jobExperiments reads every run's manifest in the store and returns, per
// job ID, the experiments its runs belong to, and the worker and host of
// each experiment.
func jobExperiments(t *testing.T, dsn string) (map[int64][]int64, map[int64]store.QueueJob, map[int64]string) {
	t.Helper()
	st := storetest.Open(t, dsn)
	ctx := context.Background()
	exps, err := st.Experiments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byJob, jobOf, hostOf := map[int64][]int64{}, map[int64]store.QueueJob{}, map[int64]string{}
	for _, e := range exps {
		runs, err := st.Runs(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			m := store.ParseManifest(r.Manifest)
			if m.Job == nil {
				t.Errorf("experiment %d run %d: no job in its manifest", e.ID, r.ID)
				continue
			}
			byJob[m.Job.ID] = append(byJob[m.Job.ID], e.ID)
			jobOf[e.ID], hostOf[e.ID] = *m.Job, m.Host.Hostname
		}
	}
	return byJob, jobOf, hostOf
}

// listJobs reads the queue's jobs by ID.
func listJobs(t testing.TB, dsn string) map[int64]fleet.Job {
	t.Helper()
	q, err := fleet.Open(context.Background(), dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	jobs, err := q.Jobs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m := map[int64]fleet.Job{}
	for _, j := range jobs {
		m[j.ID] = j
	}
	return m
}

// TestFleet runs a lab on a real PostgreSQL store: two experiments queued
// once, two worker processes (this test binary as benchlab) taking one job
// each; every job ran exactly once, its experiment is in the store with the
// job's ID, worker and host in its manifest, and jobs lists both
// completed. A bad spec and a SQLite store are refused (exit 2) with
// nothing queued. A worker interrupted mid-experiment exits 130, keeps the
// partial results, leaves no work dir, and its job goes back to the queue,
// where a worker with --once runs it again, with a job placed on this host
// whose experiment fails and a job for a kind of machine whose stored spec
// is broken, which both fail for good at their first attempt.
func TestFleet(t *testing.T) {
	t.Parallel()
	dsn := labStore(t)
	dir := t.TempDir()
	alpha, beta := writeSpec(t, dir, "alpha", 1), writeSpec(t, dir, "beta", 1)

	// Refusals, before anything is queued.
	lite := filepath.Join(dir, "r.db")
	for _, args := range [][]string{{"queue", alpha}, {"worker", "--once"}, {"jobs"}} {
		code, _, errOut := run(t, append(args, "--store", lite)...)
		if code != cli.ExitUsage || !strings.Contains(errOut, "PostgreSQL") {
			t.Errorf("%v on a SQLite store: exit %d, %q; want 2 asking for a PostgreSQL store", args, code, errOut)
		}
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte(strings.Replace(fmt.Sprintf(fleetSpec, "bad", 1), `"point-query"`, `"no-such-test"`, 1)), 0o644)
	if code, _, errOut := run(t, "queue", bad, "--store", dsn); code != cli.ExitUsage || !strings.Contains(errOut, "workload.tests") {
		t.Errorf("a bad spec: exit %d, %q; want 2 naming workload.tests", code, errOut)
	}
	if code, _, errOut := run(t, "queue", alpha, "--store", dsn, "--host-kind", "Big Box"); code != cli.ExitUsage || !strings.Contains(errOut, "--host-kind") {
		t.Errorf("a bad --host-kind: exit %d, %q; want 2 naming the flag", code, errOut)
	}
	if jobs := listJobs(t, dsn); len(jobs) != 0 {
		t.Fatalf("refused commands queued %d job(s)", len(jobs))
	}

	ids := []int64{queueJob(t, dsn, alpha), queueJob(t, dsn, beta, "--priority")}
	tmp := t.TempDir() // the workers' TMPDIR: their work dirs go there
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--max-jobs", "1")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("worker %d: %v\n%s", i, err, outs[i].String())
		}
		if !strings.Contains(outs[i].String(), "1 job(s) done") {
			t.Errorf("worker %d did not run one job:\n%s", i, outs[i].String())
		}
	}
	byJob, jobOf, hostOf := jobExperiments(t, dsn)
	host, _ := os.Hostname()
	workers := map[string]bool{}
	for _, id := range ids {
		exps := byJob[id]
		if len(exps) != 1 {
			t.Fatalf("job %d ran as experiment(s) %v, want exactly one", id, exps)
		}
		e := exps[0]
		if hostOf[e] != host || !strings.HasPrefix(jobOf[e].Worker, host+"-") {
			t.Errorf("experiment %d of job %d: host %q, worker %q; want host %q", e, id, hostOf[e], jobOf[e].Worker, host)
		}
		workers[jobOf[e].Worker] = true
	}
	if len(workers) != 2 {
		t.Errorf("the two jobs ran on workers %v, want one each on two workers", workers)
	}
	jobs := listJobs(t, dsn)
	for _, id := range ids {
		j := jobs[id]
		if j.State != "completed" || j.Attempt != 1 || j.Output.Experiment != byJob[id][0] || j.Output.Host != host {
			t.Errorf("job %d: %+v; want completed at the first attempt on %s with experiment %v", id, j, host, byJob[id])
		}
	}
	code, out, errOut := run(t, "jobs", "--store", dsn)
	if code != 0 || strings.Count(out, "completed") != 2 || !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
		t.Errorf("jobs: exit %d\n%s%s", code, out, errOut)
	}
	checkEmpty(t, tmp)

	// A worker stopped mid-experiment.
	long := queueJob(t, dsn, writeSpec(t, dir, "long", 8))
	logPath := filepath.Join(dir, "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	w := childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn)
	w.Stdout, w.Stderr = logFile, logFile
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), "postload ...") {
			break
		}
		if time.Now().After(deadline) {
			w.Process.Kill()
			w.Wait()
			t.Fatalf("the worker did not reach the measured step:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // into the measured step
	if j := listJobs(t, dsn)[long]; j.State != "running" || j.Output.Host != host || j.Output.Experiment == 0 {
		t.Errorf("running job: %+v; want running on %s with its experiment", j, host)
	}
	if err := w.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = w.Wait()
	logged, _ := os.ReadFile(logPath)
	if code := w.ProcessState.ExitCode(); code != cli.ExitInterrupted {
		t.Fatalf("interrupted worker: exit %d (%v), want %d\n%s", code, err, cli.ExitInterrupted, logged)
	}
	checkEmpty(t, tmp)
	j := listJobs(t, dsn)[long]
	if j.State != "queued" || j.Output.Outcome != fleet.OutcomeInterrupted || j.Output.Experiment == 0 {
		t.Fatalf("interrupted job: %+v; want queued again, with its interrupted experiment", j)
	}
	partial := j.Output.Experiment
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), partial)
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Fatalf("runs of the interrupted experiment %d: %+v %v; want one, interrupted", partial, runs, err)
	}
	results, err := st.Results(context.Background(), runs[0].ID, false)
	st.Close()
	measured := false
	for _, r := range results {
		if r.Test == "point-query" && r.Events > 0 {
			measured = true
		}
	}
	if err != nil || !measured {
		t.Errorf("interrupted experiment %d: results %+v %v; want point-query's measured part", partial, results, err)
	}

	// The job runs again, from the start, on a worker that exits when
	// nothing is left (--once), with a job for this host whose experiment
	// fails and one for a kind of machine whose stored spec is broken:
	// both fail at their first attempt, for good.
	failing := filepath.Join(dir, "failing.toml")
	os.WriteFile(failing, []byte(failingSpec), 0o644)
	failed := queueJob(t, dsn, failing, "--host", host)
	q, err := fleet.Open(context.Background(), dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	broken, err := q.Insert(context.Background(), fleet.Args{Spec: "name = 5\n", Name: "broken",
		Placement: fleet.Placement{HostKind: "big-box"}}, false)
	q.Close()
	if err != nil {
		t.Fatal(err)
	}
	w = childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--once", "--queue", "big-box")
	b, err := w.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "3 job(s) done") {
		t.Fatalf("worker --once: %v\n%s", err, b)
	}
	checkEmpty(t, tmp)
	jobs = listJobs(t, dsn)
	if j := jobs[failed]; j.State != "failed" || j.Attempt != 1 || j.Output.Experiment == 0 || !strings.Contains(j.Output.Error, "no_such_column") {
		t.Errorf("job %d, whose experiment fails: %+v; want failed at its first attempt, with its experiment and error", failed, j)
	}
	if j := jobs[broken]; j.State != "failed" || j.Attempt != 1 || j.Output.Experiment != 0 || !strings.Contains(j.Output.Error, "job") {
		t.Errorf("job %d, whose spec is broken: %+v; want failed at its first attempt, without an experiment", broken, j)
	}
	code, out, _ = run(t, "jobs", "--store", dsn)
	if code != 0 || strings.Count(out, "failed") < 2 || !strings.Contains(out, "host "+host) || !strings.Contains(out, "kind big-box") {
		t.Errorf("jobs: exit %d\n%s", code, out)
	}
	j = listJobs(t, dsn)[long]
	if j.State != "completed" || j.Output.Experiment == partial || len(j.Output.Earlier) != 1 || j.Output.Earlier[0] != partial {
		t.Errorf("job %d run again: %+v; want completed, a new experiment, the interrupted %d as earlier", long, j, partial)
	}
	byJob, _, _ = jobExperiments(t, dsn)
	if len(byJob[long]) != 2 {
		t.Errorf("job %d: experiments %v, want the interrupted one and the complete one", long, byJob[long])
	}
}

// checkEmpty fails the test when dir holds anything (a work dir left).
func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	if es, _ := os.ReadDir(dir); len(es) > 0 {
		t.Errorf("%s holds %d entr(ies), e.g. %s; want none left", dir, len(es), es[0].Name())
	}
}

// TestFleetMachineDied kills a worker mid-experiment (SIGKILL, as a
// machine that dies). Its job has an hour's timeout, so only the missed
// heartbeats can free it: River's rescuer, in a second worker, puts it back
// and that worker runs it at its second attempt. The dead attempt's
// experiment keeps what it measured, its run marked superseded with the
// reason; jobs lists the dead worker as silent; the dead worker's work dir
// is swept. It waits for the heartbeat bound and a rescuer pass (under a
// minute, little CPU), alongside TestFleet; -short skips it.
func TestFleetMachineDied(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a dead worker's heartbeats to lapse")
	}
	t.Parallel()
	dsn := labStore(t)
	dir, tmp := t.TempDir(), t.TempDir()
	id := queueJob(t, dsn, writeSpec(t, dir, "doomed", 8), "--timeout", "1h")
	logPath := filepath.Join(dir, "a.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	a := childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn)
	a.Stdout, a.Stderr = logFile, logFile
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute) // a hang guard, not a window
	for {
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "postload ...") {
			break
		}
		if time.Now().After(deadline) {
			a.Process.Kill()
			a.Wait()
			t.Fatal("the worker did not reach the measured step")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	a.Process.Kill()
	a.Wait()
	first := listJobs(t, dsn)[id]
	if first.State != "running" || first.Output.Experiment == 0 {
		t.Fatalf("job of the dead worker: %+v; want still running, with its experiment", first)
	}
	b, err := childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--max-jobs", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("second worker: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "stopped heartbeating during attempt 1") {
		t.Errorf("second worker's output does not say the first one died:\n%s", b)
	}
	j := listJobs(t, dsn)[id]
	if j.State != "completed" || j.Attempt != 2 || len(j.Output.Earlier) != 1 || j.Output.Earlier[0] != first.Output.Experiment {
		t.Errorf("job %d: %+v; want completed at the second attempt, the dead worker's experiment %d as earlier", id, j, first.Output.Experiment)
	}
	// The dead attempt's experiment keeps its load, its run marked.
	st := storetest.Open(t, dsn)
	runs, err := st.Runs(context.Background(), first.Output.Experiment)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs of the dead attempt: %d, %v", len(runs), err)
	}
	if runs[0].Status != store.StatusSuperseded || !strings.Contains(runs[0].Error, "stopped heartbeating") {
		t.Errorf("the dead attempt's run: status %s, error %q; want superseded, saying its worker stopped heartbeating", runs[0].Status, runs[0].Error)
	}
	if res, err := st.Results(context.Background(), runs[0].ID, false); err != nil || len(res) == 0 {
		t.Errorf("the dead attempt kept %d results (%v); want its load at least", len(res), err)
	}
	code, out, _ := run(t, "jobs", "--store", dsn)
	if code != 0 || !strings.Contains(out, "LAST HEARTBEAT") || !strings.Contains(out, "silent (over") || !strings.Contains(out, "stopped") {
		t.Errorf("jobs: exit %d\n%s\nwant the dead worker silent and the second one stopped", code, out)
	}
	checkEmpty(t, tmp)
}

// TestFleetCancel cancels a queued job, which then never runs, and a
// running one: its worker stops the experiment, which keeps its measured
// part and leaves no work dir, marks the job cancelled and goes on (with
// --once it exits 0, nothing being left). A job that has ended, an
// unknown ID, a bad argument and a SQLite store exit 2 and say why.
func TestFleetCancel(t *testing.T) {
	t.Parallel()
	dsn := labStore(t)
	dir, tmp := t.TempDir(), t.TempDir()
	long := queueJob(t, dsn, writeSpec(t, dir, "long", 40))
	later := queueJob(t, dsn, writeSpec(t, dir, "later", 1))

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cancel", "--store", dsn}, "no job given"},
		{[]string{"cancel", "x1", "--store", dsn}, `argument "x1" is not a job ID`},
		{[]string{"cancel", "999999", "--store", dsn}, "job 999999: no such job"},
		{[]string{"cancel", "1", "--store", filepath.Join(dir, "r.db")}, "PostgreSQL"},
	} {
		if code, _, errOut := run(t, c.args...); code != cli.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", c.args, code, errOut, c.want)
		}
	}

	code, out, errOut := run(t, "cancel", fmt.Sprint(later), "--store", dsn)
	if code != 0 || !strings.Contains(out, "cancelled before it ran") {
		t.Fatalf("cancel of a queued job: exit %d, %q %q", code, out, errOut)
	}
	if j := listJobs(t, dsn)[later]; j.State != "cancelled" {
		t.Fatalf("queued job after cancel: %+v; want cancelled", j)
	}

	logPath := filepath.Join(dir, "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	w := childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--once")
	w.Stdout, w.Stderr = logFile, logFile
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "postload ...") {
			break
		}
		if time.Now().After(deadline) {
			w.Process.Kill()
			<-exited
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the worker did not reach the measured step:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // into the measured step
	code, out, errOut = run(t, "cancel", fmt.Sprint(long), "--store", dsn)
	if code != 0 || !strings.Contains(out, "asked its worker to stop it") {
		t.Errorf("cancel of a running job: exit %d, %q %q", code, out, errOut)
	}
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second): // the step alone has 38 s left
		w.Process.Kill()
		<-exited
		b, _ := os.ReadFile(logPath)
		t.Fatalf("the worker did not stop the cancelled experiment within 30 s:\n%s", b)
	}
	logged, _ := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(logged), fmt.Sprintf("job %d cancelled", long)) ||
		!strings.Contains(string(logged), "1 job(s) done") {
		t.Fatalf("worker --once after the cancel: %v; want exit 0 with the job cancelled\n%s", err, logged)
	}
	checkEmpty(t, tmp)
	jobs := listJobs(t, dsn)
	j := jobs[long]
	if j.State != "cancelled" || j.Output.Outcome != fleet.OutcomeCancelled || j.Attempt != 1 || j.Output.Experiment == 0 {
		t.Fatalf("cancelled running job: %+v; want cancelled at its first attempt, with its experiment", j)
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), j.Output.Experiment)
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		st.Close()
		t.Fatalf("runs of the cancelled experiment %d: %+v %v; want one, interrupted", j.Output.Experiment, runs, err)
	}
	results, err := st.Results(context.Background(), runs[0].ID, false)
	st.Close()
	measured := false
	for _, r := range results {
		measured = measured || (r.Test == "point-query" && r.Events > 0)
	}
	if err != nil || !measured {
		t.Errorf("cancelled experiment %d: results %+v %v; want point-query's measured part", j.Output.Experiment, results, err)
	}
	if byJob, _, _ := jobExperiments(t, dsn); len(byJob[later]) != 0 {
		t.Errorf("job %d, cancelled while queued, ran as experiment(s) %v", later, byJob[later])
	}

	code, _, errOut = run(t, "cancel", fmt.Sprint(long), "--store", dsn)
	if code != cli.ExitUsage || !strings.Contains(errOut, "has already ended: cancelled") {
		t.Errorf("cancel of a cancelled job: exit %d, %q; want 2 saying it has ended", code, errOut)
	}
	if code, out, _ = run(t, "jobs", "--store", dsn); code != 0 || strings.Count(out, "cancelled") < 2 {
		t.Errorf("jobs: exit %d\n%s", code, out)
	}
}

// gatedSpec has two SQLite targets that differ only in synchronous (off,
// the base, against full: an fsync per commit) on update-index, 5 repeats
// each, and a gate that fails on a regression: run would exit 3.
const gatedSpec = `name = "gated"
base = "off"
` + spectest.SyncTargets + `[workload]
tests = ["update-index"]
` + spectest.ShortSteps + `repeats = 5
[gate]
fail_on_regression = true
`

// TestFleetGate runs a queued experiment whose spec has a gate and a
// planted regression (an fsync per commit): the worker prints the report
// and the gate's decision as run does, and the job fails with the gate's
// regression in its error, which jobs shows.
func TestFleetGate(t *testing.T) {
	t.Parallel()
	dsn := labStore(t)
	dir, tmp := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "gated.toml")
	if err := os.WriteFile(p, []byte(gatedSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	id := queueJob(t, dsn, p)
	b, err := childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--once").CombinedOutput()
	out := string(b)
	if err != nil || !strings.Contains(out, "1 job(s) done") {
		t.Fatalf("worker --once: %v\n%s", err, out)
	}
	checkEmpty(t, tmp)
	for _, want := range []string{"Absolute throughput", "gate power with repeats alone"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the worker's output lacks %q (the report and the gate, as run prints them):\n%s", want, out)
		}
	}
	j := listJobs(t, dsn)[id]
	if strings.Contains(out, "slow host") && j.State == "completed" {
		// Runs set aside because the memory canaries found the host slow
		// (see cli's TestPlantedRegression) can leave too few repeats to
		// call the regression: the gate then passes, and says so.
		if !strings.Contains(out, "gate: no regression") {
			t.Errorf("completed gated job without the gate's decision in the output:\n%s", out)
		}
		t.Logf("the memory canaries found the host slow around some runs:\n%s", out)
		return
	}
	if j.State != "failed" || j.Output.Experiment == 0 || !strings.Contains(j.Output.Error, "gate: significant regression found: full: update-index @1 threads") {
		t.Fatalf("gated job with a planted regression: %+v; want failed, with its experiment, the gate naming full: update-index\n%s", j, out)
	}
	if code, listed, _ := run(t, "jobs", "--store", dsn); code != 0 || !strings.Contains(listed, "gate: significant regression") {
		t.Errorf("jobs: exit %d\n%s", code, listed)
	}
}
