package meter

import (
	"os"
	"runtime/metrics"
	"syscall"
	"time"
)

// clientSample is benchlab's own use of the machine at one moment.
type clientSample struct {
	selfProcess
	rss int64
	// goMem is what the Go runtime holds (mapped, not released to the OS);
	// engine what in-process engines hold from their own allocators
	// (StepSampler.EngineMemory), both read with rss.
	goMem, engine int64
}

// goMemory reads the Go runtime's mapped and not released memory: heap,
// stacks and metadata (runtime/metrics; no stop of the world).
func goMemory() int64 {
	s := [2]metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - min(s[1].Value.Uint64(), s[0].Value.Uint64()))
}

func (s *StepSampler) sampleClient() clientSample {
	c := readClient()
	c.goMem = goMemory()
	if s.EngineMemory != nil {
		c.engine = s.EngineMemory()
	}
	return c
}

// selfProcess is benchlab's own process counters: CPU time and context
// switches of every thread, dead ones included (getrusage), and its IO
// (/proc/self/io).
type selfProcess struct {
	cpu      time.Duration
	cs       int64
	io       PidIO
	ok, ioOK bool
}

func readSelfProcess() selfProcess {
	var c selfProcess
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		c.cs = ru.Nvcsw + ru.Nivcsw
		c.ok = true
	}
	if b, err := os.ReadFile("/proc/self/io"); err == nil {
		c.io, err = ParsePidIO(b)
		c.ioOK = err == nil
	}
	return c
}

func readClient() clientSample {
	c := clientSample{selfProcess: readSelfProcess()}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if st, err := ParsePidStatus(b); err == nil {
			c.rss = st.RSS
		}
	}
	return c
}

// totals are the counters a StepSampler accumulates from its first sample.
type totals struct {
	serverTicks int64
	serverIO    PidIO
	serverCS    int64
	clientCPU   time.Duration
	clientIO    PidIO
	clientCS    int64
	machine     CPUStat
	// bad* record a counter that could not be read in some sample since the
	// last Mark; its total is then not readable.
	badServerCPU, badServerIO, badServerCS, badClient, badClientIO, badMachine bool
}

// StepSampler measures what one step costs the machine, from /proc and
// getrusage, without cgo: the CPU, IO, context switches and memory of the
// server's process tree (roots and all descendants), of benchlab itself, of
// the data dir's block device, and the machine's steal and busy time. The
// runner calls Sample once a second from its tick loop, never from a worker;
// everything stays in memory until the step ends.
//
// Precision: server CPU comes in 10 ms ticks (ClockTick); client CPU from
// getrusage is finer. A server process that leaves the tree without being
// waited for by a tree member (re-parented to init) takes the CPU it used
// since the previous sample with it; threads that exit take their context
// switches with them.
type StepSampler struct {
	procDir string
	roots   []int
	dev     blockDevice
	devOK   bool

	at   time.Time
	tree treeSample
	// ioTree is the latest full sample (IO, context switches, memory),
	// taken at ioAt; light samples in between read CPU only. light is
	// false when the kernel cannot list a process's children, and every
	// sample is then full.
	ioTree treeSample
	ioAt   time.Time
	light  bool

	client clientSample
	cpu    CPUStat
	cpuOK  bool
	sum    totals

	marked     bool
	markAt     time.Time
	markSum    totals
	markDisk   DiskCounters
	markDiskOK bool
	peakServer int64
	peakClient int64
	mem        Memory

	// counters count perf events on the server's and benchlab's threads
	// (CountEvents); their reads at Mark start the measured part.
	counters stepCounters

	// EngineMemory, when set before the first Sample, reads the bytes that
	// in-process engines hold from their own allocators, which benchlab's
	// resident set includes (engine.InProcessMemoryTotal).
	EngineMemory func() int64
}

// Memory is benchlab's resident memory over the measured part of a step,
// split: the peaks, in bytes, of what the Go runtime held, of what
// in-process engines held from their own allocators (SQLite's page caches),
// and of benchlab's own memory, the resident set less the engines' at the
// same sample. OK is false when no sample read the resident set.
type Memory struct {
	GoPeak, EnginePeak, OwnPeak int64
	OK                          bool
}

// peak raises m's peaks by one sample.
func (m *Memory) peak(c clientSample) {
	if c.rss <= 0 {
		return
	}
	m.OK = true
	m.GoPeak = max(m.GoPeak, c.goMem)
	m.EnginePeak = max(m.EnginePeak, c.engine)
	m.OwnPeak = max(m.OwnPeak, c.rss-min(c.engine, c.rss))
}

// Memory returns the memory split from Mark to the latest sample.
func (s *StepSampler) Memory() Memory { return s.mem }

