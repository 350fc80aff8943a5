package meter

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"benchlab/internal/cpulist"
)

// PinSelf restricts benchlab (every thread it has now, and so the threads
// they start later) to the CPUs of list, so that its clients and the server
// can be kept apart. The result shows in HostFacts' Affinity.
func PinSelf(list string) error {
	cpus, err := cpulist.Parse(list)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range cpus {
		if c >= len(set)*64 {
			return fmt.Errorf("CPU %d is out of range", c)
		}
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin benchlab to CPUs %s: %w", list, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pin benchlab to CPUs %s: %w", list, err)
		}
	}
	return nil
}
