package meter

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCountersOnThisThread counts the events on the test's own thread while
// it touches 8 MB of fresh memory and loops: the page faults (a software
// event every Linux counts) are at least one per 4 KB page touched, and
// every event is either counted or listed as not countable with a reason,
// never both. Where the machine has hardware counters, the loop's
// instructions are counted too.
func TestCountersOnThisThread(t *testing.T) {
	if os.Geteuid() != 0 {
		if b, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); strings.TrimSpace(string(b)) > "1" {
			t.Skip("perf_event_paranoid forbids counting; tests run as root")
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	if tids := ThreadsOf("/proc", []int{os.Getpid()}); !slices.Contains(tids, tid) {
		t.Fatalf("ThreadsOf(self) = %v, lacks this thread %d", tids, tid)
	}
	c := OpenCounters([]int{tid})
	defer c.Close()
	if c.Threads != 1 {
		t.Fatalf("counted %d threads, want 1 (unsupported: %v)", c.Threads, c.Unsupported)
	}
	before := c.Read()
	const size = 8 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	unix.Munmap(mem)
	x := 0
	for i := range 20_000_000 {
		x += i ^ x>>3
	}
	d := c.Read().Sub(before)
	t.Logf("counted %v; not counted: %s (loop %d)", d, c.UnsupportedText(), x)
	if d["page-faults"] < size/4096 {
		t.Errorf("page-faults %v after touching %d pages", d["page-faults"], size/4096)
	}
	for _, ev := range CounterEvents {
		_, counted := d[ev.Name]
		why, not := c.Unsupported[ev.Name]
		if counted == not {
			t.Errorf("%s: counted %v, unsupported %v (%q); want exactly one", ev.Name, counted, not, why)
		}
	}
	// The loop alone takes milliseconds of CPU: task-clock counts it, in
	// nanoseconds.
	if d["task-clock"] < 1e6 {
		t.Errorf("task-clock %v ns after a loop of 20M iterations", d["task-clock"])
	}
	if _, ok := d["instructions"]; ok && d["instructions"] < 20_000_000 {
		t.Errorf("instructions %v for a loop of 20M iterations", d["instructions"])
	}
	if _, ok := c.Unsupported["instructions"]; ok && !strings.Contains(c.UnsupportedText(), "instructions") {
		t.Errorf("UnsupportedText %q does not name instructions", c.UnsupportedText())
	}
}

// TestCountersNoThread: a set of threads that are all gone counts nothing
// and says so for every event.
func TestCountersNoThread(t *testing.T) {
	c := OpenCounters([]int{1 << 30})
	defer c.Close()
	if c.Threads != 0 || len(c.Unsupported) != len(CounterEvents) || c.Unsupported["page-faults"] != "no thread to count" {
		t.Errorf("threads %d, unsupported %v", c.Threads, c.Unsupported)
	}
	if v := c.Read(); len(v) != 0 {
		t.Errorf("read %v from no counters", v)
	}
}

// TestCountServerEvents counts a server's threads alone (an interleaved
// step counts benchlab's per turn): a shell that, once told, runs a child
// burning 0.5 s of CPU. The child is counted through inheritance from
// the shell, so the server's task-clock holds at least most of the
// child's CPU, and no client fact (perf count or run-queue time) comes
// out.
func TestCountServerEvents(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "read x; \""+exe+"\"")
	cmd.Env = append(os.Environ(), burnEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := NewStepSampler([]int{cmd.Process.Pid}, t.TempDir())
	s.CountServerEvents()
	defer s.CloseCounters()
	s.Mark()
	stdin.Write([]byte("\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	facts := s.CounterFacts()
	t.Logf("facts %v", facts)
	if clock := facts[CounterFact("server", "task-clock")]; clock < 0.9*float64(burnCPU.Nanoseconds()) {
		t.Errorf("server task-clock %.0f ns; want at least 90%% of the child's %s of CPU", clock, burnCPU)
	}
	for k := range facts {
		if strings.Contains(k, "client") {
			t.Errorf("fact %s: the client is not counted here", k)
		}
	}
}
