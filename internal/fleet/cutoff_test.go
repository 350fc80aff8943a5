package fleet_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"benchlab/internal/fleet"
	"benchlab/internal/server"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
)

// waitFor polls cond every 200 ms until it holds; past guard (a hang
// guard, not a window) it fails the test with what and the log at
// logPath.
func waitFor(t *testing.T, guard time.Duration, logPath, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting (%s) for %s; %s:\n%s", guard, what, logPath, logged(logPath))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logged reads a worker's log file.
func logged(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestFleetCutOff cuts a worker off from the store while its job runs:
// its role may no longer log in and its connections are terminated. The
// worker stops the job's experiment itself (fencing), says why, and
// leaves no work dir; a second worker's rescuer takes the job again and
// that worker runs it to completion at attempt 2. Let back in, the cut-off
// worker's late end of attempt 1 is dropped by the queue's guard (and
// recorded as refused), so the job stays completed by the second worker;
// the results the first worker kept in its journal are stored when
// benchlab next opens the store from its machine, into runs marked
// superseded. The store then holds exactly one counted result set for the
// job's cell. Like TestFleetMachineDied it waits for heartbeats to lapse;
// -short skips it.
func TestFleetCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a cut-off worker's heartbeats to lapse")
	}
	t.Parallel()
	ctx := context.Background()
	dsn := labStore(t)
	dsnA, admin := cutOffRole(t, dsn)
	dir, tmpA, tmpB, stateA := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	id := queueJob(t, dsn, writeSpec(t, dir, "cut", 30), "--timeout", "1h")
	logA, logB := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	a, aDone := startLogged(t, logA, []string{"TMPDIR=" + tmpA, "XDG_STATE_HOME=" + stateA}, "worker", "--store", dsnA)
	waitFor(t, 5*time.Minute, logA, "worker A to reach the measured step", func() bool { return strings.Contains(logged(logA), "postload ...") })
	first := listJobs(t, dsn)[id]
	if first.State != "running" || first.Output.Experiment == 0 || first.Output.Worker == "" {
		t.Fatalf("job before the cut: %+v; want running on worker A with its experiment", first)
	}
	workerA := first.Output.Worker

	// The cut: no new connection for A's role, its open ones terminated.
	cut(t, admin)
	waitFor(t, 3*time.Minute, logA, "worker A to stop its job", func() bool {
		return strings.Contains(logged(logA), "stopped, cut off from the store")
	})
	out := logged(logA)
	if !strings.Contains(out, "no heartbeat has reached the store for 15s") {
		t.Errorf("worker A's log does not say why it stopped the job:\n%s", out)
	}
	select {
	case err := <-aDone:
		t.Fatalf("worker A exited (%v); want it running on, to reconnect:\n%s", err, out)
	default:
	}
	checkEmpty(t, tmpA)
	journal, _ := filepath.Glob(filepath.Join(stateA, "benchlab", "pending", "*.jsonl"))
	if len(journal) != 1 {
		t.Fatalf("worker A kept %d journal(s) of what the store refused, want 1:\n%s", len(journal), out)
	}

	// B's rescuer takes the job again; B runs it.
	_, bDone := startLogged(t, logB, []string{"TMPDIR=" + tmpB}, "worker", "--store", dsn, "--max-jobs", "1")
	waitFor(t, 5*time.Minute, logB, "worker B to take the job", func() bool {
		j := listJobs(t, dsn)[id]
		return j.State == "running" && j.Attempt == 2
	})
	// A is let back in while B runs the job (or after, if B is quick): its
	// River client then reports attempt 1's end, which the guard drops.
	letIn(t, admin)
	q, err := fleet.Open(ctx, dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var refused []fleet.Refused
	waitFor(t, 5*time.Minute, logA, "worker A's late end of attempt 1 to reach the store", func() bool {
		refused, err = q.Refused(ctx, id)
		return err == nil && len(refused) > 0
	})
	for _, r := range refused {
		if r.Worker != workerA || r.HeldBy == workerA {
			t.Errorf("refused write %+v; want one of worker A (%s), on a job held by another", r, workerA)
		}
		t.Logf("refused: %+v", r)
	}
	select {
	case err := <-bDone:
		if err != nil || !strings.Contains(logged(logB), "1 job(s) done") {
			t.Fatalf("worker B: %v\n%s", err, logged(logB))
		}
	case <-time.After(10 * time.Minute): // a hang guard
		t.Fatalf("worker B did not end:\n%s", logged(logB))
	}
	if !strings.Contains(logged(logB), "stopped heartbeating during attempt 1") {
		t.Errorf("worker B does not say worker A stopped heartbeating:\n%s", logged(logB))
	}
	j := listJobs(t, dsn)[id]
	if j.State != "completed" || j.Attempt != 2 || j.Output.Worker == workerA || j.Output.Outcome != fleet.OutcomeOK ||
		j.Output.Experiment == first.Output.Experiment || len(j.Output.Earlier) != 1 || j.Output.Earlier[0] != first.Output.Experiment {
		t.Fatalf("job %d: %+v; want completed by worker B at attempt 2, A's experiment %d as earlier", id, j, first.Output.Experiment)
	}

	// A, idle, stops on SIGINT; then benchlab on A's machine opens the
	// store and stores A's journal.
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; err != nil {
		t.Errorf("worker A on SIGINT: %v; want exit 0, being idle\n%s", err, logged(logA))
	}
	if j2 := listJobs(t, dsn)[id]; j2.State != j.State || j2.Attempt != j.Attempt || j2.Output.Worker != j.Output.Worker || j2.Output.Experiment != j.Output.Experiment {
		t.Errorf("job %d after worker A stopped: %+v; want it as B completed it: %+v", id, j2, j)
	}
	b, err := childCmd([]string{"XDG_STATE_HOME=" + stateA}, "runs", "--store", dsnA).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "stored") {
		t.Fatalf("runs on A's machine: %v; want A's journal stored\n%s", err, b)
	}
	if left, _ := filepath.Glob(filepath.Join(stateA, "benchlab", "pending", "*.jsonl")); len(left) != 0 {
		t.Errorf("journal(s) %v left after the replay", left)
	}

	// One counted result set: B's run ok, A's superseded with what it
	// measured.
	byStatus := jobRuns(t, dsn, id)
	ok, superseded := byStatus[store.StatusOK], byStatus[store.StatusSuperseded]
	if len(byStatus) != 2 {
		t.Errorf("runs of job %d by status: %+v; want ok and superseded only", id, byStatus)
	}
	if len(ok) != 1 || ok[0].ExperimentID != j.Output.Experiment {
		t.Fatalf("ok runs of job %d: %+v; want exactly one, in B's experiment %d", id, ok, j.Output.Experiment)
	}
	if len(superseded) != 1 || superseded[0].ExperimentID != first.Output.Experiment || !strings.Contains(superseded[0].Error, "stopped heartbeating") {
		t.Fatalf("superseded runs of job %d: %+v; want A's, saying it stopped heartbeating", id, superseded)
	}
	res, err := storetest.Open(t, dsn).Results(ctx, superseded[0].ID, false)
	if err != nil || len(res) == 0 {
		t.Errorf("A's superseded run kept %d results (%v); want what it measured", len(res), err)
	}
	if code, rep, errOut := run(t, "report", "--store", dsn, "--experiment", fmt.Sprint(first.Output.Experiment)); code == 0 && !strings.Contains(rep, "0 measured cells") {
		t.Errorf("report of A's experiment: want its superseded run left out (0 measured cells):\n%s%s", rep, errOut)
	}
}

