package runner

import (
	"maps"
	"os"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/store"
)

// turnEfficiency gives each target of an interleaved step its resource use
// per operation (Eff), which one sampler of benchlab's process could not
// split between the targets. The turns are serialised: during target i's
// turn only its workers run, so what benchlab's process counts between the
// turn's two boundaries (CPU, context switches, IO: an in-process engine's
// work) is target i's (turns.countCosts reads them there). A server
// target's own figures come from a sampler of its process tree alone, over
// the whole measured part (docs/measurement.md, "Cost per operation").
//
// Perf event counters go the same way: benchlab's threads are counted at
// every turn boundary and each target gets its turns' counts (the client
// side), and a server target's own threads are counted over the measured
// part (the server side). The client's run-queue times are not split.
type turnEfficiency struct {
	noInstrument
	g *turns
	// servers[i] samples target i's server processes; nil for an
	// in-process engine.
	servers []*meter.StepSampler
	// client counts benchlab's threads' perf events.
	client *meter.Counters
}

// newTurnEfficiency has g count benchlab's counters per turn and starts a
// sampler for each server target's processes. Made once the workers'
// connections exist, so the server threads that serve them are counted.
func newTurnEfficiency(g *turns, parts []stepPart, dataDir string) *turnEfficiency {
	t := &turnEfficiency{g: g, servers: make([]*meter.StepSampler, len(parts)),
		client: meter.OpenCounters(meter.ThreadsOf("/proc", []int{os.Getpid()}))}
	g.countCosts(func() meter.SelfCounters { return meter.ReadSelfCounters().WithPerf(t.client) })
	for i, p := range parts {
		if srv, ok := p.db.(engine.Server); ok && len(srv.PIDs()) > 0 {
			t.servers[i] = meter.NewStepSampler(srv.PIDs(), dataDir)
			t.servers[i].CountServerEvents()
		}
	}
	return t
}

func (t *turnEfficiency) mark() {
	for _, s := range t.servers {
		if s != nil {
			s.Mark()
		}
	}
}

func (t *turnEfficiency) sample(_, _ time.Time, _ *store.IntervalLoad) {
	for _, s := range t.servers {
		if s != nil {
			s.Sample()
		}
	}
}

// finish gives every target's headline result its Eff, and the fact that
// says how it was attributed. It runs after the turns are over (the
// turns' goroutine is done before the instruments finish).
func (t *turnEfficiency) finish(e *stepEnd) {
	for i, head := range e.heads {
		var server *meter.Efficiency
		if s := t.servers[i]; s != nil {
			if server = s.Efficiency(); server == nil {
				continue // the step ended in its warm-up
			}
			maps.Copy(head.Facts, s.CounterFacts())
		}
		if head.Eff = t.g.costs[i].Efficiency(server); head.Eff != nil {
			head.Facts[store.FactEffByTurns] = 1
			maps.Copy(head.Facts, t.g.costs[i].CounterFacts(t.client.Unsupported))
		}
	}
}

func (t *turnEfficiency) close() {
	t.client.Close()
	for _, s := range t.servers {
		if s != nil {
			s.CloseCounters()
		}
	}
}
