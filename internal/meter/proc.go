package meter

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ClockTick is the unit of the CPU times in /proc/<pid>/stat and /proc/stat
// (USER_HZ). Linux exports 100 Hz on every architecture benchlab runs on, so
// process CPU time read from /proc has 10 ms resolution: a step that uses
// less than a few hundred ms of server CPU has a server us/op figure that is
// mostly rounding, and per-second values move in steps of 10 ms.
const ClockTick = 10 * time.Millisecond

// sectorBytes is the unit of /proc/diskstats sector counts, 512 bytes
// whatever the device's real sector size (Documentation/admin-guide/iostats).
const sectorBytes = 512

// PidStat holds the fields benchlab uses from /proc/<pid>/stat. CPU times
// are in clock ticks (ClockTick).
type PidStat struct {
	PID, PPID int
	Comm      string
	State     byte
	// UTime and STime are the process's own user and system time, summed
	// over all its threads, dead ones included.
	UTime, STime int64
	// CUTime and CSTime are the user and system time of children that have
	// exited and been waited for by this process (and of their own waited
	// children), so a short-lived helper's CPU is not lost.
	CUTime, CSTime int64
	NumThreads     int64
	// StartTime is the start time in ticks after boot; with PID it names a
	// process uniquely, since PIDs are reused.
	StartTime int64
}

// CPU is the process's CPU time in ticks, including waited-for children.
func (s PidStat) CPU() int64 { return s.UTime + s.STime + s.CUTime + s.CSTime }

// ParsePidStat parses the text of /proc/<pid>/stat. The command name may
// hold spaces and parentheses, so fields are counted from the last ')'.
func ParsePidStat(b []byte) (PidStat, error) {
	var s PidStat
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return s, errors.New("stat: no (comm)")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return s, fmt.Errorf("stat: pid: %w", err)
	}
	s.PID, s.Comm = pid, string(b[open+1:closing])
	f := strings.Fields(string(b[closing+1:]))
	// f[0] is field 3 (state) of proc(5); field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return s, fmt.Errorf("stat of %d: %d fields after comm, want at least 20", pid, len(f))
	}
	s.State = f[0][0]
	ints := []struct {
		field int
		dst   *int64
	}{{14, &s.UTime}, {15, &s.STime}, {16, &s.CUTime}, {17, &s.CSTime}, {20, &s.NumThreads}, {22, &s.StartTime}}
	for _, x := range ints {
		if *x.dst, err = strconv.ParseInt(f[x.field-3], 10, 64); err != nil {
			return s, fmt.Errorf("stat of %d: field %d: %w", pid, x.field, err)
		}
	}
	if s.PPID, err = strconv.Atoi(f[4-3]); err != nil {
		return s, fmt.Errorf("stat of %d: ppid: %w", pid, err)
	}
	return s, nil
}

// PidIO holds the fields benchlab uses from /proc/<pid>/io. ReadBytes and
// WriteBytes are what the process caused to be fetched from or sent to the
// storage layer (page cache hits are not reads; writes count when pages are
// dirtied); SysCR and SysCW count read- and write-like system calls on any
// file descriptor, sockets and pipes included.
type PidIO struct {
	ReadBytes, WriteBytes, SysCR, SysCW int64
}

// ParsePidIO parses the text of /proc/<pid>/io.
func ParsePidIO(b []byte) (PidIO, error) {
	var io PidIO
	want := map[string]*int64{"read_bytes": &io.ReadBytes, "write_bytes": &io.WriteBytes,
		"syscr": &io.SysCR, "syscw": &io.SysCW}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := want[strings.TrimSpace(k)]
		if !ok || dst == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return io, fmt.Errorf("io: %s: %w", k, err)
		}
		*dst = n
		found++
	}
	if found != len(want) {
		return io, fmt.Errorf("io: %d of %d fields found", found, len(want))
	}
	return io, nil
}

// Sub returns io - o.
func (io PidIO) Sub(o PidIO) PidIO {
	return PidIO{io.ReadBytes - o.ReadBytes, io.WriteBytes - o.WriteBytes, io.SysCR - o.SysCR, io.SysCW - o.SysCW}
}

