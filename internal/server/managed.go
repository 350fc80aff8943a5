package server

import (
	"errors"
	"fmt"
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

// Wrap adds why a managed process is gone, when one died, to a failed
// call's error.
func (m Managed) Wrap(err error) error {
	if err == nil {
		return nil
	}
	if died := m.Died(); died != nil {
		return fmt.Errorf("%w; %v", err, died)
	}
	return err
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
