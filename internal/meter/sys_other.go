//go:build !linux

package meter

import (
	"errors"
	"runtime"
)

// errLinuxOnly says why an instrument measures nothing here: it reads
// Linux's /proc, cgroups, perf events or scheduler calls.
var errLinuxOnly = errors.New("Linux-only (this system is " + runtime.GOOS + ")")

// setAffinity fails: CPU pinning is Linux-only here.
func setAffinity(int, []int) error { return errors.New("CPU pinning is " + errLinuxOnly.Error()) }

// affinityCPUs fails: CPU masks are Linux-only here, so no speed probe runs.
func affinityCPUs() ([]int, error) { return nil, errors.New("CPU affinity is " + errLinuxOnly.Error()) }

// gettid is 0: no thread IDs here.
func gettid() int { return 0 }

// threadCPU is not measured here.
func threadCPU() (int64, bool) { return 0, false }

// mapPopulate is 0: the pages fault in as the canary first touches them.
const mapPopulate = 0
