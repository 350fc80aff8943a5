package meter

import (
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"
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
// measured part: on each CPU, every SpeedProbeEvery (or the experiment's
// speed_probe), a fixed loop of
// SpeedProbeRounds rounds, timed by the probing thread's own CPU clock so
// that waiting for the CPU does not count. Its rate, rounds per CPU
// microsecond, is the CPU's speed at that moment.
const (
	// SpeedProbeEvery is the default pause between two probes on one CPU.
	// It was 50 ms until side-by-side perf stat pairs against sysbench
	// (PostgreSQL point query, 8 threads) put benchlab's client CPU per
	// query at a median 1.15x sysbench's with probes every 50 ms, 1.10x
	// every 200 ms and 1.06x without: each probe wakes a thread pinned to
	// a CPU, which displaces the worker running there. Every 200 ms still
	// puts 5 probes a second on each CPU, more than a slow spell of half
	// a second needs to show in a step's mean.
	SpeedProbeEvery = 200 * time.Millisecond
	// SpeedProbeRounds is the loop's length: about 220 µs of one CPU on
	// the development machine, so the probes take about 0.1% of each CPU.
	SpeedProbeRounds = 1 << 15
	// MinSpeedProbeEvery and MaxSpeedProbeEvery bound the pause an
	// experiment may ask for (speed_probe).
	MinSpeedProbeEvery = 10 * time.Millisecond
	MaxSpeedProbeEvery = 10 * time.Second
	// SpeedProbeMinSamples is how many probes per CPU the default pause
	// gives a measured part of known length at least (SpeedProbeEveryFor).
	SpeedProbeMinSamples = 20
)

// SpeedProbeEveryFor is the default pause for a measured part of the
// given length: SpeedProbeEvery, shortened for a part too short to get
// SpeedProbeMinSamples probes on each CPU that way (a 600 ms test, such as
// calibrate's, is probed every 30 ms), never below MinSpeedProbeEvery.
// A length of 0 or less (unknown: a step bounded by its operations) takes
// SpeedProbeEvery.
func SpeedProbeEveryFor(measured time.Duration) time.Duration {
	if measured <= 0 {
		return SpeedProbeEvery
	}
	return min(SpeedProbeEvery, max(MinSpeedProbeEvery, measured/SpeedProbeMinSamples))
}

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
// Its memory stays bounded on a run of any length: it keeps the last
// speedRecent samples as they are and folds older ones into a running sum
// (at 20 samples a second per CPU, keeping every sample had cost 7 MB an
// hour on 2 CPUs).
type SpeedProbe struct {
	every time.Duration
	stop  chan struct{}
	wg    sync.WaitGroup
	tids  []int

	mu   sync.Mutex
	from time.Time // samples before it are not kept
	keep int       // how many recent samples are kept as they are
	// recent are the last samples, oldest first; older sums the ones
	// folded out of it.
	recent []SpeedSample
	older  SpeedSummary
}

// SpeedSummary sums up the probes' samples in a window.
type SpeedSummary struct {
	// Mean is the mean rate (rounds per CPU microsecond); 0 when N is 0.
	Mean float64
	// N is the number of samples, PerCPU the number on each CPU.
	N      int
	PerCPU map[int]int
	// CPU is the CPU time the probes took.
	CPU time.Duration
	sum float64
}

// add counts s in the summary.
func (m *SpeedSummary) add(s SpeedSample) {
	if m.PerCPU == nil {
		m.PerCPU = map[int]int{}
	}
	m.N++
	m.PerCPU[s.CPU]++
	m.sum += s.Rate
	m.CPU += s.CPUTime
	m.Mean = m.sum / float64(m.N)
}

// speedRecent is how many recent samples a probe keeps as they are: 12 s
// of samples on 2 CPUs, more than a step takes from its end to Stop.
const speedRecent = 512

// StartSpeedProbe starts one probing thread per CPU of cpus (all the CPUs
// this process may run on when nil), probing each every every
// (SpeedProbeEvery when 0) and keeping the samples taken from from on. A
// CPU the thread cannot be moved to is not probed.
func StartSpeedProbe(cpus []int, from time.Time, every time.Duration) *SpeedProbe {
	if every <= 0 {
		every = SpeedProbeEvery
	}
	if cpus == nil {
		cpus, _ = affinityCPUs()
	}
	p := &SpeedProbe{every: every, stop: make(chan struct{}), from: from, keep: speedRecent}
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
// whatever runs there, benchlab's own workers included. None for a nil
// probe (probes turned off).
func (p *SpeedProbe) TIDs() []int {
	if p == nil {
		return nil
	}
	return p.tids
}

// probe runs on a thread of its own moved to cpu, and gives the thread
// back to the Go runtime with its CPUs as they were. (Ending the goroutine
// locked, which makes the runtime end the thread, stops a perf record
// attached to the process: a profiled step's profile was lost.)
func (p *SpeedProbe) probe(cpu int, ready chan<- int) {
	defer p.wg.Done()
	runtime.LockOSThread()
	was, err := affinityCPUs()
	if err != nil {
		runtime.UnlockOSThread()
		ready <- 0
		return
	}
	if err := setAffinity(0, []int{cpu}); err != nil {
		runtime.UnlockOSThread()
		ready <- 0
		return
	}
	ready <- gettid()
	defer func() {
		if setAffinity(0, was) == nil {
			runtime.UnlockOSThread()
		} // else the goroutine ends locked and the runtime ends the thread
	}()
	t := time.NewTicker(p.every)
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
		p.add(SpeedSample{At: time.Now(), CPU: cpu, Rate: SpeedProbeRounds / (float64(c1-c0) / 1e3),
			CPUTime: time.Duration(c1 - c0)})
	}
}

// add keeps s: among the recent samples, folding the oldest into the sum
// when there are more than p.keep.
func (p *SpeedProbe) add(s SpeedSample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.At.Before(p.from) {
		return
	}
	if len(p.recent) >= p.keep {
		p.older.add(p.recent[0])
		// Shift rather than reslice, so the backing array does not grow.
		n := copy(p.recent, p.recent[1:])
		p.recent = p.recent[:n]
	}
	p.recent = append(p.recent, s)
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

// Stop ends the probes and sums up their samples up to to (the folded
// ones are all counted: they are older than every recent one). A nil
// probe has none.
func (p *SpeedProbe) Stop(to time.Time) SpeedSummary {
	if p == nil {
		return SpeedSummary{}
	}
	close(p.stop)
	p.wg.Wait()
	return p.summary(to)
}

// summary sums up the samples kept, the recent ones up to to.
func (p *SpeedProbe) summary(to time.Time) SpeedSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.older
	out.PerCPU = maps.Clone(p.older.PerCPU)
	for _, s := range p.recent {
		if !s.At.After(to) {
			out.add(s)
		}
	}
	return out
}

// MeanIn is the mean rate of the kept samples that ended in (from, to],
// and how many there were: a second's CPU speed for the 1-second series.
// It gives 0, 0 for a nil probe (probes off) or when no sample ended then.
func (p *SpeedProbe) MeanIn(from, to time.Time) (float64, int) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum float64
	n := 0
	for _, s := range p.recent {
		if s.At.After(from) && !s.At.After(to) {
			sum += s.Rate
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// Recent returns the recent samples in time order.
func (p *SpeedProbe) Recent() []SpeedSample {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.recent)
	slices.SortFunc(out, func(a, b SpeedSample) int { return a.At.Compare(b.At) })
	return out
}