// NewStepSampler takes the first sample. roots are the server's root PIDs
// (none for an in-process engine, whose server figures are then not
// measured); dataDir locates the block device ("" for none).
func NewStepSampler(roots []int, dataDir string) *StepSampler {
	s := &StepSampler{procDir: "/proc", roots: roots}
	if dataDir != "" {
		if d, err := findBlockDevice(dataDir); err == nil {
			s.dev, s.devOK = d, true
		}
	}
	s.at = time.Now()
	s.tree = readTree(s.procDir, roots)
	s.ioTree, s.ioAt, s.light = s.tree, s.at, true
	s.client = s.sampleClient()
	s.cpu, s.cpuOK = readCPUStat()
	return s
}

// SetEngineMemory sets EngineMemory and reads the first sample's memory
// again with it.
func (s *StepSampler) SetEngineMemory(f func() int64) {
	s.EngineMemory = f
	s.client = s.sampleClient()
}

func readCPUStat() (CPUStat, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUStat{}, false
	}
	c, err := ParseCPUStat(b)
	return c, err == nil
}

// fullEvery is how often a sample reads the server's IO, context switches and
// memory and lists /proc for new processes; the samples in between read the
// known processes' CPU only.
const fullEvery = 10 * time.Second

// Sample reads the counters and returns the CPU use since the previous
// sample (or since NewStepSampler): every second the server tree's CPU, and
// every fullEvery (and at Mark and Efficiency) the rest.
func (s *StepSampler) Sample() IntervalLoad {
	now := time.Now()
	var tree treeSample
	full := !s.light || now.Sub(s.ioAt) >= fullEvery-50*time.Millisecond
	if !full {
		var ok bool
		if tree, ok = readKnown(s.procDir, s.roots, s.tree); !ok {
			s.light, full = false, true
		}
	}
	if full {
		tree = readTree(s.procDir, s.roots)
	}
	client := s.sampleClient()
	cpu, cpuOK := readCPUStat()

	load := IntervalLoad{ServerCPU: NotMeasured, ClientCPU: NotReadable,
		StealPct: NotReadable, ForeignPct: NotReadable}
	t := &s.sum
	if len(s.roots) > 0 {
		ticks, ok := treeDelta(s.tree, tree, true, func(e procEntry) (int64, bool) { return e.cpu, true })
		if tree.roots == 0 || !ok {
			t.badServerCPU = true
			load.ServerCPU = NotReadable
		} else {
			t.serverTicks += ticks
			load.ServerCPU = float64(ticks) * ClockTick.Seconds()
		}
		if tree.full {
			s.addIO(tree, now)
		}
	}
	if client.ok && s.client.ok {
		d := client.cpu - s.client.cpu
		t.clientCPU += d
		t.clientCS += client.cs - s.client.cs
		load.ClientCPU = d.Seconds()
	} else {
		t.badClient = true
	}
	if client.ioOK && s.client.ioOK {
		t.clientIO = t.clientIO.Add(client.io.Sub(s.client.io))
	} else {
		t.badClientIO = true
	}
	s.peakClient = max(s.peakClient, client.rss)
	s.mem.peak(client)
	if cpuOK && s.cpuOK {
		d := CPUStat{Total: cpu.Total - s.cpu.Total, Busy: cpu.Busy - s.cpu.Busy, Steal: cpu.Steal - s.cpu.Steal}
		t.machine.Total += d.Total
		t.machine.Busy += d.Busy
		t.machine.Steal += d.Steal
		if d.Total > 0 {
			all := float64(d.Total) * ClockTick.Seconds()
			load.StealPct = 100 * float64(d.Steal) / float64(d.Total)
			if load.ClientCPU >= 0 && load.ServerCPU != NotReadable {
				foreign := float64(d.Busy)*ClockTick.Seconds() - load.ClientCPU - max(load.ServerCPU, 0)
				load.ForeignPct = 100 * max(foreign, 0) / all
			}
		}
	} else {
		t.badMachine = true
	}
	s.at, s.tree, s.client, s.cpu, s.cpuOK = now, tree, client, cpu, cpuOK
	return load
}

// addIO adds the server tree's IO and context switches since the previous
// full sample to the totals, from the full sample tree taken at now.
func (s *StepSampler) addIO(tree treeSample, now time.Time) {
	t := &s.sum
	var io PidIO
	okIO := true
	for _, f := range []struct {
		dst *int64
		get func(PidIO) int64
	}{
		{&io.ReadBytes, func(x PidIO) int64 { return x.ReadBytes }},
		{&io.WriteBytes, func(x PidIO) int64 { return x.WriteBytes }},
		{&io.SysCR, func(x PidIO) int64 { return x.SysCR }},
		{&io.SysCW, func(x PidIO) int64 { return x.SysCW }},
	} {
		d, ok := treeDelta(s.ioTree, tree, true, func(e procEntry) (int64, bool) { return f.get(e.io), e.ioOK })
		*f.dst, okIO = d, okIO && ok
	}
	if okIO && tree.roots > 0 {
		t.serverIO = t.serverIO.Add(io)
	} else {
		t.badServerIO = true
	}
	// A waited-for child's switches do not show in its parent's status.
	cs, ok := treeDelta(s.ioTree, tree, false, func(e procEntry) (int64, bool) { return e.cs, e.csOK })
	if ok && tree.roots > 0 {
		t.serverCS += cs
	} else {
		t.badServerCS = true
	}
	s.peakServer = max(s.peakServer, tree.rss())
	s.ioTree, s.ioAt = tree, now
}

