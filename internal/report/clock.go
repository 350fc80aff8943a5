package report

import (
	"strings"

	"benchlab/internal/store"
)

// clockMetrics are the efficiency table's clock-rate columns: GHz (cycles
// over task-clock) and IPC (instructions over cycles) per side where a
// result of the keys' cells counted cycles, and the CPU speed probes'
// rate where a result has one (the stand-in on machines without cycle
// counters). The articles check the clock before reading other counters
// (docs/measurement.md).
func clockMetrics(keys []cellKey, s samples) []effMetric {
	var out []effMetric
	ratio := func(r store.Result, num, den string) float64 {
		n, okN := r.Facts[num]
		d, okD := r.Facts[den]
		if !okN || !okD || d <= 0 {
			return store.NotMeasured
		}
		return n / d
	}
	for _, side := range counterSides {
		cycles, instr, clock := store.CounterFact(side, "cycles"), store.CounterFact(side, "instructions"),
			store.CounterFact(side, "task-clock")
		if hasFact(s, keys, cycles) && hasFact(s, keys, clock) {
			out = append(out, effMetric{column: "GHz " + side, value: func(r store.Result) float64 {
				return ratio(r, cycles, clock) // cycles per nanosecond
			}})
		}
		if hasFact(s, keys, cycles) && hasFact(s, keys, instr) {
			out = append(out, effMetric{column: "IPC " + side, value: func(r store.Result) float64 {
				return ratio(r, instr, cycles)
			}})
		}
	}
	if hasFact(s, keys, store.FactCPUSpeed) {
		out = append(out, effMetric{column: "cpu speed", value: func(r store.Result) float64 {
			v, ok := r.Facts[store.FactCPUSpeed]
			if !ok || v <= 0 {
				return store.NotMeasured
			}
			return v
		}})
	}
	return out
}

// clockNote says how the clock-rate columns were made, and that GHz and
// IPC are not measured where the machine did not count cycles.
func clockNote(keys []cellKey, s samples) string {
	ms := clockMetrics(keys, s)
	if len(ms) == 0 {
		return ""
	}
	var parts []string
	ghz := false
	for _, m := range ms {
		if strings.HasPrefix(m.column, "GHz") || strings.HasPrefix(m.column, "IPC") {
			ghz = true
		}
	}
	if ghz {
		parts = append(parts, "GHz = cycles / task-clock of the side's threads, IPC = instructions / cycles (perf "+
			"counters over the measured part)")
	}
	unsupported := false
	for _, side := range counterSides {
		if hasFactValue(s, keys, store.CounterUnsupportedFact(side, "cycles"), store.CounterNotSupported) {
			unsupported = true
		}
	}
	if unsupported {
		parts = append(parts, "GHz and IPC are not measured where cycles are not supported (a machine without hardware "+
			"counters, such as most virtual machines)")
	}
	if hasFact(s, keys, store.FactCPUSpeed) {
		parts = append(parts, "cpu speed is the CPU speed probes' mean rate over the step (rounds of a fixed loop per CPU "+
			"microsecond; higher is faster): a step far below the others ran on slower CPUs")
	}
	return "clock rate: " + strings.Join(parts, "; ")
}
