package noise

import (
	"math"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// memRun is a run of host h1 whose memory canaries' 32 MiB walks ran at
// before and after loads/s (0: no canary at that end).
func memRun(id int64, before, after float64) store.Run {
	var m store.Manifest
	m.Host = store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
	m.Canary = &store.Canary{CPULoopsPerSec: 1000, FsyncsPerSec: 100, MemLoadsPerSec: before}
	if after > 0 {
		m.CanaryAfter = &store.Canary{CPULoopsPerSec: 1000, MemLoadsPerSec: after}
	}
	return store.Run{ID: id, Target: "b", Repeat: int(id), Manifest: m.JSON()}
}

// TestHostSlow: the memory canaries bracketing a run against the host's
// median and spread, on hand-worked figures.
func TestHostSlow(t *testing.T) {
	// A steady host: ten walks at 100, one at 90, one at 50. Median 100,
	// median absolute deviation 0, so the limit is the floor, x1.5: the
	// run whose walk after it ran at 50 (x2) is flagged, the one at 90
	// (x1.11) is not.
	runs := []store.Run{memRun(1, 100, 100), memRun(2, 100, 100), memRun(3, 100, 100), memRun(4, 100, 100),
		memRun(5, 90, 100), memRun(6, 100, 50)}
	b := Baseline("h1/cpu/2 cores", runs)
	if b.Mem.N != 12 || math.Abs(b.Mem.Median-100) > 1e-9 || b.Mem.Spread != 0 || b.Mem.Limit() != 1+CanaryMinSlow || b.Cache.N != 0 {
		t.Fatalf("baseline %+v", b)
	}
	var flagged []string
	for _, r := range runs {
		if h, slow := b.HostSlow(r); slow {
			flagged = append(flagged, h.String())
		}
	}
	want := "host slow during run: memory canary (32 MiB) x2.00 after the run, the host's spread allows x1.50"
	if len(flagged) != 1 || flagged[0] != want {
		t.Errorf("flagged %q, want [%q]", flagged, want)
	}
	m := &Model{Canaries: b}
	if m.HostSlow(runs[5]) != want || m.HostSlow(runs[4]) != "" || (*Model)(nil).HostSlow(runs[5]) != "" {
		t.Errorf("model: run 6 %q, run 5 %q", m.HostSlow(runs[5]), m.HostSlow(runs[4]))
	}

	// A host whose walks spread: 80, 90, 100, 100, 100, 110, 120. Median
	// 100; absolute deviations of the logs 0, 0, 0, 0.0953, 0.1054,
	// 0.1823, 0.2231, median 0.0953 = ln 1.1; spread 1.4826·0.0953 =
	// 0.1413; limit exp(3·0.1413) = x1.528. A walk at 70 (x1.43) is inside
	// this host's spread.
	f := figureOf([]float64{80, 90, 100, 100, 100, 110, 120})
	if math.Abs(f.Median-100) > 1e-9 || math.Abs(f.Spread-1.4826*math.Log(1.1)) > 1e-12 ||
		math.Abs(f.Limit()-math.Exp(3*1.4826*math.Log(1.1))) > 1e-12 || math.Abs(f.Limit()-1.528) > 0.001 {
		t.Fatalf("figure %+v, limit %.4f", f, f.Limit())
	}
	spread := CanaryBaseline{Mem: f}
	if _, slow := spread.HostSlow(memRun(9, 70, 0)); slow {
		t.Error("x1.43 flagged on a host whose spread allows x1.53")
	}
	if h, slow := spread.HostSlow(memRun(9, 60, 0)); !slow || !strings.Contains(h.String(), "x1.67 before the run") {
		t.Errorf("x1.67 before the run: %v %v", h, slow)
	}

	// Runs stored before the memory canary: no figure, nothing flagged.
	old := []store.Run{}
	for i := range 6 {
		old = append(old, memRun(int64(i+1), 0, 0))
	}
	ob := Baseline("h1/cpu/2 cores", old)
	for _, r := range old {
		if _, slow := ob.HostSlow(r); slow || ob.Mem.N != 0 {
			t.Errorf("old run flagged (baseline %+v)", ob)
		}
	}
	// Too few canaries for a median: nothing flagged.
	if _, slow := Baseline("h1/cpu/2 cores", runs[4:]).HostSlow(runs[5]); slow {
		t.Error("flagged against a baseline of 4 walks")
	}
}
