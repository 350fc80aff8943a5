package runner

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"benchlab/internal/meter"
	"benchlab/internal/store"
)

// memSlack is the room a step's memory limit leaves above twice the live
// heap and the runtime's other memory: for what grows during a step (its
// 1-second series, about 130 bytes a second per role; buffers of a flush
// to the store) and for the GC's lag, so that the limit binds only when the
// heap's goal drifts far from the live heap. 32 MiB bound too often: at 64
// SQLite threads (limit 81 MB) it took 40-70% more GC cycles and 1-19% of
// the point queries' rate in 5 alternating pairs of 30 s (load 30-40, the
// client on about one CPU); 96 MiB (limit 144 MB) took 0-10% more cycles
// and the same rate (641k against 643k, medians of 3 pairs, the client on
// both CPUs), and held the Go runtime at 143-144 MB against 164-203 MB.
const memSlack = 96 << 20

// limitStepMemory sets a soft memory limit on the Go runtime for a measured
// step and returns it (0 when none was set) and the function that puts the
// previous one back.
//
// Why: with GOGC=100 alone the heap's goal is twice the heap that the last
// GC found live, and a GC that marks while the workers keep allocating
// counts what they allocated meanwhile as live. At 64 SQLite threads on 2
// CPUs (GOMAXPROCS 65), the driver's 3 allocations (263 bytes) per point
// query are 80-170 MB/s of garbage, marking takes 0.1-0.8 s, and the
// "live" heap read 30-98 MB when 20-25 MB were (mostly the workers'
// histograms, 270 KB each): the goal drifted to 100-160 MB and the Go
// runtime held 140-200 MB. The limit is what GOGC=100 would allow on the
// step's true live heap, measured once with a full GC before the workers
// start: twice the live heap, plus the runtime's memory that is not heap
// (stacks, metadata), plus memSlack. Go keeps GC below half of the CPU when
// a limit binds. A limit set before (GOMEMLIMIT, or the caller) stands.
func limitStepMemory() (int64, func()) {
	if prev := debug.SetMemoryLimit(-1); prev != math.MaxInt64 {
		return 0, func() {}
	}
	runtime.GC()
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	live := v(0)
	nonHeap := max(v(1)-v(2)-v(3)-v(4)-v(5), 0)
	limit := 2*live + nonHeap + memSlack
	debug.SetMemoryLimit(limit)
	return limit, func() { debug.SetMemoryLimit(math.MaxInt64) }
}

// addMemoryFacts stores benchlab's memory over the measured part of the
// step, split (meter.Memory), as facts of the headline result.
func addMemoryFacts(res *store.Result, m meter.Memory) {
	if res.Facts == nil {
		res.Facts = map[string]float64{}
	}
	res.Facts[store.FactClientOwnPeakRSS] = float64(m.OwnPeak)
	res.Facts[store.FactClientGoPeak] = float64(m.GoPeak)
	res.Facts[store.FactEnginePeakMemory] = float64(m.EnginePeak)
}
