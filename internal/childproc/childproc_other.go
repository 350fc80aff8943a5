//go:build !linux

package childproc

import (
	"errors"
	"runtime"
	"syscall"
)

// setDeathSignal does nothing: only Linux has a parent death signal.
func setDeathSignal(*syscall.SysProcAttr) {}

// IntoCgroup fails: cgroups, and so memory limits, are Linux-only.
func IntoCgroup(*syscall.SysProcAttr, int) error {
	return errors.New("cgroups (a target's memory limit) are Linux-only; this system is " + runtime.GOOS)
}

// MountCgroupV1 fails: cgroups are Linux-only.
func MountCgroupV1(string, string) error {
	return errors.New("cgroups are Linux-only; this system is " + runtime.GOOS)
}
