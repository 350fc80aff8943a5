package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Event is the perf event that clocks the samples: a software timer on the
// CPU time of the sampled threads, which virtual machines without hardware
// counters still have.
const Event = "cpu-clock"

// Recording is a perf record process sampling the call stacks of a set of
// processes (and the threads and processes they start) into a temporary
// directory. Close always kills it and removes the directory.
type Recording struct {
	Hz     int
	dir    string
	data   string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	waited chan struct{}
	err    error // perf record's exit, once waited is closed
}

// Now is the time on the clock perf stamps its samples with
// (CLOCK_MONOTONIC, perf record -k), in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// At converts t to perf's clock (Now), through the monotonic reading both
// t and time.Now carry.
func At(t time.Time) int64 {
	now, mono := time.Now(), Now()
	return mono - int64(now.Sub(t))
}

// Start starts sampling the call stacks of pids at hz samples per second
// of CPU time with perf record, and returns once perf has begun writing
// (or after a few seconds). Only the processes named are attached, with
// the threads and processes they start from then on: give every member of
// a process tree. The error says why no recording could be started (perf
// not installed, no process to attach to, perf refused).
func Start(pids []int, hz int) (*Recording, error) {
	if hz <= 0 {
		return nil, fmt.Errorf("profile: %d samples per second; want > 0", hz)
	}
	if len(pids) == 0 {
		return nil, errors.New("profile: no process to attach to")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, errors.New("profile: perf is not installed (no perf on PATH)")
	}
	dir, err := os.MkdirTemp("", "benchlab-profile-")
	if err != nil {
		return nil, fmt.Errorf("profile: temp dir: %w", err)
	}
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.Itoa(p)
	}
	r := &Recording{Hz: hz, dir: dir, data: filepath.Join(dir, "perf.data"), waited: make(chan struct{})}
	r.cmd = exec.Command(perf, "record", "-F", strconv.Itoa(hz), "-g", "-e", Event, "-k", "CLOCK_MONOTONIC", "--no-buildid", "--no-buildid-cache",
		"-p", strings.Join(list, ","), "-o", r.data)
	r.cmd.Dir = dir
	r.cmd.Stderr = &r.stderr
	// Its own process group, so that a Ctrl-C at the terminal reaches
	// benchlab, which stops perf itself; killed if benchlab dies.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: start perf record: %w", err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.waited)
	}()
	// perf writes its file's header once its events are open.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(r.data); err == nil && fi.Size() > 0 {
			return r, nil
		}
		select {
		case <-r.waited:
			err := r.failure()
			r.Close()
			return nil, err
		case <-time.After(10 * time.Millisecond):
		}
	}
	return r, nil
}

// failure describes how perf record ended, with the last line of its
// error output.
func (r *Recording) failure() error {
	msg := ""
	for _, l := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "[ perf record:") {
			msg = l
			break
		}
	}
	if msg == "" {
		msg = fmt.Sprint(r.err)
	}
	return fmt.Errorf("profile: perf record failed: %s", msg)
}

// Stop ends the recording (SIGINT, as perf expects; SIGKILL if it has not
// exited after 10 s) and folds the samples taken at from <= t < to on
// perf's clock (Now, At; to = 0: all). It does not remove the temporary
// directory: Close does.
func (r *Recording) Stop(from, to int64) (Stacks, error) {
	select {
	case <-r.waited:
		if r.err != nil {
			return nil, r.failure()
		}
	default:
		_ = r.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-r.waited:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.waited
			return nil, errors.New("profile: perf record did not stop within 10 s of SIGINT; killed")
		}
	}
	if fi, err := os.Stat(r.data); err != nil || fi.Size() == 0 {
		return nil, r.failure()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cmd.Path, "script", "-i", r.data, "--ns",
		"-F", "comm,pid,tid,time,period,event,ip,sym,dso")
	cmd.Dir = r.dir
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	stacks, ferr := Fold(out, from, to)
	if ferr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if ferr != nil {
		return nil, ferr
	}
	if werr != nil {
		return nil, fmt.Errorf("profile: perf script: %v: %s", werr, strings.TrimSpace(errOut.String()))
	}
	return stacks, nil
}

// Close kills perf record if it still runs and removes the recording's
// temporary directory. It may be called more than once.
func (r *Recording) Close() {
	if r == nil {
		return
	}
	select {
	case <-r.waited:
	default:
		_ = r.cmd.Process.Kill()
		<-r.waited
	}
	os.RemoveAll(r.dir)
}
