package noise

import (
	"fmt"
	"math"

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
	// CanarySpreads is how far beyond the host's usual spread a memory
	// canary must fall for its run to count as run on a slow host: this
	// many robust standard deviations of its log (1.4826 times the median
	// absolute deviation), a spread that a third of the host's canaries
	// being slow does not inflate.
	CanarySpreads = 3
	// CanaryMinSlow is the smallest slowdown of a memory canary that flags
	// its run, however steady the host: 50% (x1.5). At x1.25 a quiet VM
	// (load average 1-2) flagged one run in 12 of a 12-run experiment
	// whose history was that experiment's own 24 walks.
	CanaryMinSlow = 0.5
)

// CanaryBaseline is the host's typical canary figures: medians over every
// stored run of the host with a canary.
type CanaryBaseline struct {
	Runs       int
	CPU, Fsync float64
	// Cache and Mem are the memory canary's walks (512 KiB and 32 MiB),
	// before and after the runs alike; zero when no run has them (runs
	// stored before the memory canary existed).
	Cache, Mem Figure
}

// Figure is the host's usual value of one canary figure.
type Figure struct {
	// N is the number of values, Median their median and Spread the
	// robust standard deviation of their logs.
	N              int
	Median, Spread float64
}

// figureOf summarises the positive values of a figure.
func figureOf(xs []float64) Figure {
	var logs []float64
	for _, x := range xs {
		if x > 0 {
			logs = append(logs, math.Log(x))
		}
	}
	if len(logs) == 0 {
		return Figure{}
	}
	m := analysis.Median(logs)
	dev := make([]float64, len(logs))
	for i, y := range logs {
		dev[i] = math.Abs(y - m)
	}
	return Figure{N: len(logs), Median: math.Exp(m), Spread: 1.4826 * analysis.Median(dev)}
}

// Limit is the slowdown (median over value) beyond which a value of the
// figure is outside the host's usual spread: exp(CanarySpreads·Spread),
// at least 1 + CanaryMinSlow.
func (f Figure) Limit() float64 {
	return max(math.Exp(CanarySpreads*f.Spread), 1+CanaryMinSlow)
}

// Baseline computes the medians of the canaries of host's runs.
func Baseline(host string, runs []store.Run) CanaryBaseline {
	var cpu, fs, cache, mem []float64
	for _, r := range runs {
		m := store.ParseManifest(r.Manifest)
		if m.Canary == nil || m.Host.ID() != host {
			continue
		}
		for _, c := range []*store.Canary{m.Canary, m.CanaryAfter} {
			if c != nil {
				cache, mem = append(cache, c.CacheLoadsPerSec), append(mem, c.MemLoadsPerSec)
			}
		}
		if m.Canary.CPULoopsPerSec > 0 {
			cpu = append(cpu, m.Canary.CPULoopsPerSec)
		}
		if m.Canary.FsyncsPerSec > 0 {
			fs = append(fs, m.Canary.FsyncsPerSec)
		}
	}
	// No figure of a kind: 0, no baseline for it.
	b := CanaryBaseline{Runs: max(len(cpu), len(fs)), Cache: figureOf(cache), Mem: figureOf(mem)}
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

// HostSlow is what the memory canaries bracketing a run say of the host
// during it: the largest slowdown of a walk against the host's median.
type HostSlow struct {
	// Factor is the host's median over the run's figure (1.8: the walk ran
	// at 1/1.8 of its usual rate); Limit the figure's Limit.
	Factor, Limit float64
	// Walk names the walk ("memory canary (32 MiB)"), When says
	// "before the run" or "after the run".
	Walk, When string
}

// String is the slowdown as a verdict's evidence gives it.
func (h HostSlow) String() string {
	return fmt.Sprintf("host slow during run: %s x%.2f %s, the host's spread allows x%.2f", h.Walk, h.Factor, h.When, h.Limit)
}

// HostSlow says whether run ran on a slow host: whether a memory canary
// just before or just after it was slower than the host's median by more
// than the figure's usual spread (Figure.Limit). Either end counts: a
// disturbance that begins or ends during the run shows at one end only,
// and it slowed part of the run. A run without memory figures (stored
// before they existed), or a host with fewer than CanaryMinRuns of them,
// is never flagged.
func (b CanaryBaseline) HostSlow(run store.Run) (HostSlow, bool) {
	m := store.ParseManifest(run.Manifest)
	var worst HostSlow
	for _, at := range []struct {
		c    *store.Canary
		when string
	}{{m.Canary, "before the run"}, {m.CanaryAfter, "after the run"}} {
		if at.c == nil {
			continue
		}
		for _, w := range []struct {
			f    Figure
			v    float64
			name string
		}{{b.Cache, at.c.CacheLoadsPerSec, "memory canary (512 KiB)"}, {b.Mem, at.c.MemLoadsPerSec, "memory canary (32 MiB)"}} {
			if w.f.N < CanaryMinRuns || w.v <= 0 {
				continue
			}
			if f := w.f.Median / w.v; f > w.f.Limit() && f > worst.Factor {
				worst = HostSlow{Factor: f, Limit: w.f.Limit(), Walk: w.name, When: at.when}
			}
		}
	}
	return worst, worst.Factor > 0
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
