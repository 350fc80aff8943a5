package dbbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"benchlab/internal/childproc"
)

// defaultOverrun is how long past its duration a step's db_bench may run
// when the runner gives no bound (KVStep.Overrun).
const defaultOverrun = 600 * time.Second

// killAfter is how long after SIGTERM a db_bench still running gets
// SIGKILL.
const killAfter = 5 * time.Second

// ErrOverran is wrapped by the error of a db_bench stopped at its bound.
var ErrOverran = errors.New("did not end in time")

// toolRun is what one run of the tool left.
type toolRun struct {
	out     []byte
	elapsed time.Duration
	err     error
}

// runTool runs bin with args in a process group of its own (killed with
// benchlab, childproc.Attr) until it exits, limit passes or ctx ends; then
// the group gets SIGTERM, and SIGKILL kill later if the tool has not
// exited, so that no thread of it works on past its step. What it printed
// is kept either way.
func runTool(ctx context.Context, bin string, args []string, limit, kill time.Duration) toolRun {
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = childproc.Attr()
	// A process that left the group may hold the output pipe open.
	cmd.WaitDelay = 2 * time.Second
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return toolRun{err: fmt.Errorf("start %s: %w", bin, err)}
	}
	pid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	bound := time.NewTimer(limit)
	defer bound.Stop()
	var stopped error
	var err error
	select {
	case err = <-waited:
	case <-bound.C:
		stopped = fmt.Errorf("%w: still running %s after its start (its duration and overrun bound)", ErrOverran, limit)
	case <-ctx.Done():
		stopped = fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	if stopped != nil {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		killed := time.NewTimer(kill)
		select {
		case err = <-waited:
			stopped = fmt.Errorf("%w; sent SIGTERM to its process group", stopped)
		case <-killed.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			err = <-waited
			stopped = fmt.Errorf("%w; sent SIGTERM to its process group, SIGKILL %s later", stopped, kill)
		}
		killed.Stop()
		err = stopped
	}
	return toolRun{out: out.Bytes(), elapsed: time.Since(begin), err: err}
}

// progress matches db_bench's progress lines ("... finished 30000 ops"),
// which it ends with carriage returns.
var progress = regexp.MustCompile(`\.\.\. finished (\d+) ops`)

// progressOps is the count of db_bench's last progress line: the
// operations done so far by a tool that was stopped (with several threads,
// one thread's count; each thread reports its own), 0 when it printed none.
func progressOps(out []byte) int64 {
	ms := progress.FindAllSubmatch(out, -1)
	if len(ms) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(ms[len(ms)-1][1]), 10, 64)
	return n
}
