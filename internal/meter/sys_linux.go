package meter

// The system calls of the instruments that only Linux has (CPU masks,
// thread CPU clocks, mmap populate); sys_other.go says they are Linux-only.

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setAffinity moves thread tid (0: the calling thread) to the CPUs cpus.
func setAffinity(tid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		if c >= len(set)*64 {
			return fmt.Errorf("CPU %d is out of range", c)
		}
		set.Set(c)
	}
	return unix.SchedSetaffinity(tid, &set)
}

// affinityCPUs lists the CPUs the calling thread may run on.
func affinityCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// gettid is the calling thread's ID.
func gettid() int { return unix.Gettid() }

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// mapPopulate asks mmap to fault the pages in at once.
const mapPopulate = unix.MAP_POPULATE
