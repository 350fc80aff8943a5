package meter

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	got, ok := ParseSchedstat([]byte("1500000000 500000000 42\n"))
	if !ok || got.RunNs != 1_500_000_000 || got.WaitNs != 500_000_000 {
		t.Fatalf("ParseSchedstat = %+v, %v; want run 1.5e9, wait 5e8", got, ok)
	}
	if got.WaitShare() != 1.0/3 {
		t.Errorf("WaitShare = %v, want 1/3", got.WaitShare())
	}
	for _, bad := range []string{"", "12", "x 1 2", "1 -2 3"} {
		if _, ok := ParseSchedstat([]byte(bad)); ok {
			t.Errorf("ParseSchedstat(%q) ok, want refused", bad)
		}
	}
}

// TestSchedSince: a thread present at the mark counts its growth, one born
// after it all of its times, one whose counters went down (a reused ID) all
// of its new times; a thread gone by the end counts nothing.
func TestSchedSince(t *testing.T) {
	mark := schedSnapshot{ok: true, threads: map[schedKey]SchedTimes{
		{1, 1}: {RunNs: 100, WaitNs: 10},
		{1, 2}: {RunNs: 500, WaitNs: 50},
		{1, 3}: {RunNs: 7, WaitNs: 7},
	}}
	now := schedSnapshot{ok: true, threads: map[schedKey]SchedTimes{
		{1, 1}: {RunNs: 300, WaitNs: 40},  // +200, +30
		{1, 2}: {RunNs: 20, WaitNs: 5},    // reused: 20, 5
		{1, 4}: {RunNs: 1000, WaitNs: 90}, // born: 1000, 90
	}}
	if got, want := now.since(mark), (SchedTimes{RunNs: 1220, WaitNs: 125}); got != want {
		t.Fatalf("since = %+v, want %+v", got, want)
	}
	// Leaving thread 4 out (a speed probe) leaves 1 and 2.
	if got, want := now.without([]int{4}).since(mark), (SchedTimes{RunNs: 220, WaitNs: 35}); got != want {
		t.Fatalf("since without thread 4 = %+v, want %+v", got, want)
	}
}

// TestSchedFactsSeeCrowdedCPU runs a "server" of two busy loops pinned to
// one CPU: each can run at most half the time, so the tree's threads wait
// for the CPU about as long as they run, and the step's facts must say so
// (wait at least a third of run), and run plus wait is the two loops' 2
// seconds when CPU 0 was theirs; benchlab's own threads have facts too.
func TestSchedFactsSeeCrowdedCPU(t *testing.T) {
	cmd := exec.Command("taskset", "-c", "0", "sh", "-c", "sh -c 'while :; do :; done' & sh -c 'while :; do :; done' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	// Both loops started, however slowly the machine forks them.
	for groupSize(t, cmd.Process.Pid) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	s := NewStepSampler([]int{cmd.Process.Pid}, "")
	outer := time.Now()
	s.Mark()
	inner := time.Now()
	steal0 := cpu0Steal(t)
	time.Sleep(time.Second)
	steal := cpu0Steal(t) - steal0
	innerEnd := time.Now()
	s.Sample()
	outerEnd := time.Since(outer).Seconds()
	innerSecs := innerEnd.Sub(inner).Seconds()
	f := s.CounterFacts()
	run, okR := f[SchedRunFact("server")]
	wait, okW := f[SchedWaitFact("server")]
	if !okR || !okW {
		t.Fatalf("no server sched facts in %v", f)
	}
	// Whatever the load, two loops pinned to one CPU run at most that
	// CPU's time (10% for the kernel's accounting in ticks), and two
	// runnable loops on one CPU make one wait while the other runs.
	if run <= 0 || run > 1.1*outerEnd || wait <= 0 {
		t.Errorf("server ran %.2f s and waited %.2f s over at most %.2f s; want both, and at most one CPU's time of running",
			run, wait, outerEnd)
	}
	// The kernel adds a thread's wait for the CPU when the thread gets it:
	// a loop still waiting at a read has that wait missing. When other
	// processes crowd CPU 0 (the loops ran under 90% of the second; one
	// run of this test on a loaded machine had 0.10 s), a loop may wait
	// most of the second and have none of it counted yet, so the sums
	// below are checked only when the CPU was the loops'.
	if crowded := run < 0.9*(innerSecs-steal); crowded {
		t.Logf("CPU 0 crowded by other work: the loops ran %.2f s of %.2f s (waited %.2f s); sums not checked", run, innerSecs, wait)
	} else {
		// Both loops are always runnable: each second of each loop is
		// spent running or waiting, so the two account for twice the time
		// between the sampler's reads (between the test's clock readings
		// inside and around them; 10% for ticks). Time the hypervisor
		// took CPU 0 away (steal) is neither.
		if run+wait < 0.9*2*(innerSecs-steal) || run+wait > 1.1*2*outerEnd {
			t.Errorf("server ran %.2f s and waited %.2f s over %.2f-%.2f s of two busy loops (CPU 0 stolen %.2f s), want twice that in all",
				run, wait, innerSecs, outerEnd, steal)
		}
		if wait < run/3 {
			t.Errorf("server waited %.2f s for %.2f s of running, want at least a third: two loops share one CPU", wait, run)
		}
	}
	if _, ok := f[SchedRunFact("client")]; !ok {
		t.Errorf("no client sched facts in %v", f)
	}
}

// cpu0Steal is the time the hypervisor has taken CPU 0 away since boot
// (/proc/stat's steal, in the kernel's 1/100 s), 0 where it is not counted.
func cpu0Steal(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 8 && f[0] == "cpu0" {
			v, _ := strconv.ParseFloat(f[8], 64)
			return v / 100
		}
	}
	return 0
}

// groupSize counts the processes of process group pgid.
func groupSize(t *testing.T, pgid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so read
		// after its closing parenthesis.
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); i > 0 && len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}
