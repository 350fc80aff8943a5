package metrics

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// allowedCPUs lists the Cpus_allowed_list of every thread of this process.
func allowedCPUs(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	dirs, _ := filepath.Glob("/proc/self/task/*/status")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				out[strings.TrimSpace(v)] = true
			}
		}
	}
	return out
}

// TestSpeedProbe probes every CPU for 400 ms: each gives samples (about 8
// at one per 50 ms; at least 3 even on a loaded machine), every rate is
// positive and finite, the samples come in time order, and SpeedOver
// averages only those inside its window; afterwards every thread of the
// process may run on the CPUs it could before (the probes moved theirs).
func TestSpeedProbe(t *testing.T) {
	before := allowedCPUs(t)
	start := time.Now()
	p := StartSpeedProbe(nil)
	tids := ThreadsOf("/proc", []int{os.Getpid()})
	for _, tid := range p.TIDs() {
		if !slices.Contains(tids, tid) {
			t.Errorf("probe thread %d is not a thread of this process %v", tid, tids)
		}
	}
	time.Sleep(400 * time.Millisecond)
	samples := p.Stop()
	per := map[int]int{}
	for i, s := range samples {
		per[s.CPU]++
		if !(s.Rate > 0) || s.Rate > 1e6 {
			t.Fatalf("sample %d: rate %v, want a positive rounds/µs", i, s.Rate)
		}
		if i > 0 && s.At.Before(samples[i-1].At) {
			t.Fatalf("samples out of order at %d", i)
		}
	}
	if len(per) == 0 {
		t.Fatal("no CPU probed")
	}
	if len(p.TIDs()) != len(per) {
		t.Errorf("%d probe threads for %d CPUs probed", len(p.TIDs()), len(per))
	}
	for cpu, n := range per {
		if n < 3 {
			t.Errorf("CPU %d: %d samples in 400 ms, want at least 3", cpu, n)
		}
	}
	mean, n, cpu := SpeedOver(samples, start, time.Now())
	if n != len(samples) || mean <= 0 {
		t.Errorf("SpeedOver(all) = %v over %d, want a mean over %d", mean, n, len(samples))
	}
	// Each probe's CPU time is its rounds at its rate.
	var want float64
	for _, s := range samples {
		want += SpeedProbeRounds / s.Rate * 1e3
	}
	if math.Abs(float64(cpu)-want) > 0.001*want+float64(len(samples)) {
		t.Errorf("SpeedOver CPU %v, want %v ns (rounds over rate)", cpu, want)
	}
	if _, n, _ := SpeedOver(samples, start.Add(-time.Hour), start); n != 0 {
		t.Errorf("SpeedOver before the probe counted %d samples, want 0", n)
	}
	if after := allowedCPUs(t); len(after) != 1 || len(before) != 1 || !after[firstKey(before)] {
		t.Errorf("threads' allowed CPUs %v after the probe, want all as before: %v", after, before)
	}
	t.Logf("%d samples, mean %.1f rounds/µs (%.0f µs per probe)", len(samples), mean, SpeedProbeRounds/mean)
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}
