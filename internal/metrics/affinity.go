package metrics

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseCPUList parses a CPU list as taskset -c takes it ("0", "0-3", "0,2-3").
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a CPU list like 0,2-3", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a CPU list like 0,2-3", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// PinSelf restricts benchlab (every thread it has now, and so the threads
// they start later) to the CPUs of list, so that its clients and the server
// can be kept apart. The result shows in HostFacts' Affinity.
func PinSelf(list string) error {
	cpus, err := ParseCPUList(list)
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
