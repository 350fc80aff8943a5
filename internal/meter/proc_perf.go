package meter

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// perfEvents are the hardware counters docs/method.md 3 reads first
// (instructions per operation shows code bloat between releases).
var perfEvents = []string{"instructions", "cycles"}

// PerfCounters checks whether perf can count hardware events on this
// machine by running `perf stat -x, -e instructions,cycles true`, and says
// so in one line for the manifest: "supported: instructions, cycles",
// "not supported: instructions, cycles" (typical of virtual machines,
// which do not expose the PMU) or "not readable: <why>". It never returns
// counts: the manifest records the capability, not a measurement.
func PerfCounters(ctx context.Context) string {
	path, err := exec.LookPath("perf")
	if err != nil {
		return "not readable: perf is not installed (Debian: apt-get install linux-perf)"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "stat", "-x,", "-e", strings.Join(perfEvents, ","), "true")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("not readable: perf stat: %v: %s", err, firstLine(stderr.String()))
	}
	return parsePerfSupport(stderr.String(), perfEvents)
}

// parsePerfSupport reads perf stat's CSV output (value,unit,event,...) and
// sorts the wanted events into supported and not supported.
func parsePerfSupport(out string, events []string) string {
	status := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		ev := f[2]
		if i := strings.IndexByte(ev, ':'); i >= 0 { // "instructions:u"
			ev = ev[:i]
		}
		status[ev] = !strings.HasPrefix(f[0], "<")
	}
	var yes, no []string
	for _, ev := range events {
		if ok, seen := status[ev]; seen && ok {
			yes = append(yes, ev)
		} else {
			no = append(no, ev)
		}
	}
	switch {
	case len(no) == 0:
		return "supported: " + strings.Join(yes, ", ")
	case len(yes) == 0:
		return "not supported: " + strings.Join(no, ", ")
	}
	return "supported: " + strings.Join(yes, ", ") + "; not supported: " + strings.Join(no, ", ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
