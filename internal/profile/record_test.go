package profile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRecordBusyChild(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	// A binary go build makes keeps its symbol table (go test's and go
	// run's do not), so perf can name its functions.
	bin := filepath.Join(t.TempDir(), "busy")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/busy").CombinedOutput(); err != nil {
		t.Fatalf("build the busy child: %v\n%s", err, out)
	}
	child := exec.Command(bin, "20")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	rec, err := Start([]int{child.Process.Pid}, 199)
	if err != nil {
		t.Fatalf("perf record: %v", err)
	}
	from := Now()
	// Long enough for the child to be on CPU for a few dozen samples on a
	// machine shared with other work.
	time.Sleep(2 * time.Second)
	to := Now()
	stacks, err := rec.Stop(Span(from, to))
	pid := rec.cmd.Process.Pid
	dir := rec.dir
	rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	self := stacks.Self()
	hot := self["main.spinHot"]
	if hot == 0 || hot*2 < stacks.Samples() {
		t.Errorf("main.spinHot has %d of %d samples as leaf, want most; self = %v", hot, stacks.Samples(), self)
	}
	for k := range stacks {
		if !strings.HasPrefix(k, "busy;") {
			t.Errorf("stack %q does not start with the child's command name", k)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s left behind (%v)", dir, err)
	}
	if err := exec.Command("kill", "-0", itoa(pid)).Run(); err == nil {
		t.Errorf("perf record (pid %d) still runs after Close", pid)
	}
}

func TestRecordRefused(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	// A PID that cannot exist (above pid_max): perf refuses to attach.
	rec, err := Start([]int{1 << 30}, 99)
	if err == nil {
		_, err = rec.Stop(Span(0, 0))
		rec.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "perf record") {
		t.Errorf("attach to no process: err = %v, want perf record's refusal", err)
	}
	if _, err := Start(nil, 99); err == nil {
		t.Error("no PIDs: no error")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
