package server

import "fmt"

// Managed is embedded by the DBs of server engines: it holds the server
// benchlab started for the run, or nothing for a DSN target, and gives the
// DB what it needs of it.
type Managed struct {
	inst *Instance
}

// Manage returns a Managed for inst (nil for a DSN target).
func Manage(inst *Instance) Managed { return Managed{inst: inst} }

// Instance returns the managed server, nil for a DSN target.
func (m Managed) Instance() *Instance { return m.inst }

// PIDs returns the managed server's root process (nil for a DSN target), so
// the runner can measure the server's process tree.
func (m Managed) PIDs() []int {
	if m.inst == nil {
		return nil
	}
	return m.inst.PIDs()
}

// Wrap adds why the server is gone, when it died, to a failed call's error.
func (m Managed) Wrap(err error) error {
	if err == nil || m.inst == nil {
		return err
	}
	if died := m.Died(); died != nil {
		return fmt.Errorf("%w; %v", err, died)
	}
	return err
}

// Died says why the managed server exited unexpectedly; nil while it runs,
// after a requested stop, and for a DSN target.
func (m Managed) Died() error {
	if m.inst == nil {
		return nil
	}
	return m.inst.Died()
}