// cutOffRole makes a role that may be cut off from the store (cut) and
// let back in (letIn), once the store's and the queue's tables exist, and
// returns the store's URL as that role and an admin connection.
func cutOffRole(t *testing.T, dsn string) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	storetest.Open(t, dsn)
	q, err := fleet.Open(ctx, dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	pw, err := server.NewPassword()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `CREATE ROLE cutoff LOGIN PASSWORD '`+pw+`' IN ROLE postgres`); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword("cutoff", pw)
	return u.String(), admin
}

// cut stops the role cutoff from connecting and terminates its
// connections: its worker is cut off from the store.
func cut(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `ALTER ROLE cutoff NOLOGIN`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'cutoff'`); err != nil {
		t.Fatal(err)
	}
}

// letIn lets the role cutoff connect again.
func letIn(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	if _, err := admin.Exec(context.Background(), `ALTER ROLE cutoff LOGIN`); err != nil {
		t.Fatal(err)
	}
}

// startLogged starts `benchlab args...` in a child process with extra
// environment, its output to logPath, and returns it and its end; the
// test's end kills it if it still runs.
func startLogged(t *testing.T, logPath string, env []string, args ...string) (*exec.Cmd, <-chan error) {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	c := childCmd(env, args...)
	c.Stdout, c.Stderr = f, f
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			<-done
		}
	})
	return c, done
}

// jobRuns reads the runs of job id in the store, by status.
func jobRuns(t *testing.T, dsn string, id int64) map[string][]store.Run {
	t.Helper()
	runs, err := storetest.Open(t, dsn).Runs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]store.Run{}
	for _, r := range runs {
		if r.Job == id {
			out[r.Status] = append(out[r.Status], r)
		}
	}
	return out
}

// TestFleetCutOffBack cuts the only worker off from the store while its
// job runs and lets it back in as soon as it has stopped the job, before
// any worker could take the job over: its end of attempt 1 is its own to
// record (the guard refuses nothing), River retries the job, and the same
// worker runs it to completion at attempt 2, whose run is the job's one
// ok run, attempt 1's superseded.
func TestFleetCutOffBack(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a cut-off worker's heartbeats to lapse")
	}
	t.Parallel()
	ctx := context.Background()
	dsn := labStore(t)
	dsnA, admin := cutOffRole(t, dsn)
	dir, tmp := t.TempDir(), t.TempDir()
	id := queueJob(t, dsn, writeSpec(t, dir, "back", 30), "--timeout", "1h")
	logA := filepath.Join(dir, "a.log")
	_, done := startLogged(t, logA, []string{"TMPDIR=" + tmp, "XDG_STATE_HOME=" + t.TempDir()},
		"worker", "--store", dsnA, "--max-jobs", "2")
	waitFor(t, 5*time.Minute, logA, "the worker to reach the measured step", func() bool { return strings.Contains(logged(logA), "postload ...") })
	first := listJobs(t, dsn)[id]
	cut(t, admin)
	waitFor(t, 3*time.Minute, logA, "the worker to stop its job", func() bool {
		return strings.Contains(logged(logA), "stopped, cut off from the store")
	})
	checkEmpty(t, tmp)
	letIn(t, admin)
	select {
	case err := <-done:
		if err != nil || !strings.Contains(logged(logA), "2 job(s) done") {
			t.Fatalf("worker: %v; want exit 0 after the job's two attempts\n%s", err, logged(logA))
		}
	case <-time.After(10 * time.Minute): // a hang guard
		t.Fatalf("the worker did not end:\n%s", logged(logA))
	}
	checkEmpty(t, tmp)
	j := listJobs(t, dsn)[id]
	if j.State != "completed" || j.Attempt != 2 || j.Output.Worker != first.Output.Worker || len(j.Output.Earlier) != 1 ||
		j.Output.Earlier[0] != first.Output.Experiment || !strings.Contains(strings.Join(j.Errors, "\n"), "cut off from the store") {
		t.Fatalf("job %d: %+v; want completed at attempt 2 by the same worker, attempt 1 cut off, its experiment %d as earlier",
			id, j, first.Output.Experiment)
	}
	q, err := fleet.Open(ctx, dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if refused, err := q.Refused(ctx, id); err != nil || len(refused) != 0 {
		t.Errorf("refused writes of job %d: %+v %v; want none, the worker holding its job throughout", id, refused, err)
	}
	runs := jobRuns(t, dsn, id)
	if len(runs[store.StatusOK]) != 1 || runs[store.StatusOK][0].ExperimentID != j.Output.Experiment ||
		len(runs[store.StatusSuperseded]) != 1 || runs[store.StatusSuperseded][0].ExperimentID != first.Output.Experiment ||
		len(runs) != 2 {
		t.Errorf("runs of job %d by status: %+v; want attempt 2's ok and attempt 1's superseded", id, runs)
	}
}
