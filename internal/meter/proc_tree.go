package meter

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procKey names a process: PIDs are reused, PID plus start time is not.
type procKey struct {
	pid   int
	start int64
}

// procEntry is one process of a tree sample. The *OK flags are false when
// that file could not be read (permissions, or the process exited between
// reads).
type procEntry struct {
	ppid int
	cpu  int64 // ticks, own and waited-for children's
	io   PidIO
	cs   int64
	rss  PidStatus
	ioOK bool
	csOK bool
}

// treeSample is the state of a process tree at one moment.
type treeSample struct {
	procs map[procKey]procEntry
	// roots counts the root PIDs that were alive.
	roots int
	// full is set when IO, context switches and memory were read too
	// (readTree), not only CPU (readKnown).
	full bool
}

// readTree reads the processes rooted at roots from procDir (normally
// "/proc"): the roots and every descendant, found through the ppid field of
// every process's stat, with their CPU, IO, context switches and memory.
// Processes that vanish while being read are skipped.
func readTree(procDir string, roots []int) treeSample {
	if len(roots) == 0 {
		return treeSample{procs: map[procKey]procEntry{}}
	}
	dirs, err := os.ReadDir(procDir)
	if err != nil {
		return treeSample{procs: map[procKey]procEntry{}}
	}
	stats := map[int]PidStat{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(procDir, pid); ok {
			stats[pid] = st
		}
	}
	return buildTree(procDir, roots, stats, true)
}

// readKnown is readTree's light form, for the samples between two full
// ones: the CPU of prev's processes and of the children that the roots and
// prev's parents have started since (/proc/PID/task/PID/children of their
// main threads), without listing /proc (on a busy host most of its
// processes are not the server's; reading all their stats every second cost
// 5% of the client's CPU at 64 threads) and without IO, context switches or
// memory (entries have ioOK and csOK false). ok is false when the kernel has
// no children files. A child started by another thread of a multi-threaded
// process, or by a process that had none at the last full read (a
// PostgreSQL backend), waits for the next full read.
func readKnown(procDir string, roots []int, prev treeSample) (ts treeSample, ok bool) {
	if len(roots) == 0 {
		return treeSample{procs: map[procKey]procEntry{}}, true
	}
	stats := map[int]PidStat{}
	queue := append([]int(nil), roots...)
	parents := map[int]bool{}
	for _, r := range roots {
		parents[r] = true
	}
	for k, e := range prev.procs {
		queue = append(queue, k.pid)
		parents[e.ppid] = true
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := stats[pid]; seen {
			continue
		}
		st, found := readStat(procDir, pid)
		if !found {
			continue
		}
		stats[pid] = st
		if !parents[pid] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
		if err != nil {
			if _, serr := os.Stat(filepath.Join(procDir, strconv.Itoa(pid))); serr == nil {
				return treeSample{}, false // alive without a children file
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				queue = append(queue, c)
			}
		}
	}
	return buildTree(procDir, roots, stats, false), true
}

// readStat reads and parses one process's stat.
func readStat(procDir string, pid int) (PidStat, bool) {
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return PidStat{}, false // exited since the listing
	}
	st, err := ParsePidStat(b)
	return st, err == nil
}

// buildTree keeps the processes of stats that descend from roots (through
// their ppids) and, with full, reads their IO, memory and context switches.
func buildTree(procDir string, roots []int, stats map[int]PidStat, full bool) treeSample {
	ts := treeSample{procs: map[procKey]procEntry{}, full: full}
	children := map[int][]int{}
	for pid, st := range stats {
		children[st.PPID] = append(children[st.PPID], pid)
	}
	seen := map[int]bool{}
	queue := []int{}
	for _, r := range roots {
		if _, ok := stats[r]; ok && !seen[r] {
			seen[r] = true
			queue = append(queue, r)
			ts.roots++
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st := stats[pid]
		e := procEntry{ppid: st.PPID, cpu: st.CPU()}
		if full {
			dir := filepath.Join(procDir, strconv.Itoa(pid))
			if b, err := os.ReadFile(filepath.Join(dir, "io")); err == nil {
				e.io, err = ParsePidIO(b)
				e.ioOK = err == nil
			}
			e.rss, e.cs, e.csOK = readTasks(dir, st.NumThreads)
		}
		ts.procs[procKey{pid, st.StartTime}] = e
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return ts
}

// readTasks returns a process's memory (from its own status) and its context
// switches summed over its threads: status shows one thread's switches only.
// Threads that exited take their counts with them.
func readTasks(dir string, threads int64) (PidStatus, int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return PidStatus{}, 0, false
	}
	st, err := ParsePidStatus(b)
	if err != nil {
		return PidStatus{}, 0, false
	}
	if threads <= 1 {
		return st, st.CtxSwitches, true
	}
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return st, 0, false
	}
	var cs int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "status"))
		if err != nil {
			continue // thread exited
		}
		if ts, err := ParsePidStatus(b); err == nil {
			cs += ts.CtxSwitches
		}
	}
	return st, cs, true
}

// rss is the resident memory of a tree: private and file-backed pages of
// every process plus the largest shared-memory residency of any one of them,
// so that a shared buffer pool mapped by many processes (PostgreSQL) counts
// once rather than once per process. Without the split it sums VmRSS.
func (ts treeSample) rss() int64 {
	var sum, shm int64
	for _, e := range ts.procs {
		if e.rss.HasSplit {
			sum += e.rss.RssAnon + e.rss.RssFile
			shm = max(shm, e.rss.RssShmem)
		} else {
			sum += e.rss.RSS
		}
	}
	return sum + shm
}

// treeDelta returns how much a cumulative per-process counter grew in the
// tree between two samples. Processes that are new in cur count in full
// (they started after prev). A process of prev that is gone from cur either
// was waited for by an ancestor still in the tree, whose cumulative children
// counters (cutime/cstime; the io counters) now include all of it
// (absorbed), or it left without a trace, and then only what it did up to
// prev counts. value reports ok=false for an unreadable counter; the delta
// is then not readable (ok=false).
func treeDelta(prev, cur treeSample, absorbs bool, value func(procEntry) (int64, bool)) (int64, bool) {
	var d int64
	for _, e := range cur.procs {
		v, ok := value(e)
		if !ok {
			return 0, false
		}
		d += v
	}
	byPID := make(map[int]procKey, len(prev.procs))
	for k := range prev.procs {
		byPID[k.pid] = k
	}
	for k, e := range prev.procs {
		v, ok := value(e)
		if !ok {
			return 0, false
		}
		if _, alive := cur.procs[k]; alive || (absorbs && ancestorAlive(prev, cur, byPID, k)) {
			d -= v
		}
	}
	return max(d, 0), true
}

// ancestorAlive reports whether some ancestor of k in prev is still in cur.
func ancestorAlive(prev, cur treeSample, byPID map[int]procKey, k procKey) bool {
	for range len(prev.procs) { // bounded: a ppid cycle cannot loop forever
		pk, ok := byPID[prev.procs[k].ppid]
		if !ok {
			return false
		}
		if _, alive := cur.procs[pk]; alive {
			return true
		}
		k = pk
	}
	return false
}

// ProcessTree returns the PIDs of the live processes rooted at roots, the
// roots and every descendant, as /proc lists them now, sorted.
func ProcessTree(roots []int) []int {
	ts := readTree("/proc", roots)
	pids := make([]int, 0, len(ts.procs))
	for k := range ts.procs {
		pids = append(pids, k.pid)
	}
	slices.Sort(pids)
	return pids
}
