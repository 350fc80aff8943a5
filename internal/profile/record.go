package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"benchlab/internal/childproc"
)

// Event is the perf event that clocks the samples: a software timer on the
// CPU time of the sampled threads, which virtual machines without hardware
// counters still have.
const Event = "cpu-clock"

// Recording is a perf record process sampling the call stacks of a set of
// processes (and the threads and processes they start) into a temporary
// directory. Close always kills it and removes the directory.
type Recording struct {
	// Hz is the sampling rate: samples per second of CPU time.
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

// StartTimeout bounds how long Start waits for perf to attach and enable
// its events: on a loaded machine perf's start-up (reading every thread's
// memory maps) took over a second here.
const StartTimeout = 30 * time.Second

// Start starts sampling the call stacks of pids at hz samples per second
// of CPU time with perf record, and returns once perf has its events
// enabled: perf starts with them disabled (-D -1) and enables them when
// told through its control FIFO, answering on the ack FIFO. Only the
// processes named are attached, with the threads and processes they start
// from then on: give every member of a process tree. A process forked by
// one of them may live shorter than a sample period and go unseen (a
// PostgreSQL backend per connection): StartCgroups sees those. The error
// says why no recording could be started (perf not installed, no process
// to attach to, perf refused).
func Start(pids []int, hz int) (*Recording, error) {
	if len(pids) == 0 {
		return nil, errors.New("profile: no process to attach to")
	}
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.Itoa(p)
	}
	return start(hz, "-F", strconv.Itoa(hz), "-e", Event, "-p", strings.Join(list, ","))
}

// StartCgroups is Start for every process in the cgroups named (as perf
// record -G takes them), on every CPU, however briefly a process lives:
// perf counts the CPU time of a cgroup's tasks system-wide (-a), which
// needs root or CAP_PERFMON.
func StartCgroups(cgroups []string, hz int) (*Recording, error) {
	if len(cgroups) == 0 {
		return nil, errors.New("profile: no cgroup to sample")
	}
	args := []string{"-F", strconv.Itoa(hz), "-a"}
	for _, cg := range cgroups {
		// -G applies to the -e before it: one event per cgroup.
		args = append(args, "-e", Event, "-G", cg)
	}
	return start(hz, args...)
}

// OffCPUEvent is the tracepoint an off-CPU recording samples: every time
// a thread leaves a CPU, with the call stack it left from.
const OffCPUEvent = "sched:sched_switch"

// StartOffCPU records every switch of a thread of the cgroups named off
// its CPU (OffCPUEvent, each one sampled), for StopOffCPU. It is a
// recording of its own: perf cannot sample a tracepoint at every event and
// a clock at a frequency in one run.
func StartOffCPU(cgroups []string) (*Recording, error) {
	if len(cgroups) == 0 {
		return nil, errors.New("profile: no cgroup to sample")
	}
	args := []string{"-c", "1", "-a"}
	for _, cg := range cgroups {
		args = append(args, "-e", OffCPUEvent, "-G", cg)
	}
	return start(1, args...)
}

// start runs perf record with the sampling, event and target arguments
// given; hz is the rate they set, kept in the Recording.
func start(hz int, target ...string) (*Recording, error) {
	if hz <= 0 {
		return nil, fmt.Errorf("profile: %d samples per second; want > 0", hz)
	}
	if errNotLinux != nil {
		return nil, errNotLinux
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, errors.New("profile: perf is not installed (no perf on PATH)")
	}
	dir, err := os.MkdirTemp("", "benchlab-profile-")
	if err != nil {
		return nil, fmt.Errorf("profile: temp dir: %w", err)
	}
	r := &Recording{Hz: hz, dir: dir, data: filepath.Join(dir, "perf.data"), waited: make(chan struct{})}
	ctlPath, ackPath := filepath.Join(dir, "ctl"), filepath.Join(dir, "ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("profile: control fifo: %w", err)
		}
	}
	// Read-write opens of a FIFO do not wait for the other end.
	ctl, err := os.OpenFile(ctlPath, os.O_RDWR, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: control fifo: %w", err)
	}
	defer ctl.Close()
	ack, err := os.OpenFile(ackPath, os.O_RDWR, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: control fifo: %w", err)
	}
	defer ack.Close()
	args := append([]string{"record", "-g", "-k", "CLOCK_MONOTONIC",
		"--no-buildid", "--no-buildid-cache", "-D", "-1", "--control", "fifo:" + ctlPath + "," + ackPath,
		"-o", r.data}, target...)
	r.cmd = exec.Command(perf, args...)
	r.cmd.Dir = dir
	r.cmd.Stderr = &r.stderr
	// Its own process group, so that a Ctrl-C at the terminal reaches
	// benchlab, which stops perf itself; killed if benchlab dies.
	r.cmd.SysProcAttr = childproc.Attr()
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: start perf record: %w", err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.waited)
	}()
	if _, err := ctl.WriteString("enable\n"); err != nil {
		r.Close()
		return nil, fmt.Errorf("profile: enable perf record: %w", err)
	}
	acked := make(chan error, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := ack.Read(buf)
		if err == nil && !strings.HasPrefix(string(buf[:n]), "ack") {
			err = fmt.Errorf("perf answered %q, not ack", buf[:n])
		}
		acked <- err
	}()
	select {
	case err := <-acked:
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("profile: enable perf record: %w", err)
		}
		return r, nil
	case <-r.waited:
		err := r.failure()
		r.Close()
		return nil, err
	case <-time.After(StartTimeout):
		r.Close()
		return nil, fmt.Errorf("profile: perf record did not enable its events within %s", StartTimeout)
	}
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
// exited after 10 s) and folds the samples taken in ws, on perf's clock
// (Now, At; Span(0, 0): all). It does not remove the temporary directory:
// Close does.
func (r *Recording) Stop(ws Windows) (Stacks, error) {
	return r.stop(func(out io.Reader) (Stacks, error) { return Fold(out, ws) })
}

// StopOffCPU ends an off-CPU recording (StartOffCPU) as Stop does and
// folds its switches in ws by off-CPU time (FoldOffCPU).
func (r *Recording) StopOffCPU(ws Windows) (Stacks, error) {
	return r.stop(func(out io.Reader) (Stacks, error) { return FoldOffCPU(out, ws) })
}

// stop ends the recording and folds perf script's output with fold.
func (r *Recording) stop(fold func(io.Reader) (Stacks, error)) (Stacks, error) {
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
	cmd.SysProcAttr = childproc.Attr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	stacks, ferr := fold(out)
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
