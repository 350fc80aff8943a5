package server

import (
	"errors"

	"benchlab/internal/engine"
)

// Managed is embedded by the DBs of server engines: it holds the processes
// benchlab started for the run (one server; a pooler and its server; the
// nodes of a cluster and their proxy), or nothing for a DSN target, and
// gives the DB what it needs of them. The runner sees every process of it
// through PIDs and Died, so a target of several processes is measured and
// watched as a whole.
type Managed struct {
	insts []*Instance
}

// Manage returns a Managed for the instances given, the one clients reach
// first; none (or nil ones) for a DSN target.
func Manage(insts ...*Instance) Managed {
	var m Managed
	for _, in := range insts {
		if in != nil {
			m.insts = append(m.insts, in)
		}
	}
	return m
}

// Instance returns the first managed process (the one clients reach), nil
// for a DSN target.
func (m Managed) Instance() *Instance {
	if len(m.insts) == 0 {
		return nil
	}
	return m.insts[0]
}

// Instances returns every managed process, in the order given to Manage.
func (m Managed) Instances() []*Instance { return m.insts }

// PIDs returns the root process of every managed instance (nil for a DSN
// target), so the runner can measure their process trees.
func (m Managed) PIDs() []int {
	var pids []int
	for _, in := range m.insts {
		pids = append(pids, in.PIDs()...)
	}
	return pids
}

// PerfCgroups returns the cgroups that hold every managed process, as perf
// record -G takes them, or an error saying why one has none (a DSN target
// has no managed process).
func (m Managed) PerfCgroups() ([]string, error) {
	if len(m.insts) == 0 {
		return nil, errors.New("profile cgroup: benchlab did not start the server (a DSN target)")
	}
	var out []string
	for _, in := range m.insts {
		cg, err := in.PerfCgroup()
		if err != nil {
			return nil, err
		}
		out = append(out, cg)
	}
	return out, nil
}

// MarkMemory starts a step's memory figures for every managed process
// under a memory limit; false when none is.
func (m Managed) MarkMemory() bool {
	any := false
	for _, in := range m.insts {
		any = in.MarkMemory() || any
	}
	return any
}

// CgroupMemory is the memory of the managed processes under a limit since
// MarkMemory, summed over them (peaks summed: an upper bound when there
// are several); false when none has a limit.
func (m Managed) CgroupMemory() (CgroupMemory, bool, error) {
	var sum CgroupMemory
	found := false
	for _, in := range m.insts {
		c, ok, err := in.CgroupMemory()
		if err != nil {
			return sum, true, err
		}
		if !ok {
			continue
		}
		found = true
		sum.Limit += c.Limit
		sum.Peak += c.Peak
		sum.LimitHits += c.LimitHits
		sum.Usage += c.Usage
		sum.Cache += c.Cache
		sum.Swap += c.Swap
	}
	return sum, found, nil
}

// Wrap adds why a managed process is gone, when one died, to a failed
// call's error.
func (m Managed) Wrap(err error) error {
	if err == nil {
		return nil // before m becomes an interface: statements call this on every success
	}
	return engine.WrapDied(err, m)
}

// Died says why a managed process exited unexpectedly (the first that
// did); nil while they run, after a requested stop, and for a DSN target.
func (m Managed) Died() error {
	for _, in := range m.insts {
		if err := in.Died(); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every managed process, the last given first (a proxy before
// the servers behind it), keeping their logs.
func (m Managed) Stop() error {
	var errs []error
	for i := len(m.insts) - 1; i >= 0; i-- {
		errs = append(errs, m.insts[i].Stop())
	}
	return errors.Join(errs...)
}
