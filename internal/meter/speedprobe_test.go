package meter

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
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

// TestSpeedProbe probes every CPU for 400 ms of fake time (a
// testing/synctest bubble: each tick's probe runs before the clock moves
// on, so a probe thread waiting for a busy CPU misses no tick, where in
// real time a loaded machine left 10 ms probes 15% of their samples):
// each gives 8 samples at one per 50 ms (7 when the probe sees the stop
// before the last tick), every rate is positive and finite, and the
// summary counts every sample kept, with the CPU time their rounds took;
// afterwards every thread of the process may run on the CPUs it could
// before (the probes moved theirs).
func TestSpeedProbe(t *testing.T) { synctest.Test(t, testSpeedProbe) }

func testSpeedProbe(t *testing.T) {
	before := allowedCPUs(t)
	start := time.Now()
	p := StartSpeedProbe(nil, start, 50*time.Millisecond)
	tids := ThreadsOf("/proc", []int{os.Getpid()})
	for _, tid := range p.TIDs() {
		if !slices.Contains(tids, tid) {
			t.Errorf("probe thread %d is not a thread of this process %v", tid, tids)
		}
	}
	time.Sleep(400 * time.Millisecond)
	to := time.Now()
	sum := p.Stop(to)
	// A probe may end a sample between to and Stop: it is kept, not summed.
	var samples []SpeedSample
	per, all := map[int]int{}, map[int]int{}
	for _, s := range p.Recent() {
		all[s.CPU]++
		if !s.At.After(to) {
			samples = append(samples, s)
			per[s.CPU]++
		}
	}
	for i, s := range samples {
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
	if len(p.TIDs()) != len(all) {
		t.Errorf("%d probe threads for %d CPUs probed", len(p.TIDs()), len(all))
	}
	for cpu, n := range all {
		if n < 7 || n > 8 {
			t.Errorf("CPU %d: %d samples in 400 ms, want 8 (7 if the stop came first)", cpu, n)
		}
	}
	if sum.N != len(samples) || sum.Mean <= 0 || !maps.Equal(sum.PerCPU, per) {
		t.Errorf("summary: mean %v over %d %v, want a mean over %d %v", sum.Mean, sum.N, sum.PerCPU, len(samples), per)
	}
	// Each probe's CPU time is its rounds at its rate.
	var want float64
	for _, s := range samples {
		want += SpeedProbeRounds / s.Rate * 1e3
	}
	if math.Abs(float64(sum.CPU)-want) > 0.001*want+float64(len(samples)) {
		t.Errorf("summary CPU %v, want %v ns (rounds over rate)", sum.CPU, want)
	}
	if after := allowedCPUs(t); len(after) != 1 || len(before) != 1 || !after[firstKey(before)] {
		t.Errorf("threads' allowed CPUs %v after the probe, want all as before: %v", after, before)
	}
	t.Logf("%d samples, mean %.1f rounds/µs (%.0f µs per probe)", len(samples), sum.Mean, SpeedProbeRounds/sum.Mean)
}

// TestSpeedProbeBounded feeds a probe that keeps 4 recent samples: samples
// before its start are dropped, older ones are folded into the sum without
// being lost, the ones after the summary's end are left out, and the kept
// samples never outgrow 4, worked by hand.
func TestSpeedProbeBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := &SpeedProbe{from: t0, keep: 4}
	p.add(SpeedSample{At: t0.Add(-time.Second), CPU: 0, Rate: 1000, CPUTime: time.Hour}) // before the start
	for i := range 10 {
		p.add(SpeedSample{At: t0.Add(time.Duration(i) * time.Second), CPU: i % 2, Rate: float64(i + 1), CPUTime: time.Millisecond})
		if len(p.recent) > 4 || cap(p.recent) > 8 {
			t.Fatalf("after %d samples: %d kept, capacity %d; want at most 4", i+1, len(p.recent), cap(p.recent))
		}
	}
	// Up to second 8: rates 1..9, mean 5, 9 ms; CPU 0 had seconds 0, 2, 4, 6, 8.
	got := p.summary(t0.Add(8 * time.Second))
	if got.N != 9 || got.Mean != 5 || got.CPU != 9*time.Millisecond || got.PerCPU[0] != 5 || got.PerCPU[1] != 4 {
		t.Errorf("summary to second 8 = %+v, want 9 samples, mean 5, 9ms, 5 on CPU 0 and 4 on CPU 1", got)
	}
	if all := p.summary(t0.Add(time.Hour)); all.N != 10 || all.Mean != 5.5 {
		t.Errorf("summary of all = %+v, want 10 samples, mean 5.5", all)
	}
	if p.older.N != 6 {
		t.Errorf("%d samples folded, want 6", p.older.N)
	}
}

// TestSpeedProbeMeanIn checks a second's speed, worked by hand: the mean
// of the kept samples that ended in (from, to], the end included and the
// start not, and 0, 0 for a second without one and for probes turned off.
func TestSpeedProbeMeanIn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := &SpeedProbe{from: t0, keep: 16}
	for i, rate := range []float64{100, 110, 90, 60, 120} {
		p.add(SpeedSample{At: t0.Add(time.Duration(i*250) * time.Millisecond), CPU: i % 2, Rate: rate})
	}
	for _, c := range []struct {
		from, to time.Duration
		mean     float64
		n        int
	}{
		{-time.Second, 0, 100, 1},                               // the end included
		{0, time.Second, 95, 4},                                 // 110, 90, 60 and 120; 100 at the start left out
		{500 * time.Millisecond, 750 * time.Millisecond, 60, 1}, // one sample
		{2 * time.Second, 3 * time.Second, 0, 0},                // none
	} {
		if mean, n := p.MeanIn(t0.Add(c.from), t0.Add(c.to)); mean != c.mean || n != c.n {
			t.Errorf("MeanIn(%v, %v] = %v over %d, want %v over %d", c.from, c.to, mean, n, c.mean, c.n)
		}
	}
	var off *SpeedProbe
	if mean, n := off.MeanIn(t0, t0.Add(time.Hour)); mean != 0 || n != 0 {
		t.Errorf("probes off: %v over %d, want 0 over 0", mean, n)
	}
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

// TestSpeedProbeEveryFor works the default pause out by hand: 20 probes per
// CPU over a short measured part, never more often than every 10 ms, never
// less often than every 200 ms, and 200 ms when the length is unknown.
func TestSpeedProbeEveryFor(t *testing.T) {
	for _, c := range []struct{ measured, want time.Duration }{
		{0, 200 * time.Millisecond},
		{-time.Second, 200 * time.Millisecond},
		{100 * time.Millisecond, 10 * time.Millisecond},
		{600 * time.Millisecond, 30 * time.Millisecond},
		{time.Second, 50 * time.Millisecond},
		{4 * time.Second, 200 * time.Millisecond},
		{time.Hour, 200 * time.Millisecond},
	} {
		if got := SpeedProbeEveryFor(c.measured); got != c.want {
			t.Errorf("SpeedProbeEveryFor(%v) = %v, want %v", c.measured, got, c.want)
		}
	}
}
