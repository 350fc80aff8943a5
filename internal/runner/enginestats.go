package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
)

// engineStatsTimeout bounds each read of the engine's counters: a server
// that does not answer delays the step's tick by this much at most.
const engineStatsTimeout = 2 * time.Second

// engineStats reads the engine's own counters (engine.StatsReader) at the
// start of a step's measured part (its mark, from the tick goroutine) and
// at its end (an instrument), and gives their growth as facts. A read that
// fails never fails the step: the step then has FactEngineStatsUnread
// instead, and the live output says why.
type engineStats struct {
	noInstrument
	ctx    context.Context
	reader engine.StatsReader
	out    io.Writer
	start  map[string]float64
	err    error
}

// newEngineStats returns the reader of db's counters, nil when db's engine
// has none.
func newEngineStats(ctx context.Context, db engine.DB, out io.Writer) *engineStats {
	r, ok := db.(engine.StatsReader)
	if !ok {
		return nil
	}
	return &engineStats{ctx: ctx, reader: r, out: out}
}

func (s *engineStats) read() (map[string]float64, error) {
	// An interrupted step keeps the counters of what it measured.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), engineStatsTimeout)
	defer cancel()
	return s.reader.ReadStats(ctx)
}

// mark reads the counters at the start of the measured part.
func (s *engineStats) mark() { s.start, s.err = s.read() }

// finish ends the workers' sessions before the engine's counters are read,
// so that an engine that adds a session's counts at its end (PostgreSQL)
// has them all, and adds their growth to the headline result.
func (s *engineStats) finish(e *stepEnd) {
	e.closeSessions()
	s.addFacts(e.heads[0].Facts, e.test)
}

// addFacts stores the counters' growth since mark in facts, one
// store.EngineStatFact each; a counter that shrank (the statistics were
// reset meanwhile) or that only one read had is left out. Nothing when
// mark never ran (the step ended in its warm-up).
func (s *engineStats) addFacts(facts map[string]float64, test string) {
	if s.start == nil && s.err == nil {
		return
	}
	end, err := s.start, s.err
	if err == nil {
		end, err = s.read()
	}
	if err != nil {
		facts[store.FactEngineStatsUnread] = 1
		if s.out != nil {
			fmt.Fprintf(s.out, "%s: engine counters not read, no per-op figures for them: %v\n", test, err)
		}
		return
	}
	for name, v := range end {
		if v0, ok := s.start[name]; ok && v >= v0 {
			facts[store.EngineStatFact(name)] = v - v0
		}
	}
}
