package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ParseMemory reads a target's memory limit: a number of bytes with an
// optional unit, KB, MB, GB or TB (powers of 1024; "2GB", "512MB",
// "1.5GB"). It must be at least 64 MB: below that no server starts.
func ParseMemory(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a size; want bytes with an optional unit such as 512MB or 2GB", s)
	}
	n := int64(v * mult)
	if n < 64<<20 {
		return 0, fmt.Errorf("%q is under 64MB, too little for a server", s)
	}
	return n, nil
}

// memCgroup is a memory cgroup of its own that a managed server runs in,
// limited to the target's memory: the server's own memory and the page
// cache its files take are charged to it, as on a machine with that much
// RAM (how the articles make a server IO-bound on a large machine).
type memCgroup struct {
	dir string
	// limitFile is the file that holds the limit (memory.max in cgroup v2,
	// memory.limit_in_bytes in v1); version is 1 or 2.
	limitFile string
	version   int
	// hitsAtMark is the limit hits counted before the step (markMemory);
	// peakFile the v2 memory.peak file a step's peak is reset through.
	hitsAtMark int64
	peakFile   *os.File
}

// newMemCgroup makes a memory cgroup named after name below benchlab's own
// (cgroup v1's memory hierarchy, or v2's when it has the memory
// controller) and sets its limit. It needs root.
func newMemCgroup(name string, limit int64) (*memCgroup, error) {
	base, version, err := ownMemoryCgroup()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, fmt.Sprintf("benchlab-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("memory: cannot make a cgroup (%v); limiting a server's memory needs root and a memory cgroup "+
			"benchlab may write", err)
	}
	cg := &memCgroup{dir: dir, version: version, limitFile: "memory.max"}
	if version == 1 {
		cg.limitFile = "memory.limit_in_bytes"
	}
	if err := os.WriteFile(filepath.Join(dir, cg.limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		cg.remove()
		return nil, fmt.Errorf("memory: cannot set %s of %s: %w", cg.limitFile, dir, err)
	}
	if version == 2 {
		// No swap: a server over its memory pages its files, not its heap.
		os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644)
	}
	return cg, nil
}

// ownMemoryCgroup finds the memory cgroup directory benchlab runs in and
// its cgroup version, from /proc/self/cgroup and /proc/self/mountinfo.
func ownMemoryCgroup() (string, int, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", 0, fmt.Errorf("memory: %w", err)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return "", 0, fmt.Errorf("memory: %w", err)
	}
	var v2path string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2path = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" && mounts.v1memory != "" {
				return filepath.Join(mounts.v1memory, parts[2]), 1, nil
			}
		}
	}
	if mounts.v2 != "" && v2path != "" {
		// A v2 cgroup that holds processes (benchlab's own) cannot give
		// controllers to its children: use the hierarchy's root, whose
		// memory controller the system enables for its own cgroups.
		if ctrl, _ := os.ReadFile(filepath.Join(mounts.v2, "cgroup.subtree_control")); strings.Contains(string(ctrl), "memory") {
			return mounts.v2, 2, nil
		}
	}
	return "", 0, errors.New("memory: no memory cgroup controller is mounted where benchlab can use it " +
		"(neither cgroup v1's memory hierarchy nor v2 with the memory controller)")
}

// cgroupMountPoints are where the cgroup hierarchies benchlab uses are
// mounted: v1's memory and perf_event controllers and the v2 hierarchy.
type cgroupMountPoints struct{ v1memory, v1perf, v2 string }

func cgroupMounts() (cgroupMountPoints, error) {
	var m cgroupMountPoints
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch tail[0] {
		case "cgroup2":
			if m.v2 == "" {
				m.v2 = fields[4]
			}
		case "cgroup":
			for _, o := range strings.Split(tail[2], ",") {
				switch o {
				case "memory":
					m.v1memory = fields[4]
				case "perf_event":
					m.v1perf = fields[4]
				}
			}
		}
	}
	return m, sc.Err()
}

// describe says what limits the server, for its settings and the report.
func (cg *memCgroup) describe(limit int64) string {
	return fmt.Sprintf("%s (cgroup v%d %s)", formatMemory(limit), cg.version, cg.limitFile)
}

// failures reads how often the server met its limit: memory.events' max
// and oom_kill (v2), or memory.failcnt (v1); -1 when unreadable.
func (cg *memCgroup) failures() int64 {
	if cg.version == 1 {
		b, err := os.ReadFile(filepath.Join(cg.dir, "memory.failcnt"))
		if err != nil {
			return -1
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, "memory.events"))
	if err != nil {
		return -1
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "max" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			n += v
		}
	}
	return n
}

