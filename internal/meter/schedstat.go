package meter

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SchedTimes are a thread's (or a set of threads') scheduler times from
// /proc/<pid>/task/<tid>/schedstat: nanoseconds spent running on a CPU and
// nanoseconds spent runnable but waiting for one (the run queue's delay).
// Waiting is what a busy machine adds to a step without showing in its CPU
// time: a thread that had to wait 30% of its running time for a CPU did 30%
// less in the same wall time, whatever the database did.
type SchedTimes struct {
	RunNs, WaitNs int64
}

// Add sums two SchedTimes.
func (a SchedTimes) Add(b SchedTimes) SchedTimes {
	return SchedTimes{RunNs: a.RunNs + b.RunNs, WaitNs: a.WaitNs + b.WaitNs}
}

// WaitShare is the waiting time over the running time (0 when nothing ran).
func (a SchedTimes) WaitShare() float64 {
	if a.RunNs <= 0 {
		return 0
	}
	return float64(a.WaitNs) / float64(a.RunNs)
}

// ParseSchedstat reads the first two fields of a schedstat file: running
// and waiting nanoseconds.
func ParseSchedstat(b []byte) (SchedTimes, bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return SchedTimes{}, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || run < 0 || wait < 0 {
		return SchedTimes{}, false
	}
	return SchedTimes{RunNs: run, WaitNs: wait}, true
}

// schedKey names a thread of a process.
type schedKey struct{ pid, tid int }

// schedSnapshot is the scheduler times of every thread of some processes at
// one moment. ok is false when the kernel has no schedstat files
// (CONFIG_SCHEDSTATS off) for any thread read.
type schedSnapshot struct {
	threads map[schedKey]SchedTimes
	ok      bool
}

// readSched reads the schedstat of every thread of pids under procDir.
// Threads that vanish while being read are skipped.
func readSched(procDir string, pids []int) schedSnapshot {
	s := schedSnapshot{threads: map[schedKey]SchedTimes{}, ok: true}
	for _, pid := range pids {
		dir := filepath.Join(procDir, strconv.Itoa(pid), "task")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
			if err != nil {
				if !os.IsNotExist(err) {
					s.ok = false
				}
				continue
			}
			t, ok := ParseSchedstat(b)
			if !ok {
				s.ok = false
				continue
			}
			s.threads[schedKey{pid, tid}] = t
		}
	}
	if len(s.threads) == 0 {
		s.ok = false
	}
	return s
}

// since sums, over the threads of s, their times since mark: a thread
// already there at mark counts its growth, a thread born after mark all its
// times. Threads that ended before s are not counted (their times went
// with them), so the sum can fall short when threads come and go.
func (s schedSnapshot) since(mark schedSnapshot) SchedTimes {
	var sum SchedTimes
	for k, t := range s.threads {
		m := mark.threads[k]
		if t.RunNs < m.RunNs || t.WaitNs < m.WaitNs { // a reused thread ID
			m = SchedTimes{}
		}
		sum = sum.Add(SchedTimes{RunNs: t.RunNs - m.RunNs, WaitNs: t.WaitNs - m.WaitNs})
	}
	return sum
}

// without drops the threads tids from s.
func (s schedSnapshot) without(tids []int) schedSnapshot {
	for k := range s.threads {
		if slices.Contains(tids, k.tid) {
			delete(s.threads, k)
		}
	}
	return s
}
