package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// TestSpeedProbeOption checks Options.SpeedProbeEvery in fake time (a
// testing/synctest bubble, where the probes' tickers follow the bubble's
// clock and each tick's probe runs before the clock moves on, however
// busy the machine): turned off, a step carries no speed facts; by
// default a 2 s step is probed every 100 ms on each CPU (meter's 20
// probes per CPU at least); every 10 ms, 200 times per CPU. Each count may
// be one off, for a tick at either end of the measured part. Each measured
// second of the series carries the mean speed of the probes in it (none
// with probes off), and the step's mean, theirs together with at most one
// edge probe per CPU, lies between the seconds' means as far as those
// edge probes can move it. On a loaded machine in real time the 10 ms probes got as
// few as 30 samples of their 200: a probe thread pinned to a busy CPU
// waits for it.
func TestSpeedProbeOption(t *testing.T) {
	const measured = 2 * time.Second
	step := workload.Step{Name: "sleep", Duration: measured, Warmup: 100 * time.Millisecond,
		Roles: []workload.Role{sleeperRole("sleeper", 1, 0, 0, time.Millisecond, workload.PaceEven)}}
	run := func(t *testing.T, opt Options) *store.Result {
		t.Helper()
		rs, err := MeasureRoles(context.Background(), nil, step, 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rs[0]
	}
	fake(t, func(t *testing.T, opt Options) {
		opt.SpeedProbeEvery = -1
		off := run(t, opt)
		for _, k := range []string{store.FactCPUSpeed, store.FactCPUSpeedSamples, store.FactCPUSpeedCPU} {
			if v, ok := off.Facts[k]; ok {
				t.Errorf("probes off: fact %s = %v, want none", k, v)
			}
		}
		for _, iv := range off.Intervals {
			if iv.Load != nil && iv.Load.CPUSpeed != 0 {
				t.Errorf("probes off: second %d has CPU speed %v, want none", iv.Sec, iv.Load.CPUSpeed)
			}
		}
	})
	cpus := float64(runtime.NumCPU()) // the CPUs this process may run on
	for _, c := range []struct {
		name  string
		every time.Duration
	}{{"default", 0}, {"every 10 ms", 10 * time.Millisecond}} {
		fake(t, func(t *testing.T, opt Options) {
			opt.SpeedProbeEvery = c.every
			every := c.every
			if every == 0 {
				every = meter.SpeedProbeEveryFor(measured)
			}
			res := run(t, opt)
			perCPU := measured.Seconds() / every.Seconds()
			n, mean := res.Facts[store.FactCPUSpeedSamples], res.Facts[store.FactCPUSpeed]
			if n < cpus*(perCPU-1) || n > cpus*(perCPU+1) || !(mean > 0) {
				t.Errorf("%s: %v samples (mean %v) over %v on %v CPUs, want %v per CPU, give or take one",
					c.name, n, mean, measured, cpus, perCPU)
			}
			t.Logf("%s: %v samples on %v CPUs, mean %.1f rounds/µs", c.name, n, cpus, mean)
			lo, hi, seconds := 0.0, 0.0, 0
			for _, iv := range res.Intervals {
				if iv.Sec < 0 {
					continue
				}
				seconds++
				if iv.Load == nil || !(iv.Load.CPUSpeed > 0) {
					t.Errorf("%s: second %d has load %+v, want a CPU speed", c.name, iv.Sec, iv.Load)
					continue
				}
				if s := iv.Load.CPUSpeed; seconds == 1 || s < lo {
					lo = s
				}
				hi = max(hi, iv.Load.CPUSpeed)
			}
			// A probe ending exactly at the measured part's start counts in
			// the step but in no second: at most one per CPU, and its speed
			// is real (a first, cold probe ran at 0.68 of the seconds' least
			// once). So the seconds' samples weigh at least (n-cpus)/n of
			// the mean, and an edge sample counts as anything from 0 to
			// twice the fastest second.
			inside := (n - cpus) / n
			if seconds != 2 || mean < inside*lo || mean > inside*hi+(1-inside)*2*hi {
				t.Errorf("%s: step's mean speed %v, %d seconds' means from %v to %v; want 2 with it between them",
					c.name, mean, seconds, lo, hi)
			}
		})
	}
}
