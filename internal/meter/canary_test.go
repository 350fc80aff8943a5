package meter

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCanary(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	c := Canary(context.Background(), dir, 50*time.Millisecond)
	took := time.Since(start)
	if c.Error != "" || c.CPULoopsPerSec <= 0 || c.FsyncsPerSec <= 0 || c.CacheLoadsPerSec <= 0 || c.MemLoadsPerSec <= 0 {
		t.Fatalf("canary %+v, want every rate positive and no error", c)
	}
	// A walk in the second-level cache is faster than one that misses it;
	// the best of five short walks each, so that a walk the scheduler
	// stalls on a busy machine does not decide (three failed once at a
	// load average of about 20).
	best := func(size int) float64 {
		var b float64
		for range 5 {
			r, err := ChaseRate(context.Background(), size, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			b = max(b, r)
		}
		return b
	}
	if small, large := best(CanaryCacheBytes), best(CanaryMemBytes); small <= large {
		t.Errorf("512 KiB walk %.3g loads/s, 32 MiB walk %.3g: want the smaller faster", small, large)
	}
	// At least its probes' time (at most is the go test timeout's to say:
	// a busy machine stretches it without limit).
	if took < 100*time.Millisecond+2*CanaryChaseDuration {
		t.Errorf("two 50 ms probes and the memory canary took %s, less than their own time", took)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("canary left %v in its dir (err %v)", left, err)
	}
	// After a run: no fsync probe, the others.
	a := CanaryAfter(context.Background(), 10*time.Millisecond)
	if a.Error != "" || a.CPULoopsPerSec <= 0 || a.FsyncsPerSec != 0 || a.MemLoadsPerSec <= 0 || a.CacheLoadsPerSec <= 0 {
		t.Errorf("canary after a run %+v, want CPU and memory figures, no fsync", a)
	}
	// A dir that cannot be created: the CPU figure stays, fsync says why.
	c = Canary(context.Background(), "/proc/benchlab-no-such-dir", 10*time.Millisecond)
	if c.Error == "" || c.FsyncsPerSec != 0 || c.CPULoopsPerSec <= 0 || c.MemLoadsPerSec <= 0 {
		t.Errorf("canary in an unwritable dir: %+v", c)
	}
	if _, err := ChaseRate(context.Background(), 64, time.Millisecond); err == nil {
		t.Error("a walk of one line: no error")
	}
}

// TestChaseCycle: the walk visits every line once before it returns, so
// it measures the whole buffer.
func TestChaseCycle(t *testing.T) {
	for _, n := range []int{2, 3, 1000, CanaryMemBytes / chaseLine} {
		next := chaseCycle(n)
		seen := make([]bool, n)
		p, steps := uint32(0), 0
		for !seen[p] {
			seen[p] = true
			p = next[p]
			steps++
		}
		if p != 0 || steps != n {
			t.Errorf("n=%d: back to line %d after %d steps, want line 0 after %d", n, p, steps, n)
		}
	}
}

// BenchmarkMemoryCanarySeesMemoryHog is the memory canary against a real
// disturbance: a goroutine writing over 512 MiB, more than the last-level
// cache of the development host (300 MiB), evicting the walk's lines and
// taking memory bandwidth. Quiet and hogged walks alternate over 5 rounds;
// the quiet reference is the fastest quiet walk (other load on the machine
// only slows walks), the hogged figure the median hogged walk (a hog that
// got no CPU in one round does not decide). It reports how much slower the
// hogged walk was (x-slower) and the CPU loop's figure (cpu-x-slower).
// It is a benchmark, not a test with a bound: how much a hog slows the walk
// depends on the host's caches and on where the scheduler puts the hog (the
// figures measured so far are in docs/design-notes.md#memory-canary), so it
// is a figure to read, not a bound to hold.
func BenchmarkMemoryCanarySeesMemoryHog(b *testing.B) {
	ctx := context.Background()
	hogBuf := make([]uint64, 512<<20/8)
	for i := range hogBuf { // fault the pages in before the first round
		hogBuf[i] = uint64(i)
	}
	hog := func() (stop func()) {
		var done atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				for i := 0; i < len(hogBuf) && !done.Load(); i += 4096 {
					for j := i; j < i+4096; j += 8 { // a write per cache line
						hogBuf[j]++
					}
				}
			}
		}()
		return func() { done.Store(true); wg.Wait() }
	}
	median := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	var ratios, cpuRatios []float64
	for range b.N {
		var quiet, hogged, quietCPU, hoggedCPU []float64
		for range 5 {
			q, err := ChaseRate(ctx, CanaryMemBytes, CanaryChaseDuration)
			if err != nil {
				b.Fatal(err)
			}
			quiet, quietCPU = append(quiet, q), append(quietCPU, cpuLoop(ctx, CanaryChaseDuration))
			stop := hog()
			time.Sleep(100 * time.Millisecond)
			h, err := ChaseRate(ctx, CanaryMemBytes, CanaryChaseDuration)
			hc := cpuLoop(ctx, CanaryChaseDuration)
			stop()
			if err != nil {
				b.Fatal(err)
			}
			hogged, hoggedCPU = append(hogged, h), append(hoggedCPU, hc)
		}
		ratios = append(ratios, slices.Max(quiet)/median(hogged))
		cpuRatios = append(cpuRatios, slices.Max(quietCPU)/median(hoggedCPU))
	}
	b.ReportMetric(median(ratios), "x-slower")
	b.ReportMetric(median(cpuRatios), "cpu-x-slower")
}

// BenchmarkMemoryCanary is the memory canary's cost: its two walks of
// 50 ms and building them.
func BenchmarkMemoryCanary(b *testing.B) {
	for b.Loop() {
		var c CanaryReading
		MemoryCanary(context.Background(), &c)
	}
}
