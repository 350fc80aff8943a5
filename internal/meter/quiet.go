package meter

import (
	"context"
	"time"
)

// QuietBusyPct is the machine-wide CPU use (all cores, percent) below which
// WaitQuiet considers the machine quiet.
const QuietBusyPct = 10

// WaitQuiet polls the machine's CPU use once a second until it stays below
// maxBusyPct for a whole second, or until timeout. It returns how long it
// waited and whether the machine became quiet; a machine without /proc/stat
// counts as quiet at once.
func WaitQuiet(ctx context.Context, maxBusyPct float64, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	var p MachineProbe
	p.Snapshot("start")
	if !p.ok {
		return 0, true
	}
	for time.Since(start) < timeout {
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-time.After(time.Second):
		}
		if m := p.Snapshot("poll"); m.BusyPct < maxBusyPct {
			return time.Since(start), true
		}
	}
	return time.Since(start), false
}
