package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/store"
)

// TestSpeedProbeOption checks Options.SpeedProbeEvery: turned off, a step
// carries no speed facts (and so no slow-CPU flag); by default a 1 s step
// gets at least a few probes per CPU and at most SpeedProbeMinSamples and
// a little; every 10 ms, it carries more samples than the default could
// take in the same window. Each measured second of the series carries the
// mean speed of the probes in it (none with probes off), near the step's.
func TestSpeedProbeOption(t *testing.T) {
	const measured = time.Second
	off, err := MeasureRoles(context.Background(), nil, emptyStep(measured, 0), 1, 1, Options{SpeedProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{store.FactCPUSpeed, store.FactCPUSpeedSamples, store.FactCPUSpeedCPU} {
		if v, ok := off[0].Facts[k]; ok {
			t.Errorf("probes off: fact %s = %v, want none", k, v)
		}
	}
	for _, iv := range off[0].Intervals {
		if iv.Load != nil && iv.Load.CPUSpeed != 0 {
			t.Errorf("probes off: second %d has CPU speed %v, want none", iv.Sec, iv.Load.CPUSpeed)
		}
	}
	byDefault := float64(runtime.NumCPU()) * (measured.Seconds()/meter.SpeedProbeEveryFor(measured).Seconds() + 2)
	def, err := MeasureRoles(context.Background(), nil, emptyStep(measured, 0), 1, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := def[0].Facts[store.FactCPUSpeedSamples]; n < 3 || n > byDefault {
		t.Errorf("default probes: %v samples over %v, want 3 to %.0f", n, measured, byDefault)
	}
	often, err := MeasureRoles(context.Background(), nil, emptyStep(measured, 0), 1, 1, Options{SpeedProbeEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := often[0].Facts[store.FactCPUSpeedSamples]
	if n <= byDefault || !(often[0].Facts[store.FactCPUSpeed] > 0) {
		t.Errorf("probes every 10 ms: %v samples (mean %v) over %v, want more than the default's at most %.0f",
			n, often[0].Facts[store.FactCPUSpeed], measured, byDefault)
	}
	seconds := 0
	for _, iv := range often[0].Intervals {
		if iv.Sec < 0 || iv.Seconds < 0.5 {
			continue
		}
		seconds++
		step := often[0].Facts[store.FactCPUSpeed]
		if iv.Load == nil || iv.Load.CPUSpeed < 0.75*step || iv.Load.CPUSpeed > 1.25*step {
			t.Errorf("second %d: load %+v; want a CPU speed within 25%% of the step's %v", iv.Sec, iv.Load, step)
		}
	}
	if seconds == 0 {
		t.Errorf("no measured second in %+v", often[0].Intervals)
	}
}
