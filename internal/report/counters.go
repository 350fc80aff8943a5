package report

import (
	"fmt"
	"strings"

	"benchlab/internal/meter"
	"benchlab/internal/store"
)

// counterSides are the processes perf events are counted on.
var counterSides = []string{"server", "client"}

// counterMetrics are the per-operation columns of the perf events that some
// result of the keys' cells counted, server then client for each event.
func counterMetrics(keys []cellKey, s samples) []effMetric {
	var out []effMetric
	for _, ev := range meter.CounterEvents {
		for _, side := range counterSides {
			fact := store.CounterFact(side, ev.Name)
			if !hasFact(s, keys, fact) {
				continue
			}
			out = append(out, effMetric{column: ev.Name + "/op " + side, relative: true,
				value: func(r store.Result) float64 {
					v, ok := r.Facts[fact]
					if !ok {
						return store.NotMeasured
					}
					return perOp(r, v, 1)
				}})
		}
	}
	return out
}

// counterTables builds the perf counters per operation, absolute and
// relative to the base, when any step counted an event.
func counterTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options) []Table {
	ms := counterMetrics(keys, s)
	if len(ms) == 0 {
		return nil
	}
	return costTables(d, keys, s, label, opt, ms, "Perf counters per operation",
		"op = statement (the QPS denominator); perf events counted with perf_event_open on the server's threads "+
			"(server) and benchlab's own (client: an in-process engine's work is here) over the measured part; "+
			"median over repeats; n/a = not counted",
		"Relative perf counters: events per operation(target) / events per operation("+d.Experiment.Base+")")
}

// counterNotes say which perf events could not be counted and why, per
// side, over the keys' cells.
func counterNotes(keys []cellKey, s samples) []string {
	why := map[float64]string{store.CounterNotSupported: "not supported on this machine",
		store.CounterNotPermitted: "not permitted (perf_event_paranoid)", store.CounterNotReadable: "not readable"}
	var notes []string
	for _, code := range []float64{store.CounterNotSupported, store.CounterNotPermitted, store.CounterNotReadable} {
		bySide := map[string][]string{}
		for _, side := range counterSides {
			for _, ev := range meter.CounterEvents {
				if hasFactValue(s, keys, store.CounterUnsupportedFact(side, ev.Name), code) {
					bySide[side] = append(bySide[side], ev.Name)
				}
			}
		}
		server, client := strings.Join(bySide["server"], ", "), strings.Join(bySide["client"], ", ")
		switch {
		case server == "" && client == "":
		case server == client:
			notes = append(notes, fmt.Sprintf("perf counters: %s %s (server and client): no per-op figures for them", server, why[code]))
		default:
			for _, side := range counterSides {
				if evs := strings.Join(bySide[side], ", "); evs != "" {
					notes = append(notes, fmt.Sprintf("perf counters: %s %s (%s): no per-op figures for them", evs, why[code], side))
				}
			}
		}
	}
	return notes
}

// hasFactValue reports whether a result of the keys' cells holds the fact
// with value v.
func hasFactValue(s samples, keys []cellKey, fact string, v float64) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if x, ok := r.Facts[fact]; ok && x == v {
					return true
				}
			}
		}
	}
	return false
}
