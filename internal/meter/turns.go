package meter

import "math"

// SelfCounters are benchlab's own process counters and the machine's CPU
// times at one moment, read at the boundaries of an interleaved step's
// turns (TurnTotals): only one target's workers run during a turn, so what
// benchlab's process counted between two boundaries is that target's.
type SelfCounters struct {
	selfProcess
	machine   CPUStat // /proc/stat
	machineOK bool
	// perf are benchlab's perf event counts (WithPerf); nil when not
	// counted.
	perf CounterValues
}

// WithPerf adds the counts of ctr (benchlab's own threads, OpenCounters)
// to c: a read of every counted thread and event, some microseconds each.
func (c SelfCounters) WithPerf(ctr *Counters) SelfCounters {
	c.perf = ctr.Read()
	return c
}

// ReadSelfCounters reads benchlab's CPU time and context switches
// (getrusage), its IO (/proc/self/io) and the machine's CPU times
// (/proc/stat): a system call and two small files, some tens of
// microseconds.
func ReadSelfCounters() SelfCounters {
	c := SelfCounters{selfProcess: readSelfProcess()}
	c.machine, c.machineOK = readCPUStat()
	return c
}

// TurnTotals adds up what benchlab's process and the machine counted in
// one target's turns of an interleaved step, from the end of the warm-up
// on. Counts are kept as float64 because a turn that straddles the end of
// the warm-up gives only its measured share.
type TurnTotals struct {
	// Seconds is the measured time of the turns added.
	Seconds float64
	cpu     float64 // seconds
	cs      float64
	io      [4]float64 // read bytes, write bytes, read calls, write calls
	machine [3]float64 // total, busy, steal, in clock ticks
	perf    CounterValues
	turns   int
	// bad* record a turn whose counter could not be read.
	badClient, badIO, badMachine bool
}

// Add adds one turn: the counters read as it began and as it ended, of
// which share (0 to 1) fell in the measured part, seconds long.
func (t *TurnTotals) Add(before, after SelfCounters, share, seconds float64) {
	if share <= 0 || seconds <= 0 {
		return
	}
	t.turns++
	t.Seconds += seconds
	if before.ok && after.ok {
		t.cpu += share * (after.cpu - before.cpu).Seconds()
		t.cs += share * float64(after.cs-before.cs)
	} else {
		t.badClient = true
	}
	if before.ioOK && after.ioOK {
		d := after.io.Sub(before.io)
		for i, v := range []int64{d.ReadBytes, d.WriteBytes, d.SysCR, d.SysCW} {
			t.io[i] += share * float64(v)
		}
	} else {
		t.badIO = true
	}
	if before.perf != nil && after.perf != nil {
		if t.perf == nil {
			t.perf = CounterValues{}
		}
		for k, v := range after.perf.Sub(before.perf) {
			t.perf[k] += share * v
		}
	}
	if before.machineOK && after.machineOK {
		b, a := before.machine, after.machine
		for i, v := range []int64{a.Total - b.Total, a.Busy - b.Busy, a.Steal - b.Steal} {
			t.machine[i] += share * float64(v)
		}
	} else {
		t.badMachine = true
	}
}

// Efficiency is one interleaved target's resource use over its measured
// turns: benchlab's CPU, context switches and IO and the machine's CPU
// times in those turns, and, for a server target, server (the server's
// own process tree over the whole measured part, its background work in
// the other targets' turns included; nil for an in-process engine).
// Seconds is the turns' measured time, so that Efficiency.PerOp divides
// by the target's own operations. What the turns cannot tell apart is
// NotMeasured: benchlab's peak resident set (one process holds every
// target), the data dir's block device (the kernel writes pages back
// whenever it likes) and, beside a server, the other processes' CPU
// (MachineBusy: the servers' background work runs in any turn). Nil when
// no measured turn was added.
func (t *TurnTotals) Efficiency(server *Efficiency) *Efficiency {
	if t.turns == 0 || t.Seconds <= 0 {
		return nil
	}
	e := &Efficiency{Seconds: t.Seconds,
		ServerCPU: NotMeasured, ServerCS: NotMeasured, ServerPeakRSS: NotMeasured,
		ServerReadBytes: NotMeasured, ServerWriteBytes: NotMeasured, ServerReadCalls: NotMeasured, ServerWriteCalls: NotMeasured,
		ClientPeakRSS: NotMeasured,
		DevReads:      NotMeasured, DevWrites: NotMeasured, DevReadBytes: NotMeasured, DevWriteBytes: NotMeasured,
	}
	if server != nil {
		e.ServerCPU, e.ServerCS, e.ServerPeakRSS = server.ServerCPU, server.ServerCS, server.ServerPeakRSS
		e.ServerReadBytes, e.ServerWriteBytes = server.ServerReadBytes, server.ServerWriteBytes
		e.ServerReadCalls, e.ServerWriteCalls = server.ServerReadCalls, server.ServerWriteCalls
	}
	e.ClientCPU = pick(!t.badClient, t.cpu)
	e.ClientCS = pickInt(!t.badClient, round(t.cs))
	e.ClientReadBytes, e.ClientWriteBytes = pickInt(!t.badIO, round(t.io[0])), pickInt(!t.badIO, round(t.io[1]))
	e.ClientReadCalls, e.ClientWriteCalls = pickInt(!t.badIO, round(t.io[2])), pickInt(!t.badIO, round(t.io[3]))
	tick := ClockTick.Seconds()
	e.MachineCPU = pick(!t.badMachine, t.machine[0]*tick)
	e.MachineBusy = pick(!t.badMachine, t.machine[1]*tick)
	e.MachineSteal = pick(!t.badMachine, t.machine[2]*tick)
	if server != nil && e.MachineBusy >= 0 {
		e.MachineBusy = NotMeasured
	}
	return e
}

// CounterFacts are benchlab's perf event counts in the turns added, as
// the client side's facts (CounterFact), with a fact for each event that
// could not be counted (unsupported: Counters.Unsupported). Nil when
// nothing was counted.
func (t *TurnTotals) CounterFacts(unsupported map[string]string) map[string]float64 {
	if t.turns == 0 || t.perf == nil {
		return nil
	}
	out := map[string]float64{}
	for name, v := range t.perf {
		out[CounterFact("client", name)] = v
	}
	for name, why := range unsupported {
		out[CounterUnsupportedFact("client", name)] = unsupportedCode(why)
	}
	return out
}

func round(v float64) int64 { return int64(math.Round(v)) }
