package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"benchlab/internal/metrics"
	"benchlab/internal/store"
)

// TestSpeedProbeOption checks Options.SpeedProbeEvery: turned off, a step
// carries no speed facts (and so no slow-CPU flag); every 20 ms, it carries
// more samples than the 200 ms default could take in the same window.
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
	often, err := MeasureRoles(context.Background(), nil, emptyStep(measured, 0), 1, 1, Options{SpeedProbeEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := often[0].Facts[store.FactCPUSpeedSamples]
	byDefault := float64(runtime.NumCPU()) * (measured.Seconds()/metrics.SpeedProbeEvery.Seconds() + 2)
	if n <= byDefault || !(often[0].Facts[store.FactCPUSpeed] > 0) {
		t.Errorf("probes every 20 ms: %v samples (mean %v) over %v, want more than the default's at most %.0f",
			n, often[0].Facts[store.FactCPUSpeed], measured, byDefault)
	}
}
