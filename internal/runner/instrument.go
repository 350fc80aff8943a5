package runner

import (
	"fmt"
	"os"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/profile"
	"benchlab/internal/store"
)

// An instrument measures something about a measured step other than its
// operations: the processes' resource use, perf counters, the CPUs' speed,
// a profile, the engine's own counters. The step's loop (stepRun.run and
// tick) knows instruments only through this interface, so a new one is a
// type implementing it plus a line where the single-target or interleaved
// path (single.go, interleave.go) builds its list.
//
// Life of an instrument, all calls from one goroutine at a time:
//
//   - It starts when it is made, by its constructor, before the workers
//     start (the step's connections exist by then). What must start before
//     the step's clock does is made before stepRun.open (the profile).
//   - mark: the measured part starts (the end of the warm-up, or before the
//     workers start when the step has none). Called on the tick goroutine,
//     at most once; never when the step ends in its warm-up.
//   - sample: a second of the step, (from, to], is over; the instrument may
//     add what it saw in it to load, which becomes the Load of the
//     headline role's interval. Called on the tick goroutine once a second
//     and once more for the partial second when the workers are done,
//     warm-up included. The tick goroutine is not the workers', so the hot
//     path pays nothing, but a slow sample delays the step's 1-second
//     series: an instrument that reads something slow (a server over SQL)
//     bounds each read in time.
//   - stream: the tick goroutine streams the step's series so far
//     (Options.Stream, every FlushEvery); an instrument that keeps series
//     of its own hands over what it has added since, so that a run killed
//     hard keeps them. Never called without a stream.
//   - finish: the step is over (e.end); the instrument adds what it
//     measured to the results. Called once, in list order, after the tick
//     loop returned and before the results are collected; the workers are
//     done, their sessions still open unless e.closeSessions was called.
//   - close: releases what the instrument holds (threads, perf events,
//     files). Deferred, so it runs when the step ends however it ends,
//     after finish or without it; in the reverse order of the list.
//
// Embed noInstrument to implement only some of the calls.
type instrument interface {
	mark()
	sample(from, to time.Time, load *store.IntervalLoad)
	stream(s Stream)
	finish(e *stepEnd)
	close()
}

// stepEnd is what an instrument's finish gets: when the step ended and
// where its results go.
type stepEnd struct {
	// test is the step's name, for messages.
	test string
	// measureFrom is when the measured part started (the end of the
	// warm-up); end is when the step was told to stop, no later than its
	// deadline.
	measureFrom, end time.Time
	// heads are each target's headline result (one for a single-target
	// step); figures that cannot be told apart per target are added to
	// heads[0] by a single-target step's instruments only.
	heads []*store.Result
	// closeSessions ends the workers' sessions (idempotent), for counters
	// an engine adds up when a session ends.
	closeSessions func()
}

// noInstrument implements every call of instrument as doing nothing.
type noInstrument struct{}

func (noInstrument) mark()                                        {}
func (noInstrument) sample(_, _ time.Time, _ *store.IntervalLoad) {}
func (noInstrument) stream(Stream)                                {}
func (noInstrument) finish(*stepEnd)                              {}
func (noInstrument) close()                                       {}

// instruments is a step's list, called in order (close in reverse).
type instruments []instrument

func (ins instruments) mark() {
	for _, i := range ins {
		i.mark()
	}
}

func (ins instruments) sample(from, to time.Time, load *store.IntervalLoad) {
	for _, i := range ins {
		i.sample(from, to, load)
	}
}

func (ins instruments) stream(s Stream) {
	for _, i := range ins {
		i.stream(s)
	}
}

func (ins instruments) finish(e *stepEnd) {
	for _, i := range ins {
		i.finish(e)
	}
}

// loadSampler samples the resource use of the step's processes (the
// targets' server process trees and benchlab's) once a second, for the
// intervals' Load. It must come first in the list: its sample sets the
// whole load, which later instruments add to.
type loadSampler struct {
	noInstrument
	s *meter.StepSampler
}

// newLoadSampler samples the processes of every part's server, and
// benchlab's own.
func newLoadSampler(parts []stepPart, dataDir string) *loadSampler {
	var roots []int
	for _, p := range parts {
		if srv, ok := p.db.(engine.Server); ok {
			roots = append(roots, srv.PIDs()...)
		}
	}
	s := meter.NewStepSampler(roots, dataDir)
	s.SetEngineMemory(engine.InProcessMemoryTotal)
	return &loadSampler{s: s}
}

func (l *loadSampler) mark() { l.s.Mark() }

func (l *loadSampler) sample(_, _ time.Time, load *store.IntervalLoad) { *load = l.s.Sample() }

// effSampler is a single-target step's loadSampler, which also gives the
// headline result its resource use per operation (Eff) and memory facts.
type effSampler struct{ *loadSampler }

func (e effSampler) finish(end *stepEnd) {
	head := end.heads[0]
	head.Eff = e.s.Efficiency()
	if m := e.s.Memory(); m.OK && head.Eff != nil {
		addMemoryFacts(head, m)
	}
}

// perfCounters are hardware and software perf counters per operation
// (instructions, cycles, cache and branch misses where the machine counts
// them) and the threads' scheduler times, on the sampler's processes. Made
// once the connections exist, so every server thread that serves them
// does; counted from the sampler's mark.
type perfCounters struct {
	noInstrument
	s *meter.StepSampler
}

func startPerfCounters(l *loadSampler) perfCounters {
	l.s.CountEvents()
	return perfCounters{s: l.s}
}

func (p perfCounters) finish(e *stepEnd) {
	for k, v := range p.s.CounterFacts() {
		e.heads[0].Facts[k] = v
	}
}

func (p perfCounters) close() { p.s.CloseCounters() }

