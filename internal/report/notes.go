package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"benchlab/internal/store"
)

// Thresholds beyond which a run is flagged as noisy.
const (
	// NoisyStealPct is the CPU steal share (percent of all CPU time).
	NoisyStealPct = 5
	// NoisyLoadPerCore is the 1-minute load average per core at the start.
	NoisyLoadPerCore = 0.5
)

// notes are the run-level notes: runs' own notes, failed runs, noisy
// machines, failed operations (as expected ones in a step whose suite
// planned a disruption), repeats, builds and how the client ran.
func notes(d *Data, planned map[string]string) []string {
	var n []string
	repeats := map[string]int{}
	builds := map[string]bool{}
	// A run's own notes (a cleanup part left out), one line per target and
	// note however many runs had it.
	var runNotes []string
	runsOf := map[string][]string{}
	for _, run := range d.Runs {
		for _, note := range store.ParseManifest(run.Manifest).Notes {
			k := run.Target + ": " + note
			if _, ok := runsOf[k]; !ok {
				runNotes = append(runNotes, k)
			}
			runsOf[k] = append(runsOf[k], fmt.Sprint(run.ID))
		}
	}
	for _, k := range runNotes {
		n = append(n, fmt.Sprintf("%s (run %s)", k, strings.Join(runsOf[k], ", ")))
	}
	for _, run := range d.Runs {
		if run.Status == store.StatusOK {
			repeats[run.Target]++
		} else {
			msg := fmt.Sprintf("run %d (%s, repeat %d) is %s", run.ID, run.Target, run.Repeat, run.Status)
			if run.Error != "" {
				msg += ": " + run.Error
			}
			n = append(n, msg+"; its completed steps are included")
		}
		m := store.ParseManifest(run.Manifest)
		if m.Engine.Build != "" {
			builds[m.Engine.Build] = true
		}
		loads := m.MachineLoad
		if len(loads) == 2 && loads[1].StealPct > NoisyStealPct {
			n = append(n, fmt.Sprintf("noisy: run %d (%s): %.1f%% CPU steal during the run; results may be disturbed",
				run.ID, run.Target, loads[1].StealPct))
		}
		if len(loads) == 2 && loads[0].LoadAvg1 > float64(m.Host.Cores)*NoisyLoadPerCore {
			n = append(n, fmt.Sprintf("noisy: run %d (%s) started with load average %.2f on %d cores",
				run.ID, run.Target, loads[0].LoadAvg1, m.Host.Cores))
		}
		for _, r := range d.Results[run.ID] {
			if r.Errors == 0 || len(r.ErrorSamples) == 0 {
				continue
			}
			if what, ok := planned[r.Test]; ok {
				n = append(n, fmt.Sprintf("%s on %s (%d threads, %.3g%% of operations attempted): %d failed operations during the "+
					"planned disruption (%s), expected and part of what it measures; first: %s", r.Test, run.Target, r.Threads,
					100*r.ErrorRate(), r.Errors, what, r.ErrorSamples[0]))
				continue
			}
			n = append(n, fmt.Sprintf("%s on %s (%d threads, %.3g%% of operations attempted): %d failed operations, first: %s",
				r.Test, run.Target, r.Threads, 100*r.ErrorRate(), r.Errors, r.ErrorSamples[0]))
		}
	}
	maxRep := 0
	for _, c := range repeats {
		maxRep = max(maxRep, c)
	}
	if maxRep <= 1 {
		n = append(n, "each cell ran once: no significance was tested; colours use the plain 0.95/1.05 thresholds")
	}
	if len(builds) > 1 {
		n = append(n, "targets come from different builds; a compiler or build change can look like a version regression")
	}
	if c := clientNote(d); c != "" {
		n = append(n, c)
	}
	return n
}

// clientNote says how benchlab's workers ran, per target and thread count,
// from the client_* facts of the measured results (runner.clientFacts): the
// processors Go had, whether server clients waited through Go's poller or in
// blocking reads, and which tests ran several operations per call. These
// choices change what a step costs the client, so a comparison across them
// is worth knowing about. Empty when no result has the facts.
func clientNote(d *Data) string {
	type key struct {
		target  string
		threads int
	}
	var keys []key
	how := map[key][]string{}
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			procs, ok := r.Facts[store.FactClientGOMAXPROCS]
			if !ok || r.Action {
				continue
			}
			desc := fmt.Sprintf("GOMAXPROCS %d", int(procs))
			if polled, remote := r.Facts[store.FactClientPolledIO]; remote {
				desc += map[bool]string{true: ", poller IO", false: ", blocking reads"}[polled == 1]
			}
			if ops := r.Facts[store.FactClientOpsPerCall]; ops > 1 {
				desc += fmt.Sprintf(", %s %d operations per call", r.Test, int(ops))
			}
			k := key{run.Target, r.Threads}
			if _, seen := how[k]; !seen {
				keys = append(keys, k)
			}
			if !slices.Contains(how[k], desc) {
				how[k] = append(how[k], desc)
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	order := map[string]int{}
	for _, k := range keys {
		if _, ok := order[k.target]; !ok {
			order[k.target] = len(order)
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(order[a.target], order[b.target]), cmp.Compare(a.threads, b.threads))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		unit := "threads"
		if k.threads == 1 {
			unit = "thread"
		}
		parts[i] = fmt.Sprintf("%s at %d %s: %s", k.target, k.threads, unit, strings.Join(how[k], "; "))
	}
	return "client (how benchlab's workers ran): " + strings.Join(parts, " | ")
}
