package noise

import (
	"fmt"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// Canary thresholds: a run whose probe ran this much slower than the host's
// median is flagged. The fsync probe's own spread is larger (a device's
// write cache, other tenants' IO), hence the wider band.
const (
	// CanarySlowCPU flags a CPU loop at least 20% below the host's median.
	CanarySlowCPU = 0.20
	// CanarySlowFsync flags an fsync rate at least 50% below the median.
	CanarySlowFsync = 0.50
	// CanaryMinRuns is the number of canaries a host needs for a median.
	CanaryMinRuns = 5
	// CanaryHistory is how many of the store's newest runs the canary
	// baseline is drawn from.
	CanaryHistory = 500
)

// CanaryBaseline is the host's typical canary figures: medians over every
// stored run of the host with a canary.
type CanaryBaseline struct {
	Runs       int
	CPU, Fsync float64
}

// Baseline computes the medians of the canaries of host's runs.
func Baseline(host string, runs []store.Run) CanaryBaseline {
	var cpu, fs []float64
	for _, r := range runs {
		m := store.ParseManifest(r.Manifest)
		if m.Canary == nil || m.Host.ID() != host {
			continue
		}
		if m.Canary.CPULoopsPerSec > 0 {
			cpu = append(cpu, m.Canary.CPULoopsPerSec)
		}
		if m.Canary.FsyncsPerSec > 0 {
			fs = append(fs, m.Canary.FsyncsPerSec)
		}
	}
	// No figure of a kind: 0, no baseline for it.
	b := CanaryBaseline{Runs: max(len(cpu), len(fs))}
	if len(cpu) > 0 {
		b.CPU = analysis.Median(cpu)
	}
	if len(fs) > 0 {
		b.Fsync = analysis.Median(fs)
	}
	return b
}

// Check compares a run's canary with the baseline: a sentence and true when
// the machine was slow before the run, an empty string otherwise (also when
// the run has no canary or the host too few for a median).
func (b CanaryBaseline) Check(run store.Run) (string, bool) {
	c := store.ParseManifest(run.Manifest).Canary
	if c == nil || b.Runs < CanaryMinRuns {
		return "", false
	}
	var slow []string
	if b.CPU > 0 && c.CPULoopsPerSec > 0 && c.CPULoopsPerSec < (1-CanarySlowCPU)*b.CPU {
		slow = append(slow, fmt.Sprintf("CPU loop %.0f%% of the host's median", 100*c.CPULoopsPerSec/b.CPU))
	}
	if b.Fsync > 0 && c.FsyncsPerSec > 0 && c.FsyncsPerSec < (1-CanarySlowFsync)*b.Fsync {
		slow = append(slow, fmt.Sprintf("fsync %.0f%% of the host's median (%.0f/s against %.0f/s)",
			100*c.FsyncsPerSec/b.Fsync, c.FsyncsPerSec, b.Fsync))
	}
	if len(slow) == 0 {
		return "", false
	}
	return fmt.Sprintf("slow machine before %s repeat %d: %s over %d canaries; its results may reflect the machine, not the database",
		run.Target, run.Repeat, joinAnd(slow), b.Runs), true
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return xs[0] + " and " + xs[1]
}
