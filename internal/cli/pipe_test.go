package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestClosedOutputStopsRun runs an experiment in a child process whose
// output pipe is closed after the first line, as `benchlab run | head -1`
// does: the run stops within seconds as if interrupted, keeps what it
// measured, and leaves no temp work dir (before, the broken pipe's signal
// killed it on the spot).
func TestClosedOutputStopsRun(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	storeFile := filepath.Join(dir, "r.db")
	args := []string{"run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000", "--time", "60",
		"--warmup", "0s", "--report-interval", "1s", "--store", storeFile}
	cmd := childCmd([]string{"TMPDIR=" + tmp}, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the measured step's progress lines to start, then close.
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the run's output ended before its first progress line: %v", err)
		}
		if strings.Contains(line, "s ] point-query") {
			break
		}
	}
	out.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// A run that ignored its closed output would end after its 60 s test
	// with exit 0, which the exit code check catches; the guard is for a
	// hang.
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the run went on for 5 minutes after its output closed")
	}
	if st := cmd.ProcessState; st.ExitCode() != ExitInterrupted {
		t.Errorf("child ended with %v (exit code %d), want exit code %d (interrupted)", err, st.ExitCode(), ExitInterrupted)
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Fatalf("runs %+v %v; want one interrupted run", runs, err)
	}
}