// remove kills what is left in the cgroup and removes it.
func (cg *memCgroup) remove() error {
	if cg.peakFile != nil {
		cg.peakFile.Close()
	}
	return removeCgroup(cg.dir)
}

// formatMemory writes bytes in the largest unit that keeps them whole
// enough: "256MB", "1.5GB".
func formatMemory(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', -1, 64) + "GB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + "MB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// CgroupMemory is a server's memory as its memory cgroup counts it over a
// step: its own memory and the page cache its files take, which is what
// the limit binds (summed RSS counts shared and file-backed pages once per
// process and misses the page cache).
type CgroupMemory struct {
	// Limit is the cgroup's limit, in bytes.
	Limit int64
	// Peak is the highest usage since Mark, in bytes: the cgroup's own
	// peak (v1 memory.max_usage_in_bytes, reset at Mark; v2 memory.peak,
	// reset through its file at Mark where the kernel allows, else since
	// the server started).
	Peak int64
	// LimitHits is how often usage met the limit since Mark (v1
	// memory.failcnt, v2 memory.events' max).
	LimitHits int64
	// Usage, Cache and Swap are the usage, the page cache (v1 cache, v2
	// file) and the swap used at the end, in bytes.
	Usage, Cache, Swap int64
}

// markMemory starts a step: the peak is reset and the limit hits counted
// from here.
func (cg *memCgroup) markMemory() {
	cg.hitsAtMark = max(cg.failures(), 0)
	if cg.version == 1 {
		os.WriteFile(filepath.Join(cg.dir, "memory.max_usage_in_bytes"), []byte("0"), 0o644)
		return
	}
	if cg.peakFile == nil {
		f, err := os.OpenFile(filepath.Join(cg.dir, "memory.peak"), os.O_RDWR, 0)
		if err != nil {
			return
		}
		cg.peakFile = f
	}
	if _, err := cg.peakFile.WriteString("reset\n"); err != nil {
		// A kernel before 6.12: the peak since the server started.
		cg.peakFile.Close()
		cg.peakFile = nil
	}
}

// memory reads the cgroup's figures since markMemory.
func (cg *memCgroup) memory(limit int64) (CgroupMemory, error) {
	m := CgroupMemory{Limit: limit}
	hits := cg.failures()
	if hits < 0 {
		return m, fmt.Errorf("memory: cannot read the limit hits of cgroup %s", cg.dir)
	}
	m.LimitHits = hits - cg.hitsAtMark
	stat, err := readKeyed(filepath.Join(cg.dir, "memory.stat"))
	if err != nil {
		return m, fmt.Errorf("memory: %w", err)
	}
	var usage, peak string
	if cg.version == 1 {
		usage, peak = "memory.usage_in_bytes", "memory.max_usage_in_bytes"
		m.Cache, m.Swap = stat["cache"], stat["swap"]
	} else {
		usage, peak = "memory.current", "memory.peak"
		m.Cache = stat["file"]
		m.Swap, _ = readInt(filepath.Join(cg.dir, "memory.swap.current"))
	}
	if m.Usage, err = readInt(filepath.Join(cg.dir, usage)); err != nil {
		return m, fmt.Errorf("memory: %w", err)
	}
	if cg.peakFile != nil {
		b := make([]byte, 32)
		if n, err := cg.peakFile.ReadAt(b, 0); n > 0 && (err == nil || errors.Is(err, io.EOF)) {
			m.Peak, err = strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
			if err == nil {
				return m, nil
			}
		}
	}
	if m.Peak, err = readInt(filepath.Join(cg.dir, peak)); err != nil {
		return m, fmt.Errorf("memory: %w", err)
	}
	return m, nil
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readKeyed reads a file of "key value" lines (memory.stat).
func readKeyed(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out, nil
}

// MarkMemory starts a step's memory figures (CgroupMemory); false when
// the server has no memory limit, so no memory cgroup.
func (in *Instance) MarkMemory() bool {
	if in.memcg == nil {
		return false
	}
	in.memcg.markMemory()
	return true
}

// CgroupMemory reads the server's memory cgroup since MarkMemory; false
// when the server has no memory limit.
func (in *Instance) CgroupMemory() (CgroupMemory, bool, error) {
	if in.memcg == nil {
		return CgroupMemory{}, false, nil
	}
	m, err := in.memcg.memory(in.cfg.MemoryLimit)
	return m, true, err
}
