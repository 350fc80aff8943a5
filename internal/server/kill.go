package server

import (
	"errors"
	"syscall"
)

// KillGroup kills in's whole process group with SIGKILL, as a crash would,
// for cluster scenarios that kill a node on purpose. Stop still reaps it
// and cleans up.
func KillGroup(in *Instance) error {
	pids := in.PIDs()
	if len(pids) == 0 {
		return in.errorf("kill: no process")
	}
	if err := syscall.Kill(-pids[0], syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return in.errorf("kill the process group of pid %d: %w", pids[0], err)
	}
	return nil
}
