//go:build !linux

package meter

import "errors"

// The perf event types and counters of CounterEvents: placeholders here,
// where perfOpen counts nothing.
const (
	perfTypeHardware = iota
	perfTypeSoftware
)

const (
	perfInstructions = iota
	perfCycles
	perfCacheMisses
	perfBranchMisses
	perfMigrations
	perfPageFaults
	perfTaskClock
)

// perfOpen fails: perf event counters are Linux's (perf_event_open), so
// every event is listed as not countable, with this reason.
func perfOpen(uint32, uint64, int) (int, error) {
	return -1, errors.New("perf event counters are " + errLinuxOnly.Error())
}
