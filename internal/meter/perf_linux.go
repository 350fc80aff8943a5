package meter

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The perf event types and counters of CounterEvents.
const (
	perfTypeHardware = unix.PERF_TYPE_HARDWARE
	perfTypeSoftware = unix.PERF_TYPE_SOFTWARE
	perfInstructions = unix.PERF_COUNT_HW_INSTRUCTIONS
	perfCycles       = unix.PERF_COUNT_HW_CPU_CYCLES
	perfCacheMisses  = unix.PERF_COUNT_HW_CACHE_MISSES
	perfBranchMisses = unix.PERF_COUNT_HW_BRANCH_MISSES
	perfMigrations   = unix.PERF_COUNT_SW_CPU_MIGRATIONS
	perfPageFaults   = unix.PERF_COUNT_SW_PAGE_FAULTS
	perfTaskClock    = unix.PERF_COUNT_SW_TASK_CLOCK
)

// perfOpen opens one inherited counter of event (typ, config) on thread
// tid, read with the times it was enabled and running.
func perfOpen(typ uint32, config uint64, tid int) (int, error) {
	attr := unix.PerfEventAttr{Type: typ, Config: config,
		Size:        uint32(binary.Size(unix.PerfEventAttr{})),
		Bits:        unix.PerfBitInherit,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING}
	return unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}
