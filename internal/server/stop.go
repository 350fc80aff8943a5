package server

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// This file stops a managed server: a graceful stop of its process group, then
// its cleanup (data dir, cgroup, log).

// Stop shuts the server down cleanly (with its flavor's StopSignal: a fast
// shutdown for PostgreSQL, as pg_ctl stop -m fast), kills its process group after
// cfg.StopTimeout, keeps a copy of the log and removes the private socket
// dir. The data dir is left to the caller. It is safe to call more than once.
func (in *Instance) Stop() error {
	in.stopOnce.Do(func() {
		close(in.stopping)
		in.stopErr = in.stop()
		in.releaseCgroup()
		in.keepLog()
		in.cleanup()
	})
	return in.stopErr
}

func (in *Instance) stop() error {
	if in.cmd == nil || in.cmd.Process == nil {
		return nil
	}
	pid := in.cmd.Process.Pid
	sig := in.cfg.Flavor.StopSignal()
	// The tree as it is before the stop: once the server is gone its
	// children are no longer found under it.
	tree := descendants(pid)
	var err error
	select {
	case <-in.exited:
	default:
		_ = syscall.Kill(pid, sig)
		// A stopped server (SIGSTOP, a debugger) handles the signal only
		// once it runs again: the whole tree goes on.
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = syscall.Kill(-pid, syscall.SIGCONT)
		signalAll(tree, syscall.SIGCONT)
		select {
		case <-in.exited:
		case <-time.After(in.cfg.StopTimeout):
			err = in.errorf("no clean shutdown within %s; killed", in.cfg.StopTimeout)
		}
	}
	// Whatever is left of the group and the tree (backends, helpers) goes
	// too.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	signalAll(tree, syscall.SIGKILL)
	<-in.exited
	waitGroupGone(pid, 5*time.Second)
	waitTreeGone(tree, 5*time.Second)
	return err
}

// waitTreeGone waits until every process of tree has ended (a zombie
// has: it only waits for its new parent to reap it), so that none of a
// server's backends outside its group outlives Stop, however long a
// loaded machine takes to end a killed process.
func waitTreeGone(tree []proc, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !slices.ContainsFunc(tree, running) {
			return
		}
		signalAll(tree, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGroupGone waits until no process of group pgid is left, so that the
// caller can remove the data dir without a process still writing to it.
func waitGroupGone(pgid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

func (in *Instance) cleanup() {
	in.removeSecrets()
	in.releaseCgroup()
	if in.logFile != nil {
		in.logFile.Close()
	}
	if in.sockDir != "" {
		os.RemoveAll(in.sockDir)
	}
	if in.aliasDir != "" {
		os.RemoveAll(in.aliasDir) // the symlink, not what it points to
	}
}

// releaseCgroup removes the server's cgroups, after noting in the log
// how often the server reached its memory limit.
func (in *Instance) releaseCgroup() {
	if in.perfcg != nil {
		if err := in.perfcg.remove(); err != nil && in.logFile != nil {
			fmt.Fprintf(in.logFile, "benchlab: %v\n", err)
		}
		in.perfcg = nil
	}
	if in.memcg == nil {
		return
	}
	if in.memShared {
		in.memcg = nil // its owner removes it, after this server has gone
		return
	}
	if n := in.memcg.failures(); n > 0 && in.logFile != nil {
		fmt.Fprintf(in.logFile, "benchlab: the server reached its memory limit %d times (cgroup %s)\n", n, in.memcg.dir)
	}
	if err := in.memcg.remove(); err != nil && in.logFile != nil {
		fmt.Fprintf(in.logFile, "benchlab: %v\n", err)
	}
	in.memcg = nil
}