// Add returns io + o.
func (io PidIO) Add(o PidIO) PidIO {
	return PidIO{io.ReadBytes + o.ReadBytes, io.WriteBytes + o.WriteBytes, io.SysCR + o.SysCR, io.SysCW + o.SysCW}
}

// PidStatus holds the fields benchlab uses from /proc/<pid>/status (or
// /proc/<pid>/task/<tid>/status). Sizes are in bytes.
type PidStatus struct {
	// CtxSwitches is voluntary plus nonvoluntary context switches. The file
	// shows those of one thread only (the task it describes), so a process's
	// total is the sum over its tasks.
	CtxSwitches int64
	// RSS is VmRSS; RssAnon, RssFile and RssShmem split it when the kernel
	// says so (HasSplit).
	RSS, RssAnon, RssFile, RssShmem int64
	HasSplit                        bool
}

// ParsePidStatus parses the text of a status file. Kernel threads and
// zombies have no Vm lines; their sizes are 0.
func ParsePidStatus(b []byte) (PidStatus, error) {
	var s PidStatus
	cs := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		unit := int64(1)
		switch k {
		case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches":
			cs++
			dst = &s.CtxSwitches
		case "VmRSS":
			dst, unit = &s.RSS, 1024
		case "RssAnon":
			dst, unit, s.HasSplit = &s.RssAnon, 1024, true
		case "RssFile":
			dst, unit = &s.RssFile, 1024
		case "RssShmem":
			dst, unit = &s.RssShmem, 1024
		default:
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return s, fmt.Errorf("status: %s: empty", k)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return s, fmt.Errorf("status: %s: %w", k, err)
		}
		*dst += n * unit
	}
	if cs != 2 {
		return s, errors.New("status: no context switch counts")
	}
	return s, nil
}

// DiskCounters are one block device's cumulative counters from
// /proc/diskstats.
type DiskCounters struct {
	Reads, Writes, ReadBytes, WriteBytes int64
}

// Sub returns d - o.
func (d DiskCounters) Sub(o DiskCounters) DiskCounters {
	return DiskCounters{d.Reads - o.Reads, d.Writes - o.Writes, d.ReadBytes - o.ReadBytes, d.WriteBytes - o.WriteBytes}
}

// ParseDiskstats finds the device major:minor in the text of /proc/diskstats
// and returns its name and counters: reads and writes completed (fields 4
// and 8) and sectors read and written (6 and 10) in bytes.
func ParseDiskstats(b []byte, major, minor uint32) (string, DiskCounters, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 14 {
			continue
		}
		if f[0] != strconv.FormatUint(uint64(major), 10) || f[1] != strconv.FormatUint(uint64(minor), 10) {
			continue
		}
		var v [4]int64
		for i, field := range []int{4, 8, 6, 10} {
			n, err := strconv.ParseInt(f[field-1], 10, 64)
			if err != nil {
				return f[2], DiskCounters{}, false
			}
			v[i] = n
		}
		return f[2], DiskCounters{Reads: v[0], Writes: v[1], ReadBytes: v[2] * sectorBytes, WriteBytes: v[3] * sectorBytes}, true
	}
	return "", DiskCounters{}, false
}

// CPUStat is the machine's CPU time over all cores from /proc/stat's "cpu"
// line, in ticks.
type CPUStat struct {
	// Total is user+nice+system+idle+iowait+irq+softirq+steal (guest time
	// is already inside user and nice).
	Total int64
	// Busy is Total minus idle, iowait and steal: time this machine's
	// processes and kernel ran.
	Busy int64
	// Steal is time the hypervisor ran something else while a virtual CPU
	// wanted to run.
	Steal int64
}

// ParseCPUStat parses the aggregate "cpu" line of /proc/stat.
func ParseCPUStat(b []byte) (CPUStat, error) {
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPUStat{}, errors.New("/proc/stat: no aggregate cpu line with steal")
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return CPUStat{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
		}
		v[i] = n
	}
	var s CPUStat
	for _, n := range v {
		s.Total += n
	}
	s.Steal = v[7]
	s.Busy = s.Total - v[3] - v[4] - v[7]
	return s, nil
}
