package engine

import (
	"sort"
	"sync"
)

// A MemoryGauge reads how many bytes an engine that runs inside benchlab's
// process (an embedded engine such as SQLite) holds from its own allocator:
// memory that shows in benchlab's resident set but is the engine's, as a
// server's buffer pool is the server's. It is process-wide (every open
// database of that engine, benchlab's results store included when it is a
// SQLite file) and must be cheap enough to read every second.
type MemoryGauge func() int64

var (
	memMu  sync.RWMutex
	gauges = map[string]MemoryGauge{}
)

// RegisterMemory makes an in-process engine's memory readable by name (from
// the engine package's init). It panics on a duplicate, a programming error.
func RegisterMemory(name string, g MemoryGauge) {
	memMu.Lock()
	defer memMu.Unlock()
	if _, dup := gauges[name]; dup {
		panic("engine: duplicate memory gauge " + name)
	}
	gauges[name] = g
}

// InProcessMemory returns the bytes each registered in-process engine holds
// now, by engine name, and their sum.
func InProcessMemory() (map[string]int64, int64) {
	memMu.RLock()
	defer memMu.RUnlock()
	by := make(map[string]int64, len(gauges))
	var sum int64
	for n, g := range gauges {
		v := g()
		by[n] = v
		sum += v
	}
	return by, sum
}

// InProcessMemoryTotal returns the sum of InProcessMemory without building
// the map: what the per-second sampler reads.
func InProcessMemoryTotal() int64 {
	memMu.RLock()
	defer memMu.RUnlock()
	var sum int64
	for _, g := range gauges {
		sum += g()
	}
	return sum
}

// MemoryEngines lists the engines with a memory gauge, sorted.
func MemoryEngines() []string {
	memMu.RLock()
	defer memMu.RUnlock()
	names := make([]string, 0, len(gauges))
	for n := range gauges {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ConnectionCacher is a driver of an in-process engine whose every
// connection keeps a cache of its own inside benchlab's process (SQLite's
// page cache), so that N threads may hold N of them.
type ConnectionCacher interface {
	// ConnectionCache is the most bytes one connection's cache may hold
	// under the target's settings (the defaults where unset).
	ConnectionCache(settings map[string]string) int64
}
