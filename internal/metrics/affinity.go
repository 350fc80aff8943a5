package metrics

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU numbers a CPU list may name: the CPUs an affinity
// mask (as sched_setaffinity takes it, affinity_linux.go) can hold.
const MaxCPUs = 1024

// ParseCPUList parses a CPU list as taskset -c takes it ("0", "0-3",
// "0,2-3") into the CPUs it names, in order, each once; a CPU numbered
// MaxCPUs or more is refused (a range to 666666661 would otherwise list
// that many CPUs).
func ParseCPUList(s string) ([]int, error) {
	var named [MaxCPUs]bool
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
		if b >= MaxCPUs {
			return nil, fmt.Errorf("%q names CPU %d; want CPUs below %d", s, b, MaxCPUs)
		}
		for c := a; c <= b; c++ {
			named[c] = true
		}
	}
	var cpus []int
	for c, ok := range named {
		if ok {
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
