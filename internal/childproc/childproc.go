// Package childproc holds what benchlab's child processes (servers, perf,
// outside programs) start with that differs between systems: a process
// group of their own, so that a signal to the group reaches all they
// started and a terminal's Ctrl-C reaches benchlab alone; on Linux, a kill
// by the kernel if benchlab dies (Pdeathsig, which other systems lack:
// there a child outlives a benchlab killed hard until the user ends it);
// and the cgroups they start in (Linux only).
package childproc

import "syscall"

// Attr returns new process attributes: a group of its own, and the death
// signal where the system has one.
func Attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
}
