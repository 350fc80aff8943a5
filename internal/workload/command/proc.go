package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"benchlab/internal/childproc"
)

// This file runs one program in its own process group, bounded in time:
// SIGTERM to the group when its time is up (or the run is interrupted),
// SIGKILL a while later, and SIGKILL to whatever is left of the group once
// the program has exited, so that nothing it started outlives its step.

// maxOutput bounds what is kept of a program's output (each stream).
const maxOutput = 64 << 20

// tailLines is how many of the last stderr lines an error quotes.
const tailLines = 8

// limits bound a program's run.
type limits struct {
	// term is when the group gets SIGTERM, from the start; kill how long
	// after SIGTERM it gets SIGKILL.
	term, kill time.Duration
}

// outcome is what a program did.
type outcome struct {
	stdout, combined []byte
	stderrTail       []string
	elapsed          time.Duration
	// timedOut: the program was still running at its limit and was sent
	// SIGTERM (then SIGKILL).
	timedOut bool
}

// output collects a program's streams: stdout alone (fio's JSON), both in
// order of arrival (a regex over the whole output), complete lines to
// onLine, and the last lines of stderr for errors.
type output struct {
	mu       sync.Mutex
	stdout   bytes.Buffer
	combined bytes.Buffer
	errTail  []string
	partial  [2][]byte
	onLine   func(line string)
}

type stream struct {
	o   *output
	idx int // 0 stdout, 1 stderr
}

func (s stream) Write(p []byte) (int, error) {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.idx == 0 && o.stdout.Len() < maxOutput {
		o.stdout.Write(p)
	}
	if o.combined.Len() < 2*maxOutput {
		o.combined.Write(p)
	}
	buf := append(o.partial[s.idx], p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		o.line(s.idx, string(bytes.TrimRight(buf[:i], "\r")))
		buf = buf[i+1:]
	}
	if len(buf) > 1<<20 { // a line without end: keep the last MiB
		buf = buf[len(buf)-1<<20:]
	}
	o.partial[s.idx] = append([]byte(nil), buf...)
	return len(p), nil
}

func (o *output) line(idx int, l string) {
	if idx == 1 && strings.TrimSpace(l) != "" {
		o.errTail = append(o.errTail, l)
		if len(o.errTail) > tailLines {
			o.errTail = o.errTail[len(o.errTail)-tailLines:]
		}
	}
	if o.onLine != nil {
		o.onLine(l)
	}
}

// flush hands on the last lines that had no newline.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, b := range o.partial {
		if len(b) > 0 {
			o.line(i, string(b))
		}
		o.partial[i] = nil
	}
}

// runProgram runs argv in dir with env until it exits or its limits end
// it. started gets its PID once it runs; exited is called when it has
// exited but is not yet reaped (both may be nil). onLine gets each line of
// either stream as it comes.
func runProgram(ctx context.Context, argv, env []string, dir string, lim limits, started func(int), exited func(),
	onLine func(string)) (outcome, error) {
	out := &output{onLine: onLine}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = stream{out, 0}, stream{out, 1}
	// Its own group, so that SIGTERM and SIGKILL reach what it started;
	// killed with benchlab if benchlab dies first.
	cmd.SysProcAttr = childproc.Attr()
	// Something that left the group (a daemon) may hold the pipes open.
	cmd.WaitDelay = 2 * time.Second
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	pid := cmd.Process.Pid
	if started != nil {
		started(pid)
	}
	var mu sync.Mutex
	timedOut := false
	signal := func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		term := time.NewTimer(lim.term)
		defer term.Stop()
		select {
		case <-term.C:
			mu.Lock()
			timedOut = true
			mu.Unlock()
		case <-ctx.Done():
		case <-stop:
			return
		}
		signal(syscall.SIGTERM)
		kill := time.NewTimer(lim.kill)
		defer kill.Stop()
		select {
		case <-kill.C:
			signal(syscall.SIGKILL)
		case <-stop:
		}
	}()
	werr := waitExited(pid)
	elapsed := time.Since(begin)
	if exited != nil && werr == nil {
		exited()
	}
	close(stop)
	<-ended
	// What the program left running in its group goes with it.
	signal(syscall.SIGKILL)
	err := cmd.Wait()
	out.flush()
	mu.Lock()
	o := outcome{elapsed: elapsed, timedOut: timedOut}
	mu.Unlock()
	out.mu.Lock()
	o.stdout, o.combined = out.stdout.Bytes(), out.combined.Bytes()
	o.stderrTail = append([]string(nil), out.errTail...)
	out.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return o, ctx.Err()
	case o.timedOut:
		return o, fmt.Errorf("%s did not end within %s: sent SIGTERM to its process group, SIGKILL %s later%s",
			filepath.Base(argv[0]), lim.term, lim.kill, o.tail())
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return o, fmt.Errorf("%s: %w%s", filepath.Base(argv[0]), err, o.tail())
	}
	return o, nil
}

// tail quotes the last lines of stderr for an error, "" when there were
// none.
func (o outcome) tail() string {
	if len(o.stderrTail) == 0 {
		return " (nothing on stderr)"
	}
	return "; last lines of stderr:\n  " + strings.Join(o.stderrTail, "\n  ")
}

// waitExited blocks until process pid has exited, without reaping it
// (waitid with WNOWAIT), so that its /proc entry still holds what it and
// its waited-for children used.
func waitExited(pid int) error {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// lookPath finds name in path (a PATH value) as exec.LookPath does in the
// process's PATH: a name with a slash is checked as it is.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	if path == "" {
		return "", fmt.Errorf("%q not found: PATH is empty", name)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on PATH (%s)", name, path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, errors.Unwrap(err))
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

var _ io.Writer = stream{}
