// Package cpulist reads CPU lists as taskset -c takes them ("0", "0-3",
// "0,2-3"): the spec's client_cpus, a target's server CPUs and benchlab's own
// pinning all name CPUs this way. It imports nothing of benchlab, so the spec,
// the server layer and the instruments share one parser.
package cpulist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU numbers a CPU list may name: the CPUs an affinity
// mask (unix.CPUSet, as sched_setaffinity takes it) can hold.
const MaxCPUs = 1024

// Parse returns the CPUs a list names, in order, each once; a CPU numbered
// MaxCPUs or more is refused (a range to 666666661 would otherwise list that
// many CPUs).
func Parse(s string) ([]int, error) {
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