// refreshIO takes a full sample of the server tree for its IO, context
// switches and memory when the latest sample was a light one.
func (s *StepSampler) refreshIO() {
	if len(s.roots) == 0 || s.tree.full {
		return
	}
	now := time.Now()
	s.addIO(readTree(s.procDir, s.roots), now)
}

// Mark makes the latest sample the start of the measured part (the end of
// the warm-up): Efficiency counts from here, and peaks restart.
func (s *StepSampler) Mark() {
	s.refreshIO()
	s.sum.badServerCPU, s.sum.badServerIO, s.sum.badServerCS = false, false, false
	s.sum.badClient, s.sum.badClientIO, s.sum.badMachine = false, false, false
	s.marked, s.markAt, s.markSum = true, s.at, s.sum
	if s.devOK {
		s.markDisk, s.markDiskOK = s.dev.read()
	}
	s.peakServer, s.peakClient = s.ioTree.rss(), s.client.rss
	s.mem = Memory{}
	s.mem.peak(s.client)
	s.counters.mark()
	s.markSched()
}

// Efficiency returns the totals from Mark to the latest sample; nil when
// Mark was never called (a step cut short during its warm-up).
func (s *StepSampler) Efficiency() *Efficiency {
	if !s.marked {
		return nil
	}
	s.refreshIO()
	t, m := s.sum, s.markSum
	e := &Efficiency{Seconds: s.at.Sub(s.markAt).Seconds()}
	if len(s.roots) == 0 {
		e.ServerCPU, e.ServerCS, e.ServerPeakRSS = NotMeasured, NotMeasured, NotMeasured
		e.ServerReadBytes, e.ServerWriteBytes = NotMeasured, NotMeasured
		e.ServerReadCalls, e.ServerWriteCalls = NotMeasured, NotMeasured
	} else {
		e.ServerCPU = pick(!t.badServerCPU, float64(t.serverTicks-m.serverTicks)*ClockTick.Seconds())
		io := t.serverIO.Sub(m.serverIO)
		e.ServerReadBytes, e.ServerWriteBytes = pickInt(!t.badServerIO, io.ReadBytes), pickInt(!t.badServerIO, io.WriteBytes)
		e.ServerReadCalls, e.ServerWriteCalls = pickInt(!t.badServerIO, io.SysCR), pickInt(!t.badServerIO, io.SysCW)
		e.ServerCS = pickInt(!t.badServerCS, t.serverCS-m.serverCS)
		e.ServerPeakRSS = pickInt(!t.badServerCPU, s.peakServer)
	}
	e.ClientCPU = pick(!t.badClient, (t.clientCPU - m.clientCPU).Seconds())
	e.ClientCS = pickInt(!t.badClient, t.clientCS-m.clientCS)
	e.ClientPeakRSS = pickInt(s.peakClient > 0, s.peakClient)
	io := t.clientIO.Sub(m.clientIO)
	e.ClientReadBytes, e.ClientWriteBytes = pickInt(!t.badClientIO, io.ReadBytes), pickInt(!t.badClientIO, io.WriteBytes)
	e.ClientReadCalls, e.ClientWriteCalls = pickInt(!t.badClientIO, io.SysCR), pickInt(!t.badClientIO, io.SysCW)
	e.DevReads, e.DevWrites, e.DevReadBytes, e.DevWriteBytes = NotReadable, NotReadable, NotReadable, NotReadable
	if s.devOK && s.markDiskOK {
		if now, ok := s.dev.read(); ok {
			d := now.Sub(s.markDisk)
			e.Device = s.dev.name
			e.DevReads, e.DevWrites, e.DevReadBytes, e.DevWriteBytes = d.Reads, d.Writes, d.ReadBytes, d.WriteBytes
		}
	}
	tick := ClockTick.Seconds()
	mc := CPUStat{Total: t.machine.Total - m.machine.Total, Busy: t.machine.Busy - m.machine.Busy, Steal: t.machine.Steal - m.machine.Steal}
	e.MachineCPU = pick(!t.badMachine, float64(mc.Total)*tick)
	e.MachineBusy = pick(!t.badMachine, float64(mc.Busy)*tick)
	e.MachineSteal = pick(!t.badMachine, float64(mc.Steal)*tick)
	return e
}

func pick(ok bool, v float64) float64 {
	if !ok {
		return NotReadable
	}
	return v
}

func pickInt(ok bool, v int64) int64 {
	if !ok {
		return NotReadable
	}
	return v
}