// speedProbe is the CPUs' speed during the step (meter.SpeedProbe), so
// that a run on CPUs the host slowed can be told from a slow database: a
// mean per second in the intervals' Load, and the measured part's on each
// target's headline result.
type speedProbe struct {
	noInstrument
	p       *meter.SpeedProbe
	stopped bool
}

// startSpeedProbe starts the probes (Options.SpeedProbeEvery) and has the
// sampler leave their threads out of benchlab's figures; nil when probes
// are off.
func startSpeedProbe(opt Options, win window, l *loadSampler) *speedProbe {
	every := opt.SpeedProbeEvery
	if every < 0 {
		return nil
	}
	if every == 0 && win.deadline.Sub(win.measureFrom) < forever/2 {
		every = meter.SpeedProbeEveryFor(win.deadline.Sub(win.measureFrom))
	}
	p := meter.StartSpeedProbe(nil, win.measureFrom, every)
	l.s.IgnoreThreads(p.TIDs())
	return &speedProbe{p: p}
}

func (s *speedProbe) sample(from, to time.Time, load *store.IntervalLoad) {
	load.CPUSpeed, _ = s.p.MeanIn(from, to)
}

func (s *speedProbe) stop(to time.Time) meter.SpeedSummary {
	if s.stopped {
		return meter.SpeedSummary{}
	}
	s.stopped = true
	return s.p.Stop(to)
}

func (s *speedProbe) finish(e *stepEnd) {
	sp := s.stop(e.end)
	if sp.N == 0 {
		return
	}
	for _, head := range e.heads {
		head.Facts[store.FactCPUSpeed] = sp.Mean
		head.Facts[store.FactCPUSpeedSamples] = float64(sp.N)
		head.Facts[store.FactCPUSpeedCPU] = sp.CPU.Seconds()
	}
	// The probes are measurement, not the workload's client: their CPU
	// leaves benchlab's (about 0.4% of each CPU; at 30,000 queries a second
	// it would add 0.3 us to a query's client CPU). An interleaved target's
	// Eff counts its turns only, which held their share of the probes' CPU.
	window := e.end.Sub(e.measureFrom).Seconds()
	for _, head := range e.heads {
		eff := head.Eff
		if eff == nil || eff.ClientCPU < 0 {
			continue
		}
		probes := sp.CPU.Seconds()
		if len(e.heads) > 1 && window > 0 {
			probes *= min(1, eff.Seconds/window)
		}
		eff.ClientCPU = max(0, eff.ClientCPU-probes)
	}
}

func (s *speedProbe) close() { s.stop(time.Time{}) }

// stepRecording samples the call stacks of the server's process tree (of
// benchlab for an in-process engine) with perf record (run --profile) and
// keeps those of the measured part in the headline result's Profile.
type stepRecording struct {
	noInstrument
	rec      *profile.Recording
	startErr error
	hz       int
	// off records where the threads waited off CPU (profile.StartOffCPU);
	// nil for a profile by process ID.
	off *profile.Recording
}

// startRecording starts perf record. It is made before the step's clock
// starts (stepRun.open), so that its own start-up (reading every process's
// maps) falls outside the measured part. A server benchlab started in a
// cgroup of its own is sampled through perf's cgroup filter, so that the
// processes it forks during the step (PostgreSQL's backend per
// connection) are seen from their start; otherwise its process tree, or
// benchlab itself, by process ID (docs/measurement.md).
func startRecording(db engine.DB, hz int) *stepRecording {
	if c, ok := db.(cgrouped); ok {
		if cgs, err := c.PerfCgroups(); err == nil {
			rec, err := profile.StartCgroups(cgs, hz)
			if err == nil {
				// Without the off-CPU recording the profile stands alone.
				off, _ := profile.StartOffCPU(cgs)
				return &stepRecording{rec: rec, hz: hz, off: off}
			}
		}
	}
	rec, err := profile.Start(profilePIDs(db), hz)
	return &stepRecording{rec: rec, startErr: err, hz: hz}
}

func (r *stepRecording) finish(e *stepEnd) {
	e.heads[0].Profile = r.profile(profile.Span(profile.At(e.measureFrom), profile.At(e.end)))
}

// profile stops the recordings and keeps what they saw in ws: the
// measured part, or one target's turns in it.
func (r *stepRecording) profile(ws profile.Windows) *store.Profile {
	p := stepProfile(r.rec, r.startErr, r.hz, ws)
	if r.off != nil {
		if off, err := r.off.StopOffCPU(ws); err == nil && len(off) > 0 {
			p.OffCPU = off.Text()
		}
	}
	return p
}

func (r *stepRecording) close() {
	r.rec.Close()
	r.off.Close()
}

// profilePIDs are the processes a step's profile samples when perf cannot
// filter by cgroup: the server's process tree as it is when the recording
// starts, with the children perf sees them start, or benchlab itself for
// an in-process engine.
func profilePIDs(db engine.DB) []int {
	if srv, ok := db.(engine.Server); ok {
		if roots := srv.PIDs(); len(roots) > 0 {
			return meter.ProcessTree(roots)
		}
	}
	return []int{os.Getpid()}
}

// stepProfile stops the recording and keeps the samples taken in ws, or
// says why there are none.
func stepProfile(rec *profile.Recording, startErr error, hz int, ws profile.Windows) *store.Profile {
	p := &store.Profile{Hz: hz}
	if rec == nil {
		p.Note = fmt.Sprint(startErr)
		return p
	}
	stacks, err := rec.Stop(ws)
	switch {
	case err != nil:
		p.Note = err.Error()
	case len(stacks) == 0:
		p.Note = "profile: no samples in the measured part"
	default:
		p.Folded, p.Samples = stacks.Text(), stacks.Samples()
	}
	return p
}
