package meter

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// CanaryDuration is how long each canary probe runs.
const CanaryDuration = 100 * time.Millisecond

// Memory canary sizes: a dependent random walk over CanaryCacheBytes
// misses the first-level cache and stays in a core's second-level cache;
// over CanaryMemBytes it misses that cache and the TLB on almost every
// load and lives in the last-level cache shared with the host's other
// tenants, or in memory. What slows either (a neighbour's cache or memory
// traffic, a hyperthread sibling's) slows a database's own loads, while a
// register-bound CPU loop does not feel it.
const (
	CanaryCacheBytes = 512 << 10
	CanaryMemBytes   = 32 << 20
	// CanaryChaseDuration is how long each walk runs.
	CanaryChaseDuration = 50 * time.Millisecond
)

// canaryChunk is the number of CPU-loop iterations between clock reads.
const canaryChunk = 1 << 14

// Canary runs the fixed probes before a run: a CPU-bound loop for d, then
// 4 KiB writes each followed by fsync for d in a file of dir, which is
// removed afterwards, then the memory canary (MemoryCanary). Their rates,
// set against the host's other runs, tell a slow machine (a noisy
// neighbour, a throttled disk) from a slow database. A probe that cannot
// run leaves its figure at 0 and says why in Error; Canary itself never
// fails a run.
func Canary(ctx context.Context, dir string, d time.Duration) CanaryReading {
	var c CanaryReading
	c.CPULoopsPerSec = cpuLoop(ctx, d)
	n, err := fsyncLoop(ctx, dir, d)
	if err != nil {
		c.Error = err.Error()
	}
	c.FsyncsPerSec = n
	MemoryCanary(ctx, &c)
	return c
}

// CanaryAfter runs the probes that bracket a run from its end: the CPU
// loop for d and the memory canary. It has no fsync probe: right after a
// run the device still writes back the run's own data, which would charge
// the database's writes to the machine.
func CanaryAfter(ctx context.Context, d time.Duration) CanaryReading {
	c := CanaryReading{CPULoopsPerSec: cpuLoop(ctx, d)}
	MemoryCanary(ctx, &c)
	return c
}

// MemoryCanary sets c's memory figures: dependent random walks over
// CanaryCacheBytes and CanaryMemBytes, CanaryChaseDuration each (about
// 120 ms in all with building the walks). A walk that cannot run leaves
// its figure at 0 and says why in c.Error.
func MemoryCanary(ctx context.Context, c *CanaryReading) {
	var errs []string
	var err error
	if c.CacheLoadsPerSec, err = ChaseRate(ctx, CanaryCacheBytes, CanaryChaseDuration); err != nil {
		errs = append(errs, err.Error())
	}
	if c.MemLoadsPerSec, err = ChaseRate(ctx, CanaryMemBytes, CanaryChaseDuration); err != nil {
		errs = append(errs, err.Error())
	}
	for _, e := range errs {
		if c.Error != "" {
			c.Error += "; "
		}
		c.Error += e
	}
}

// chaseLine is the stride of the walk: one load per 64-byte cache line.
const chaseLine = 64

// chaseChunk is the number of loads between clock reads.
const chaseChunk = 1 << 10

// ChaseRate walks a random cycle through every cache line of a buffer of
// size bytes for d, each load's address read from the line the previous
// load fetched, and returns the loads per second: the latency of the
// level of the memory hierarchy the buffer fits in, which no prefetcher
// or out-of-order core can hide. The buffer is mapped outside the Go heap
// and unmapped on return, so the walk leaves benchlab's heap and resident
// set as they were; the cycle is the same on every call (a fixed seed).
func ChaseRate(ctx context.Context, size int, d time.Duration) (float64, error) {
	n := size / chaseLine
	if n < 2 || size > 1<<31 {
		return 0, fmt.Errorf("memory canary: %d bytes is not a walk; want 128 bytes to 2 GiB", size)
	}
	buf, err := syscall.Mmap(-1, 0, n*chaseLine, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE|mapPopulate)
	if err != nil {
		return 0, fmt.Errorf("memory canary: map %d bytes: %w", size, err)
	}
	defer syscall.Munmap(buf)
	// Line i holds the offset of line next[i], written in order so that
	// building costs a pass, not a walk.
	for i, nx := range chaseCycle(n) {
		binary.LittleEndian.PutUint32(buf[i*chaseLine:], nx*chaseLine)
	}
	var p uint32
	var loads int
	start := time.Now()
	for ctx.Err() == nil {
		for range chaseChunk {
			p = binary.LittleEndian.Uint32(buf[p:])
		}
		loads += chaseChunk
		if time.Since(start) >= d {
			break
		}
	}
	canarySink += uint64(p)
	return float64(loads) / time.Since(start).Seconds(), nil
}

// chaseCycle is one random cycle through 0..n-1 (Sattolo's shuffle):
// following i -> next[i] from any i visits all n before it returns.
func chaseCycle(n int) []uint32 {
	next := make([]uint32, n)
	for i := range next {
		next[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	return next
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
