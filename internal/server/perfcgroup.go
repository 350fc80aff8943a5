package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// perfCgroup is a cgroup that holds a managed server's processes so that
// perf can sample the whole of it (perf record -a -G): the backends it
// forks during a step are sampled from their first instruction, which a
// profile attached by process ID misses (see docs/measurement.md).
type perfCgroup struct {
	dir string
	// name is the cgroup as perf -G takes it: its path below the
	// hierarchy perf looks in (v1's perf_event mount, else cgroup v2's).
	name string
	v2   bool
	// owned says whether benchlab made dir (and removes it); false when
	// it is the memory cgroup's own v2 dir.
	owned bool
}

// perfEventMount is where benchlab mounts cgroup v1's perf_event
// controller when no hierarchy perf can filter by is mounted.
const perfEventMount = "/sys/fs/cgroup/perf_event"

// newPerfCgroup makes a cgroup for perf's cgroup filter, named after
// name: in the v1 perf_event hierarchy when one is mounted (perf looks
// there first), else in the cgroup v2 hierarchy (perf_event is implicit
// there; on a hybrid system its "unified" mount), else, as root, in a
// perf_event hierarchy it mounts. mem is the server's memory cgroup, if
// any: a v2 one is reused, since a process is in one v2 cgroup only.
func newPerfCgroup(name string, mem *memCgroup) (*perfCgroup, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("profile cgroup: %w", err)
	}
	if mounts.v1perf == "" && mem != nil && mem.version == 2 {
		rel, err := filepath.Rel(mounts.v2, mem.dir)
		if err != nil {
			return nil, fmt.Errorf("profile cgroup: %w", err)
		}
		return &perfCgroup{dir: mem.dir, name: rel, v2: true}, nil
	}
	base, v2 := mounts.v1perf, false
	if base == "" && mounts.v2 != "" {
		base, v2 = mounts.v2, true
	}
	if base == "" {
		if err := mountPerfEvent(); err != nil {
			return nil, err
		}
		base = perfEventMount
	}
	leaf := fmt.Sprintf("benchlab-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
	dir := filepath.Join(base, leaf)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile cgroup: cannot make %s (%v); profiling a server's forked processes needs root", dir, err)
	}
	return &perfCgroup{dir: dir, name: leaf, v2: v2, owned: true}, nil
}

// mountPerfEvent mounts cgroup v1's perf_event controller at
// perfEventMount, as root.
func mountPerfEvent() error {
	if err := os.MkdirAll(perfEventMount, 0o755); err != nil {
		return fmt.Errorf("profile cgroup: no cgroup hierarchy perf can filter by is mounted, and %s cannot be made: %w",
			perfEventMount, err)
	}
	if err := syscall.Mount("perf_event", perfEventMount, "cgroup", 0, "perf_event"); err != nil {
		return fmt.Errorf("profile cgroup: no cgroup hierarchy perf can filter by is mounted, and mounting perf_event at %s "+
			"failed (%v); it needs root", perfEventMount, err)
	}
	return nil
}

// enterCgroups makes cmd start inside the cgroups given (nil ones
// skipped): a v2 one as the process is cloned (CLONE_INTO_CGROUP), v1 ones
// through a shell that writes its own PID to each cgroup.procs and then
// execs the server. cred is the user the server runs as (nil for root),
// given the v1 cgroup.procs files. The returned function closes what was
// opened, after cmd has started.
func enterCgroups(cmd *exec.Cmd, cred *syscall.Credential, mem *memCgroup, perf *perfCgroup) (func(), error) {
	var v2dir string
	var v1 []string
	if mem != nil {
		if mem.version == 2 {
			v2dir = mem.dir
		} else {
			v1 = append(v1, mem.dir)
		}
	}
	if perf != nil && perf.dir != v2dir {
		if perf.v2 {
			if v2dir != "" {
				return nil, errors.New("profile cgroup: the server already has a v2 cgroup")
			}
			v2dir = perf.dir
		} else {
			v1 = append(v1, perf.dir)
		}
	}
	closeFD := func() {}
	if v2dir != "" {
		fd, err := syscall.Open(v2dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("cgroup: open %s: %w", v2dir, err)
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		closeFD = func() { syscall.Close(fd) }
	}
	if len(v1) == 0 {
		return closeFD, nil
	}
	// sh -c script procs0 procs1 ... server args: $0 is procs0, and after
	// the shift "$@" is the server's command.
	script := ""
	procs := make([]string, len(v1))
	for i, d := range v1 {
		procs[i] = filepath.Join(d, "cgroup.procs")
		if cred != nil {
			if err := os.Chown(procs[i], int(cred.Uid), int(cred.Gid)); err != nil {
				closeFD()
				return nil, fmt.Errorf("cgroup: give %s to the server's user: %w", procs[i], err)
			}
		}
		script += fmt.Sprintf(`echo $$ > "$%d" && `, i)
	}
	script += fmt.Sprintf(`shift %d && exec "$@"`, len(v1)-1)
	cmd.Args = append(append([]string{"/bin/sh", "-c", script}, procs...), cmd.Args...)
	cmd.Path = "/bin/sh"
	return closeFD, nil
}

// remove kills what is left in the cgroup and removes it, if benchlab
// made it.
func (pc *perfCgroup) remove() error {
	if !pc.owned {
		return nil
	}
	return removeCgroup(pc.dir)
}

// removeCgroup kills the processes left in dir and removes it.
func removeCgroup(dir string) error {
	for range 50 {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, p := range strings.Fields(string(b)) {
			var pid int
			if _, err := fmt.Sscan(p, &pid); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s could not be removed", dir)
}

// PerfCgroup returns the cgroup that holds the server's processes, as
// perf record -G takes it, or "" and why the server has none (benchlab not
// root, no cgroup hierarchy perf can filter by).
func (in *Instance) PerfCgroup() (string, error) {
	if in.perfcg == nil {
		if in.perfErr == nil {
			return "", errors.New("profile cgroup: the server is not running")
		}
		return "", in.perfErr
	}
	return in.perfcg.name, nil
}
