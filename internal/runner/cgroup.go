package runner

import (
	"fmt"
	"io"

	"benchlab/internal/server"
	"benchlab/internal/store"
)

// cgrouped is a target whose processes benchlab started in cgroups of
// their own (server.Managed): perf can sample the cgroups, and a
// memory-limited one's memory cgroup counts what the limit binds.
type cgrouped interface {
	PerfCgroups() ([]string, error)
	MarkMemory() bool
	CgroupMemory() (server.CgroupMemory, bool, error)
}

// cgroupMemory is a memory-limited server's memory as its cgroup counts it
// over the measured part (peak, limit hits, page cache, swap), stored as
// facts of its target's headline result: summed RSS counts shared and
// file-backed pages once per process and misses the page cache the limit
// binds (docs/measurement.md).
type cgroupMemory struct {
	noInstrument
	// parts are the step's targets, by heads' index; nil where a target
	// has no memory limit.
	parts []cgrouped
	out   io.Writer
}

// newCgroupMemory is the instrument for the step's memory-limited
// targets; nil when none is.
func newCgroupMemory(parts []stepPart, out io.Writer) *cgroupMemory {
	m := &cgroupMemory{parts: make([]cgrouped, len(parts)), out: out}
	any := false
	for i, p := range parts {
		if c, ok := p.db.(cgrouped); ok && c.MarkMemory() {
			m.parts[i], any = c, true
		}
	}
	if !any {
		return nil
	}
	return m
}

// mark resets the peaks and counts the limit hits from the measured
// part's start.
func (m *cgroupMemory) mark() {
	for _, c := range m.parts {
		if c != nil {
			c.MarkMemory()
		}
	}
}

func (m *cgroupMemory) finish(e *stepEnd) {
	for i, c := range m.parts {
		if c == nil || i >= len(e.heads) {
			continue
		}
		mem, ok, err := c.CgroupMemory()
		if err != nil {
			if m.out != nil {
				fmt.Fprintf(m.out, "benchlab: %s: %v\n", e.test, err)
			}
			continue
		}
		if !ok {
			continue
		}
		f := e.heads[i].Facts
		f[store.FactServerMemoryLimit] = float64(mem.Limit)
		f[store.FactServerCgroupPeak] = float64(mem.Peak)
		f[store.FactServerLimitHits] = float64(mem.LimitHits)
		f[store.FactServerPageCache] = float64(mem.Cache)
		f[store.FactServerSwap] = float64(mem.Swap)
	}
}
