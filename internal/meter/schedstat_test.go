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
// seconds; benchlab's own threads have facts too.
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
	time.Sleep(time.Second)
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
	// Both loops are always runnable: each second of each loop is spent
	// running or waiting, whatever else the machine does, so the two
	// account for twice the time between the sampler's reads (between the
	// test's clock readings inside and around them; 10% for the kernel's
	// accounting in ticks).
	if run+wait < 0.9*2*innerSecs || run+wait > 1.1*2*outerEnd {
		t.Errorf("server ran %.2f s and waited %.2f s over %.2f-%.2f s of two busy loops, want twice that in all", run, wait,
			innerSecs, outerEnd)
	}
	if wait < run/3 {
		t.Errorf("server waited %.2f s for %.2f s of running, want at least a third: two loops share one CPU", wait, run)
	}
	if _, ok := f[SchedRunFact("client")]; !ok {
		t.Errorf("no client sched facts in %v", f)
	}
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
