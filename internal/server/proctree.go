package server

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// proc is a process by its id and start time (in clock ticks after boot),
// so that a signal never reaches a later process that took its id.
type proc struct {
	pid   int
	start string
}

// descendants are the processes under pid (children, theirs, ...), read
// from /proc. A server's children may leave its process group (PostgreSQL's
// backends each start a session of their own), so a signal to the group
// misses them; benchlab signals each one.
func descendants(pid int) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 20 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], proc{pid: p, start: f[19]})
		}
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// startTime is pid's start time from /proc, "" when it is gone.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return ""
	}
	if f := strings.Fields(string(b[i+1:])); len(f) >= 20 {
		return f[19]
	}
	return ""
}

// running reports whether p is still the same process and has not ended
// (a zombie has ended).
func running(p proc) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	return i > 0 && len(f) >= 20 && f[19] == p.start && f[0] != "Z" && f[0] != "X"
}

// signalAll sends sig to each of procs still running as the same process.
func signalAll(procs []proc, sig syscall.Signal) {
	for _, p := range procs {
		if startTime(p.pid) == p.start {
			_ = syscall.Kill(p.pid, sig)
		}
	}
}
