package meter

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParsePidStat(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	text := "4242 (my (odd) proc) S 4200 4242 4200 0 -1 4194560 1500 0 3 0 1234 567 89 10 20 0 7 0 98765 " +
		"225280000 5000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	s, err := ParsePidStat([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := PidStat{PID: 4242, PPID: 4200, Comm: "my (odd) proc", State: 'S', UTime: 1234, STime: 567,
		CUTime: 89, CSTime: 10, NumThreads: 7, StartTime: 98765}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if s.CPU() != 1234+567+89+10 {
		t.Errorf("CPU() = %d", s.CPU())
	}
	for _, bad := range []string{"", "12 noparen S 1", "12 (x) S 1 2 3", "x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := ParsePidStat([]byte(bad)); err == nil {
			t.Errorf("ParsePidStat(%q): want an error", bad)
		}
	}
}

func TestParsePidIO(t *testing.T) {
	text := "rchar: 6976\nwchar: 100\nsyscr: 10\nsyscw: 3\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
	io, err := ParsePidIO([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if io != (PidIO{ReadBytes: 4096, WriteBytes: 8192, SysCR: 10, SysCW: 3}) {
		t.Errorf("got %+v", io)
	}
	if _, err := ParsePidIO([]byte("rchar: 1\nwchar: 2\n")); err == nil {
		t.Error("io without read_bytes: want an error")
	}
}

func TestParsePidStatus(t *testing.T) {
	text := `Name:	postgres
State:	S (sleeping)
VmHWM:	  150000 kB
VmRSS:	  120000 kB
RssAnon:	   20000 kB
RssFile:	   30000 kB
RssShmem:	   70000 kB
Threads:	1
voluntary_ctxt_switches:	1500
nonvoluntary_ctxt_switches:	25
`
	s, err := ParsePidStatus([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := PidStatus{CtxSwitches: 1525, RSS: 120000 << 10, RssAnon: 20000 << 10, RssFile: 30000 << 10,
		RssShmem: 70000 << 10, HasSplit: true}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	// A kernel thread has no Vm lines but does have switches.
	k, err := ParsePidStatus([]byte("Name:\tkworker\nvoluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t4\n"))
	if err != nil || k.CtxSwitches != 7 || k.RSS != 0 {
		t.Errorf("kernel thread: %+v %v", k, err)
	}
	if _, err := ParsePidStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("status without switch counts: want an error")
	}
}

func TestParseDiskstats(t *testing.T) {
	text := `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 34711 6309 2263602 8909 510933 30645 26163080 233055 0 35952 249825 26357 23 2227592 3346 144838 4513
 254       1 vda1 100 0 800 5 200 0 1600 9 0 10 14
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
`
	name, c, ok := ParseDiskstats([]byte(text), 254, 0)
	if !ok || name != "vda" {
		t.Fatalf("vda: %q %v", name, ok)
	}
	if c != (DiskCounters{Reads: 34711, Writes: 510933, ReadBytes: 2263602 * 512, WriteBytes: 26163080 * 512}) {
		t.Errorf("vda counters %+v", c)
	}
	// A partition (old 14-field format) is matched by its own minor.
	name, c, ok = ParseDiskstats([]byte(text), 254, 1)
	if !ok || name != "vda1" || c.Reads != 100 || c.WriteBytes != 1600*512 {
		t.Errorf("vda1: %q %+v %v", name, c, ok)
	}
	if _, _, ok := ParseDiskstats([]byte(text), 8, 0); ok {
		t.Error("sda is not in the text: want not found")
	}
}

func TestParseCPUStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	text := "cpu  33894 10 8849 458828 2530 1 2147 16537 500 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\n"
	c, err := ParseCPUStat([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	total := int64(33894 + 10 + 8849 + 458828 + 2530 + 1 + 2147 + 16537) // guest is inside user
	if c.Total != total || c.Steal != 16537 || c.Busy != total-458828-2530-16537 {
		t.Errorf("got %+v, want total %d", c, total)
	}
	if _, err := ParseCPUStat([]byte("cpu 1 2 3\n")); err == nil {
		t.Error("short cpu line: want an error")
	}
}

func TestDevNumbers(t *testing.T) {
	for _, c := range []struct {
		dev          uint64
		major, minor uint32
	}{{0xfe00, 254, 0}, {0x801, 8, 1}, {0x10303, 259, 3}, {0x10082c, 8, 300}} {
		ma, mi := devNumbers(c.dev)
		if ma != c.major || mi != c.minor {
			t.Errorf("devNumbers(%#x) = %d:%d, want %d:%d", c.dev, ma, mi, c.major, c.minor)
		}
	}
}

func TestParsePerfSupport(t *testing.T) {
	vm := "<not supported>,,instructions,0,100.00,,\n<not supported>,,cycles,0,100.00,,\n"
	if got := parsePerfSupport(vm, perfEvents); got != "not supported: instructions, cycles" {
		t.Errorf("vm: %q", got)
	}
	metal := "1234567,,instructions:u,500,100.00,1.2,insn per cycle\n<not counted>,,cycles:u,0,0,,\n"
	if got := parsePerfSupport(metal, perfEvents); got != "supported: instructions; not supported: cycles" {
		t.Errorf("mixed: %q", got)
	}
}

// tree builds a treeSample from pid -> (ppid, cpu).
func tree(procs map[int][2]int64) treeSample {
	ts := treeSample{procs: map[procKey]procEntry{}, roots: 1}
	for pid, v := range procs {
		ts.procs[procKey{pid, int64(pid) * 10}] = procEntry{ppid: int(v[0]), cpu: v[1]}
	}
	return ts
}

// TestTreeDelta checks the accounting of processes that come and go: a
// child waited for by its parent moves into the parent's cumulative time and
// must not count twice; a new child counts in full; one that left without
// being waited for keeps what it had used.
func TestTreeDelta(t *testing.T) {
	cpu := func(e procEntry) (int64, bool) { return e.cpu, true }
	cases := []struct {
		name      string
		prev, cur map[int][2]int64
		want      int64
	}{
		{"steady", map[int][2]int64{1: {0, 100}, 2: {1, 50}}, map[int][2]int64{1: {0, 110}, 2: {1, 70}}, 30},
		// Child 2 had 50, used 20 more and was reaped: root's cutime grew by 70.
		{"reaped child", map[int][2]int64{1: {0, 100}, 2: {1, 50}}, map[int][2]int64{1: {0, 100 + 70}}, 20},
		// Grandchild 3 reaped by 2, then 2 reaped by root 1.
		{"reaped chain", map[int][2]int64{1: {0, 100}, 2: {1, 10}, 3: {2, 5}}, map[int][2]int64{1: {0, 100 + 10 + 5 + 4}}, 4},
		{"new child", map[int][2]int64{1: {0, 100}}, map[int][2]int64{1: {0, 105}, 4: {1, 30}}, 35},
		// Child 2 (100 ticks) vanished and root is gone too: nothing absorbs it, nothing is subtracted.
		{"lost", map[int][2]int64{1: {0, 100}, 2: {1, 40}}, map[int][2]int64{5: {0, 0}}, 0},
	}
	for _, c := range cases {
		got, ok := treeDelta(tree(c.prev), tree(c.cur), true, cpu)
		if !ok || got != c.want {
			t.Errorf("%s: delta %d (ok %v), want %d", c.name, got, ok, c.want)
		}
	}
	// Context switches are not absorbed by the parent: a reaped child's
	// count is gone and the parent's own growth is all that counts.
	got, _ := treeDelta(tree(map[int][2]int64{1: {0, 100}, 2: {1, 50}}), tree(map[int][2]int64{1: {0, 103}}), false, cpu)
	if got != 3 {
		t.Errorf("not absorbing: delta %d, want 3", got)
	}
	unreadable := func(e procEntry) (int64, bool) { return 0, e.cpu < 100 }
	if _, ok := treeDelta(tree(map[int][2]int64{1: {0, 1}}), tree(map[int][2]int64{1: {0, 200}}), true, unreadable); ok {
		t.Error("an unreadable counter must make the delta not readable")
	}
}

// burnEnv makes the test binary burn burnCPU of CPU time and exit, so the
// tree test's child uses a known amount of CPU however loaded the machine is.
const (
	burnEnv = "BENCHLAB_TEST_BURN"
	burnCPU = 500 * time.Millisecond
)

func TestMain(m *testing.M) {
	if os.Getenv(burnEnv) == "1" {
		for {
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= burnCPU {
				os.Exit(0)
			}
			for i := 0; i < 1e6; i++ {
			}
		}
	}
	os.Exit(m.Run())
}

// TestProcessTreeCPU starts a shell whose child burns 0.5 s of CPU and is
// then waited for, and checks that the sampler attributes that CPU to the
// tree: while the child runs (its own stat) and after it is gone (the
// shell's cutime), without counting it twice.
func TestProcessTreeCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// After the child the shell blocks in its builtin read (no process of
	// its own) until the test ends and closes its stdin.
	cmd := exec.Command("sh", "-c", "\""+exe+"\"; read x")
	cmd.Env = append(os.Environ(), burnEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// The sampler's window opens at its last read before Mark, here its
	// creation: the test's window opens before it, so that it brackets the
	// sampler's on a machine slow to create one.
	marked := time.Now()
	s := NewStepSampler([]int{cmd.Process.Pid}, t.TempDir())
	s.Mark()
	sawChild := false
	var mid float64
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		l := s.Sample()
		if len(s.tree.procs) >= 2 {
			sawChild = true
			mid += l.ServerCPU
		} else if sawChild {
			break // the child has exited and the shell reaped it
		}
	}
	e := s.Efficiency()
	window := time.Since(marked)
	if !sawChild {
		t.Fatalf("the sampler never saw the shell's child")
	}
	if s.tree.roots != 1 {
		t.Errorf("the shell should still be alive")
	}
	if mid < 0.1 {
		t.Errorf("while the child ran: server CPU %.2f s, want most of its 0.5 s", mid)
	}
	// 10 ms ticks and a little shell and exec work on top of the 0.5 s.
	if e.ServerCPU < 0.45 || e.ServerCPU > 0.8 {
		t.Errorf("server tree CPU %.2f s: want the child's 0.5 s, counted once", e.ServerCPU)
	}
	if e.ServerCS <= 0 || e.ServerPeakRSS <= 0 {
		t.Errorf("server context switches %d, peak RSS %d: want > 0", e.ServerCS, e.ServerPeakRSS)
	}
	if e.ClientCPU < 0 || e.ClientCPU > 1 {
		t.Errorf("client CPU %.3f s: the test only slept", e.ClientCPU)
	}
	if e.MachineBusy < e.ServerCPU*0.5 || e.StealPct() < 0 || e.ForeignPct() < 0 {
		t.Errorf("machine busy %.2f s, steal %.1f%%, foreign %.1f%%", e.MachineBusy, e.StealPct(), e.ForeignPct())
	}
	// The sampler reads the kernel's clock ticks (10 ms): a tick's slack.
	if e.Seconds < 0.4 || e.Seconds > window.Seconds()+0.02 {
		t.Errorf("window %.2f s, want the child's run time (at least its 0.5 s CPU), within the test's %.2f s", e.Seconds,
			window.Seconds())
	}
}

// TestSamplerWithoutServer checks that an in-process engine's server
// figures say "not measured", the client's own CPU is seen, and the device
// of the data dir is found or said to be unreadable, never invented.
func TestSamplerWithoutServer(t *testing.T) {
	dir := t.TempDir()
	s := NewStepSampler(nil, dir)
	s.Mark()
	// Burn 100 ms of the process's CPU time (not of the clock's: on a
	// loaded machine 100 ms of the clock held a few ms of CPU) and write
	// a file.
	burnCPUTime(t, 100*time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := s.Sample()
	e := s.Efficiency()
	if e.ServerCPU != NotMeasured || e.ServerReadBytes != NotMeasured || l.ServerCPU != NotMeasured {
		t.Errorf("server figures without a server: cpu %v io %v interval %v", e.ServerCPU, e.ServerReadBytes, l.ServerCPU)
	}
	// The kernel counts CPU in 10 ms ticks: 0.1 s may read a tick short.
	if e.ClientCPU < 0.08 || l.ClientCPU < 0.08 || e.ClientCPU > 1 {
		t.Errorf("client CPU %.3f s (interval %.3f): want the 0.1 s busy loop", e.ClientCPU, l.ClientCPU)
	}
	if e.ClientWriteCalls < 1 || e.ClientWriteBytes < 0 {
		t.Errorf("client write calls %d bytes %d: want the file write", e.ClientWriteCalls, e.ClientWriteBytes)
	}
	// On a block device (not tmpfs) dirtied pages count as written bytes.
	if e.Device != "" && e.ClientWriteBytes < 1<<20 {
		t.Errorf("client write bytes %d on %s: want the 1 MiB file", e.ClientWriteBytes, e.Device)
	}
	if (e.Device == "") != (e.DevReads == NotReadable) {
		t.Errorf("device %q with reads %d: a device's counters are readable, a missing one's are not", e.Device, e.DevReads)
	}
}

// burnCPUTime spins until the process has used d more CPU time.
func burnCPUTime(t *testing.T, d time.Duration) {
	t.Helper()
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for end := used() + d; used() < end; {
		for i := 0; i < 1e5; i++ {
		}
	}
}

// TestLightSampleFindsNewChildren checks the samples between two full ones:
// they read the known processes and the children those have started since,
// without listing /proc, and drop processes that have exited.
func TestLightSampleFindsNewChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid())); err != nil {
		t.Skip("kernel without /proc/PID/task/TID/children: every sample is a full one")
	}
	// The shell's first child exits after 0.5 s; its second then runs (the
	// trailing true keeps the shell from exec'ing it in its own place).
	cmd := exec.Command("sh", "-c", "sleep 0.5; sleep 30; true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond)
	s := NewStepSampler([]int{cmd.Process.Pid}, "")
	first := map[int]bool{}
	for k := range s.tree.procs {
		first[k.pid] = true
	}
	if len(first) != 2 {
		t.Fatalf("first (full) sample: %d processes, want the shell and its first sleep", len(first))
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		s.Sample()
		if s.tree.full {
			t.Fatal("a sample within fullEvery of the first was a full one")
		}
		if len(s.tree.procs) == 2 {
			var fresh bool
			for k := range s.tree.procs {
				fresh = fresh || !first[k.pid]
			}
			if fresh {
				return // the second sleep, and the first one gone
			}
		}
	}
	t.Fatalf("light samples never saw the shell's second child in place of its first: %v", s.tree.procs)
}
