package runner

import (
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/store"
)

// measureInterleaved measures a step on several targets that take turns of
// length slice (turns.go) through a warm-up and a measured part each as
// long as the step's, so the step lasts that many times longer.
//
// Resource use and perf counters per operation are split by turns
// (turncost.go), each engine's internals are read per second as in a
// single-target step, and a profile keeps each target's samples from its
// own turns (turnprofile.go). What an interleaved step cannot tell apart
// per target is left out of its results rather than guessed: engine
// counters per operation (read once at each end, they would need a read
// at every turn) and the client's run-queue times. Its CPU speed facts
// are the step's, shared.
func (s *stepRun) measureInterleaved(slice time.Duration) {
	for _, res := range s.results {
		res.Facts[store.FactInterleave] = slice.Seconds()
		res.Facts[store.FactInterleaveTargets] = float64(len(s.parts))
	}
	s.beginStreams()
	var profs *turnProfiles
	if s.opt.ProfileHz > 0 {
		// perf record starts before the step's clock does (startRecording).
		profs = startTurnProfiles(s.parts, s.opt.ProfileHz)
		s.use(instruments{profs})
	}
	// Each target gets the step's warm-up and measured time in turns.
	win := stepWindow(s.st, s.roles, time.Now())
	k := time.Duration(len(s.parts))
	win.measureFrom = win.start.Add(k * win.measureFrom.Sub(win.start))
	win.deadline = win.measureFrom.Add(k * s.st.Duration)
	g := newTurns(slice, win.measureFrom, len(s.parts))
	for i, rs := range s.runsOf {
		for _, rr := range rs {
			rr.turns, rr.target, rr.live, rr.label = g, i, s.parts[i].live, s.parts[i].name
		}
	}
	if profs != nil {
		profs.g = g
	}
	s.open(win)
	// The sampler gives the intervals' load (every target's, shared).
	sampler := newLoadSampler(s.parts, s.opt.DataDir)
	// Before the speed probe, whose finish takes its CPU off the Effs.
	ins := instruments{sampler, newTurnEfficiency(g, s.parts, s.opt.DataDir)}
	// Each engine's internals per second, read at the same boundaries
	// whichever target has the turn (docs/measurement.md).
	ri := 0
	for i, p := range s.parts {
		if in := startInternals(s.ctx, p.db, i, ri, win.measureFrom, s.opt.Out); in != nil {
			ins = append(ins, in)
		}
		ri += len(s.runsOf[i])
	}
	if speed := startSpeedProbe(s.opt, s.win, sampler); speed != nil {
		ins = append(ins, speed)
	}
	if mem := newCgroupMemory(s.parts, s.opt.Out); mem != nil {
		ins = append(ins, mem)
	}
	s.use(ins)
	if profs != nil {
		ins = append(ins, profs) // closed already when the step is over
	}
	start := func(clock meter.Clock, c *crew) (wait func()) {
		startSlots(s.stepCtx, s.runsOf, g, clock, s.win, s.stop, s.iop.lockThreads, c)
		turnsDone := make(chan struct{})
		go func() {
			defer close(turnsDone)
			g.run(s.stepCtx, s.stop, s.win.deadline)
		}()
		return func() { <-turnsDone }
	}
	s.run(ins, start, func(rr *roleRun, _ time.Time) time.Duration { return g.measuredTime(rr.target) })
}

// multiStream is the Stream of an interleaved step: each target's results
// go to that target's own stream (nil: not streamed), by role index.
type multiStream struct {
	streams []Stream
	// part and local map a role index of the step to its target and its
	// index among that target's roles.
	part, local []int
}

func (m *multiStream) add(s Stream, roles int) {
	for i := 0; i < roles; i++ {
		m.part = append(m.part, len(m.streams))
		m.local = append(m.local, i)
	}
	m.streams = append(m.streams, s)
}

func (m *multiStream) any() bool {
	for _, s := range m.streams {
		if s != nil {
			return true
		}
	}
	return false
}

// Begin implements Stream; each target's stream has begun already.
func (m *multiStream) Begin([]*store.Result) error { return nil }

// Flush implements Stream.
func (m *multiStream) Flush(ri int, ivs []store.Interval) {
	if s := m.streams[m.part[ri]]; s != nil {
		s.Flush(m.local[ri], ivs)
	}
}

// FlushLatency implements Stream.
func (m *multiStream) FlushLatency(ri int, l SoFar) {
	if s := m.streams[m.part[ri]]; s != nil {
		s.FlushLatency(m.local[ri], l)
	}
}

// FlushInternals implements Stream.
func (m *multiStream) FlushInternals(ri int, series []store.EngineSeries) {
	if s := m.streams[m.part[ri]]; s != nil {
		s.FlushInternals(m.local[ri], series)
	}
}
