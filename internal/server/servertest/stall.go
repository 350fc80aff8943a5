package servertest

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Stalled stops the target's server (SIGSTOP of its process tree, as a
// hung host or a debugger would) for stall, about a second into a 3 s
// point-query test run with a 500 ms operation timeout, then lets it go
// on. The stall is a result, not a silent ok: the operation under way
// times out, its 500 ms are in the stored max latency, the test and the
// run are failed, and no process is left.
func Stalled(t *testing.T, engine string, stall time.Duration) {
	work := t.TempDir()
	s := Spec(t, "stalled", work, spec.Target{Name: "hung", Engine: engine})
	s.Workload.Tests = []string{"point-query"}
	s.Workload.ReadTime = spec.Duration{Duration: 3 * time.Second}
	s.Workload.ReportInterval = spec.Duration{Duration: time.Second}
	s.Workload.OpTimeout = spec.Duration{Duration: 500 * time.Millisecond}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var (
		mu               sync.Mutex
		stopped, resumed time.Time
		pids             []int
	)
	resume := func() {
		mu.Lock()
		defer mu.Unlock()
		if len(pids) > 0 && resumed.IsZero() {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGCONT)
			}
			resumed = time.Now()
		}
	}
	t.Cleanup(resume)
	// The first live line of the test comes a second after it starts.
	out := NewTrigger("point-query thds", func() {
		// PostgreSQL's children each start a session of their own: the
		// whole process tree is stopped, not one group.
		tree := meter.ProcessTree([]int{ServerPID(t, filepath.Join(work, "hung-r1"))})
		mu.Lock()
		pids, stopped = tree, time.Now()
		mu.Unlock()
		for _, pid := range tree {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Errorf("stop server process %d: %v", pid, err)
			}
		}
		time.AfterFunc(stall, resume)
	})
	st, runs, err := Run(context.Background(), t, s, out)
	t.Logf("log:\n%s", out.String())
	mu.Lock()
	if stopped.IsZero() {
		mu.Unlock()
		t.Fatal("the server was never stopped: no live line of point-query")
	}
	mu.Unlock()
	if err == nil || len(runs) != 1 || runs[0].Status != store.StatusFailed {
		t.Fatalf("error %v, runs %+v; want one failed run", err, runs)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	var pq *store.Result
	for i := range res {
		if res[i].Test == "point-query" {
			pq = &res[i]
		}
	}
	if pq == nil {
		t.Fatalf("no point-query result among %d", len(res))
	}
	t.Logf("point-query: %s, %d events, %d errors, max %s, p99.9 %s, samples %q", pq.Status, pq.Events, pq.Errors,
		pq.Latency.Max, pq.Latency.P999, pq.ErrorSamples)
	if pq.Status != store.StatusFailed || pq.Errors < 1 || pq.Latency.Max < 500*time.Millisecond {
		t.Errorf("point-query stored %s with %d errors and max %s; want failed, the timed-out operation counted "+
			"and its 500 ms in max", pq.Status, pq.Errors, pq.Latency.Max)
	}
	if !strings.Contains(strings.Join(pq.ErrorSamples, "\n"), runner.ErrOpTimeout.Error()) {
		t.Errorf("error samples %q do not name the timeout", pq.ErrorSamples)
	}
	resume()
	NoProcs(t, work)
}
