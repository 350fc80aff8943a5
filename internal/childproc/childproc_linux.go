package childproc

import "syscall"

// setDeathSignal has the kernel kill the child when benchlab dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// IntoCgroup makes a's process start in the cgroup v2 directory open as fd
// (clone3's CLONE_INTO_CGROUP).
func IntoCgroup(a *syscall.SysProcAttr, fd int) error {
	a.UseCgroupFD, a.CgroupFD = true, fd
	return nil
}

// MountCgroupV1 mounts cgroup v1's controller at dir, as root.
func MountCgroupV1(controller, dir string) error {
	return syscall.Mount(controller, dir, "cgroup", 0, controller)
}
