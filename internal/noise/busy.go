package noise

import (
	"fmt"
	"slices"

	"benchlab/internal/store"
)

// What the machine did during a result's measured part, measured then and
// not before or after it (the canaries' limit): other processes' CPU use
// with the run-queue wait it caused, and the CPU speed probes. Either
// makes a result "disturbed", which verdicts treat as they treat a run on
// a slow host: set aside when it came out worse than its side's others.
const (
	// BusyForeignPct is the share of all the machine's CPU time (percent)
	// that other processes must have used for a result to count as run
	// on a busy machine: on 2 CPUs, half a CPU.
	BusyForeignPct = 25
	// BusyWaitShare is the run-queue wait, as a share of the running time
	// of the server's and benchlab's threads, that must come with it: the
	// other processes took CPU time the step's threads wanted. Waiting
	// alone is not enough: more runnable threads than CPUs wait whatever
	// the machine does, and a database whose own threads crowd its CPUs
	// has that in its result.
	BusyWaitShare = 0.10
	// SlowCPUFactor: a result whose CPU speed probes averaged below this
	// share of the median of the runs it is compared with ran on CPUs the
	// host slowed (a busy hyperthread sibling, a lowered clock). On the
	// development VM the probes of one test's runs spread by 5-6% (one
	// standard deviation on the log scale) while its CPU-bound SQLite
	// statements did 13-18% more or less per CPU second.
	SlowCPUFactor = 0.9
	// SlowCPUMinRuns is the fewest runs with probes needed for a median.
	SlowCPUMinRuns = 4
)

// Busy says why a result ran on a busy machine: other processes used more
// than BusyForeignPct of all CPU time over its measured part, and the
// step's threads waited for a CPU at least BusyWaitShare of their running
// time; "" when it did not, or when either was not measured.
func Busy(r store.Result) string {
	if r.Eff == nil {
		return ""
	}
	foreign := r.Eff.ForeignPct()
	if foreign < 0 || foreign <= BusyForeignPct {
		return ""
	}
	var run, wait float64
	for _, side := range []string{"server", "client"} {
		run += r.Facts[store.SchedRunFact(side)]
		wait += r.Facts[store.SchedWaitFact(side)]
	}
	if run <= 0 || wait/run < BusyWaitShare {
		return ""
	}
	waited := fmt.Sprintf("%.0f%% of their running time", 100*wait/run)
	if wait >= run {
		waited = fmt.Sprintf("%.1fx as long as they ran", wait/run)
	}
	return fmt.Sprintf("machine busy during run: other processes used %.0f%% of all CPU and the step's threads waited for a CPU %s",
		foreign, waited)
}

// CPUSpeed is a result's mean CPU speed probe rate over its measured part
// (store.FactCPUSpeed), 0 when not measured.
func CPUSpeed(r store.Result) float64 {
	if v := r.Facts[store.FactCPUSpeed]; v > 0 && r.Facts[store.FactCPUSpeedSamples] > 0 {
		return v
	}
	return 0
}

// SpeedMedian is the median CPU speed of the results of the sides of one
// comparison; 0 when fewer than SlowCPUMinRuns have probes.
func SpeedMedian(sides ...[]store.Result) float64 {
	var v []float64
	for _, rs := range sides {
		for _, r := range rs {
			if s := CPUSpeed(r); s > 0 {
				v = append(v, s)
			}
		}
	}
	if len(v) < SlowCPUMinRuns {
		return 0
	}
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// SlowCPU says why a result ran on slow CPUs: its probes averaged below
// SlowCPUFactor of median (SpeedMedian of the runs it is compared with);
// "" when not, or when median is 0.
func SlowCPU(r store.Result, median float64) string {
	s := CPUSpeed(r)
	if median <= 0 || s <= 0 || s >= SlowCPUFactor*median {
		return ""
	}
	return fmt.Sprintf("CPUs slow during run: speed probes x%.2f of the compared runs' median, below x%.2f", s/median, SlowCPUFactor)
}

// Disturbed joins what Busy and SlowCPU say of r ("" for neither).
func Disturbed(r store.Result, speedMedian float64) string {
	b, s := Busy(r), SlowCPU(r, speedMedian)
	switch {
	case b != "" && s != "":
		return b + "; " + s
	case b != "":
		return b
	}
	return s
}
