// Package childproc starts benchlab's child processes (servers, perf,
// outside programs) in a process group of their own, so that a signal to
// the group reaches all they started and a terminal's Ctrl-C reaches
// benchlab alone, and, on Linux, killed by the kernel if benchlab dies
// (Pdeathsig, which other systems lack: there a child outlives a killed
// benchlab until `benchlab runs --prune` or the user ends it).
package childproc

import "syscall"

// Attr returns new process attributes: a group of its own, and the death
// signal where the system has one.
func Attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
}
