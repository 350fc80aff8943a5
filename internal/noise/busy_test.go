package noise

import (
	"strings"
	"testing"

	"benchlab/internal/store"
)

// busyResult is a result whose measured part lasted 10 s on a 2-CPU
// machine (20 CPU seconds), of which the machine was busy busyS, the
// client used clientS, and the step's threads ran run and waited wait.
func busyResult(busyS, clientS, run, wait float64) store.Result {
	return store.Result{
		Eff: &store.Efficiency{Seconds: 10, MachineCPU: 20, MachineBusy: busyS, ClientCPU: clientS, ServerCPU: store.NotMeasured},
		Facts: map[string]float64{
			store.SchedRunFact("client"): run, store.SchedWaitFact("client"): wait,
		},
	}
}

// TestBusy: a result is on a busy machine only when other processes used
// more than a quarter of all CPU AND its threads waited at least a tenth of
// their running time; either alone is not enough, and what was not
// measured flags nothing.
func TestBusy(t *testing.T) {
	cases := []struct {
		name string
		r    store.Result
		busy bool
	}{
		// foreign = 16-8 = 8 of 20 CPU s = 40%; wait 3/8 = 37.5%.
		{"foreign and wait", busyResult(16, 8, 8, 3), true},
		// foreign 40%, but the threads waited 5%: the others ran on the other CPU.
		{"foreign without wait", busyResult(16, 8, 8, 0.4), false},
		// foreign = 13-8 = 5 of 20 = 25%: not more than 25%.
		{"wait without foreign", busyResult(13, 8, 8, 4), false},
		{"no schedstat facts", store.Result{Eff: busyResult(16, 8, 8, 3).Eff}, false},
		{"no efficiency", store.Result{Facts: busyResult(16, 8, 8, 3).Facts}, false},
	}
	for _, c := range cases {
		got := Busy(c.r)
		if (got != "") != c.busy {
			t.Errorf("%s: Busy = %q, want busy %v", c.name, got, c.busy)
		}
	}
	if got := Busy(busyResult(16, 8, 8, 3)); !strings.Contains(got, "40% of all CPU") || !strings.Contains(got, "38% of their running time") {
		t.Errorf("Busy = %q, want the 40%% foreign share and the 38%% wait", got)
	}
	if got := Busy(busyResult(16, 8, 2, 5)); !strings.Contains(got, "waited for a CPU 2.5x as long as they ran") {
		t.Errorf("Busy = %q, want a wait of 2.5x the running time", got)
	}
}

func speedResult(speed float64) store.Result {
	return store.Result{Facts: map[string]float64{store.FactCPUSpeed: speed, store.FactCPUSpeedSamples: 20}}
}

// TestSlowCPU: the median needs SlowCPUMinRuns probed runs; a run at
// x0.85 of it is slow, one at x0.95 is not, and a run without probes never
// is.
func TestSlowCPU(t *testing.T) {
	base := []store.Result{speedResult(100), speedResult(98), speedResult(85)}
	other := []store.Result{speedResult(102), speedResult(95), {}}
	if m := SpeedMedian(base[:2], other[:1]); m != 0 {
		t.Fatalf("SpeedMedian of 3 probed runs = %v, want 0 (fewer than %d)", m, SlowCPUMinRuns)
	}
	m := SpeedMedian(base, other) // 85 95 98 100 102 -> 98
	if m != 98 {
		t.Fatalf("SpeedMedian = %v, want 98", m)
	}
	if s := SlowCPU(base[2], m); !strings.Contains(s, "x0.87") {
		t.Errorf("SlowCPU(85 of 98) = %q, want slow at x0.87", s)
	}
	if s := SlowCPU(other[1], m); s != "" {
		t.Errorf("SlowCPU(95 of 98) = %q, want not slow", s)
	}
	if s := SlowCPU(other[2], m); s != "" {
		t.Errorf("SlowCPU(no probes) = %q, want not slow", s)
	}
	if s := Disturbed(base[2], 0); s != "" {
		t.Errorf("Disturbed without a median = %q, want nothing", s)
	}
}
