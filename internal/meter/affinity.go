package meter

import (
	"fmt"
	"os"
	"strconv"

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
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin benchlab to CPUs %s: %w", list, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := setAffinity(tid, cpus); err != nil {
			return fmt.Errorf("pin benchlab to CPUs %s: %w", list, err)
		}
	}
	return nil
}
