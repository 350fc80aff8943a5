package metrics

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"benchlab/internal/store"
)

// CanaryDuration is how long each canary probe runs.
const CanaryDuration = 100 * time.Millisecond

// canaryChunk is the number of CPU-loop iterations between clock reads.
const canaryChunk = 1 << 14

// Canary runs the fixed probes before a run: a CPU-bound loop for d, then
// 4 KiB writes each followed by fsync for d in a file of dir, which is
// removed afterwards. Their rates, set against the host's other runs, tell
// a slow machine (a noisy neighbour, a throttled disk) from a slow
// database. A probe that cannot run leaves its figure at 0 and says why in
// Error; Canary itself never fails a run.
func Canary(ctx context.Context, dir string, d time.Duration) store.Canary {
	var c store.Canary
	c.CPULoopsPerSec = cpuLoop(ctx, d)
	n, err := fsyncLoop(ctx, dir, d)
	if err != nil {
		c.Error = err.Error()
	}
	c.FsyncsPerSec = n
	return c
}

// canarySink keeps the CPU loop's result alive so the compiler cannot drop
// the loop.
var canarySink uint64

// cpuLoop runs a xorshift-multiply loop for d and returns iterations per
// second.
func cpuLoop(ctx context.Context, d time.Duration) float64 {
	x := uint64(88172645463325252)
	var iters int
	start := time.Now()
	for ctx.Err() == nil {
		for range canaryChunk {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			x *= 0x9e3779b97f4a7c15
		}
		iters += canaryChunk
		if time.Since(start) >= d {
			break
		}
	}
	canarySink += x
	return float64(iters) / time.Since(start).Seconds()
}

// fsyncLoop writes 4 KiB at offset 0 of a file in dir and fsyncs it, again
// and again for d; it returns the pairs per second.
func fsyncLoop(ctx context.Context, dir string, d time.Duration) (float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("fsync canary: %w", err)
	}
	f, err := os.CreateTemp(dir, "benchlab-canary-")
	if err != nil {
		return 0, fmt.Errorf("fsync canary: %w", err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i)
	}
	var n int
	start := time.Now()
	for ctx.Err() == nil && (n == 0 || time.Since(start) < d) {
		if _, err := f.WriteAt(buf, 0); err != nil {
			return 0, fmt.Errorf("fsync canary: %w", err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("fsync canary: %w", err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
