package metrics

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The speed probe. A virtual machine's CPUs do not run at one speed: when
// the host puts another tenant's thread on the hyperthread sibling of a
// virtual CPU's core, or lowers the core's clock, every instruction of the
// guest takes longer for a while, and neither steal time, the load average
// nor the process's CPU time shows it (the process runs all the time; it
// does less with it). On the machine benchlab is developed on, a
// CPU-bound SQLite statement ran 1.8x faster per CPU second in some seconds
// than in others, each virtual CPU on its own schedule. Canaries before and
// after a run miss what happens during it, so the probe runs during the
// measured part: on each CPU, every SpeedProbeEvery, a fixed loop of
// SpeedProbeRounds rounds, timed by the probing thread's own CPU clock so
// that waiting for the CPU does not count. Its rate, rounds per CPU
// microsecond, is the CPU's speed at that moment.
const (
	// SpeedProbeEvery is the pause between two probes on one CPU.
	SpeedProbeEvery = 50 * time.Millisecond
	// SpeedProbeRounds is the loop's length: about 220 µs of one CPU on
	// the development machine, so the probes take about 0.4% of each CPU.
	SpeedProbeRounds = 1 << 15
)

// SpeedSample is one probe: when it ended, on which CPU, and the rate.
type SpeedSample struct {
	At  time.Time
	CPU int
	// Rate is SpeedProbeRounds per microsecond of the probing thread's CPU
	// time.
	Rate float64
	// CPU is the probe's own CPU time, which benchlab's CPU includes.
	CPUTime time.Duration
}

// SpeedProbe probes the speed of some CPUs in the background until Stop.
type SpeedProbe struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []SpeedSample
	tids    []int
}

// StartSpeedProbe starts one probing thread per CPU of cpus (all the CPUs
// this process may run on when nil). A CPU the thread cannot be moved to
// is not probed.
func StartSpeedProbe(cpus []int) *SpeedProbe {
	if cpus == nil {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err == nil {
			for c := 0; c < len(set)*64; c++ {
				if set.IsSet(c) {
					cpus = append(cpus, c)
				}
			}
		}
	}
	p := &SpeedProbe{stop: make(chan struct{})}
	ready := make(chan int, len(cpus))
	for _, c := range cpus {
		p.wg.Add(1)
		go p.probe(c, ready)
	}
	for range cpus {
		if tid := <-ready; tid > 0 {
			p.tids = append(p.tids, tid)
		}
	}
	return p
}

// TIDs are the probing threads' IDs, so that what is measured of
// benchlab's threads can leave them out: a probe pinned to a CPU waits for
// whatever runs there, benchlab's own workers included.
func (p *SpeedProbe) TIDs() []int { return p.tids }

// probe runs on a thread of its own moved to cpu, and gives the thread
// back to the Go runtime with its CPUs as they were. (Ending the goroutine
// locked, which makes the runtime end the thread, stops a perf record
// attached to the process: a profiled step's profile was lost.)
func (p *SpeedProbe) probe(cpu int, ready chan<- int) {
	defer p.wg.Done()
	runtime.LockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		ready <- 0
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		ready <- 0
		return
	}
	ready <- unix.Gettid()
	defer func() {
		if unix.SchedSetaffinity(0, &was) == nil {
			runtime.UnlockOSThread()
		} // else the goroutine ends locked and the runtime ends the thread
	}()
	t := time.NewTicker(SpeedProbeEvery)
	defer t.Stop()
	var table [4096]uint32
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		c0, ok0 := threadCPU()
		speedLoop(&table, SpeedProbeRounds)
		c1, ok1 := threadCPU()
		if !ok0 || !ok1 || c1 <= c0 {
			continue
		}
		s := SpeedSample{At: time.Now(), CPU: cpu, Rate: SpeedProbeRounds / (float64(c1-c0) / 1e3), CPUTime: time.Duration(c1 - c0)}
		p.mu.Lock()
		p.samples = append(p.samples, s)
		p.mu.Unlock()
	}
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// speedSink keeps the loop's result alive.
var speedSink uint32

// speedLoop is the probe's work, shaped like an interpreter's: integer
// arithmetic, loads and stores in a 16 KiB table that stays in the first
// level cache, and branches that depend on the data.
func speedLoop(table *[4096]uint32, rounds int) {
	x := uint32(2463534242)
	var acc uint32
	for i := 0; i < rounds; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		j := x & 4095
		if x&8 != 0 {
			acc += table[j]
		} else {
			acc ^= table[j] >> 3
		}
		table[j] = acc + uint32(i)
	}
	speedSink += acc
}

// Stop ends the probes and returns their samples in time order.
func (p *SpeedProbe) Stop() []SpeedSample {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.samples)
	slices.SortFunc(out, func(a, b SpeedSample) int { return a.At.Compare(b.At) })
	return out
}

// SpeedOver summarises the samples taken in [from, to]: their mean rate,
// how many there were (0 and 0 when none) and the CPU time they took.
func SpeedOver(samples []SpeedSample, from, to time.Time) (mean float64, n int, cpu time.Duration) {
	var sum float64
	for _, s := range samples {
		if s.At.Before(from) || s.At.After(to) {
			continue
		}
		sum += s.Rate
		cpu += s.CPUTime
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return sum / float64(n), n, cpu
}
