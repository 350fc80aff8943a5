package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
)

// internalsSampler reads the engine's counters and gauges
// (engine.InternalsReader) once a second over a step's measured part, on
// a goroutine of its own so that a slow server never delays the tick
// goroutine's seconds, and turns the reads into per-second series:
// counters as rates, gauges as values (docs/measurement.md, "Engine
// internals per second"). Reads happen at the same boundaries as the
// 1-second intervals (measureFrom + k s), so second k of a series is
// second k of the throughput chart. A read that fails is skipped, and the
// seconds around it have no point; the first failure is kept for the live
// output.
type internalsSampler struct {
	noInstrument
	reader      engine.InternalsReader
	measureFrom time.Time
	stop        chan struct{}
	done        chan struct{}
	finished    sync.Once
	out         io.Writer
	// part is the index of the step's target whose engine this reads
	// (e.heads), ri its headline role's among the step's roles (Stream).
	part, ri int

	// mu guards reads, which run appends to and a flush reads while the
	// step goes on; err is run's only, read after done.
	mu    sync.Mutex
	reads []internalsRead
	err   error
	// streamedReads counts the reads already streamed, and streamedSec
	// is each series' last second streamed (stream's, on the tick
	// goroutine).
	streamedReads int
	streamedSec   map[string]int
}

// internalsRead is one read at boundary k (measureFrom + k s), taken at at.
type internalsRead struct {
	k  int
	at time.Time
	in engine.Internals
}

// startInternals starts sampling db's internals from measureFrom on, for
// target part of the step, whose headline role is the step's role ri; nil
// when db's engine reads none. It is an instrument (instrument.go); out
// gets a line when some reads failed.
func startInternals(ctx context.Context, db engine.DB, part, ri int, measureFrom time.Time, out io.Writer) *internalsSampler {
	r, ok := db.(engine.InternalsReader)
	if !ok {
		return nil
	}
	s := &internalsSampler{reader: r, measureFrom: measureFrom, stop: make(chan struct{}), done: make(chan struct{}), out: out,
		part: part, ri: ri, streamedSec: map[string]int{}}
	go s.run(ctx)
	return s
}

func (s *internalsSampler) run(ctx context.Context) {
	defer close(s.done)
	k := 0
	for {
		at := s.measureFrom.Add(time.Duration(k) * time.Second)
		t := time.NewTimer(time.Until(at))
		select {
		case <-t.C:
		case <-s.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
		rctx, cancel := context.WithTimeout(ctx, engineStatsTimeout)
		in, err := s.reader.ReadInternals(rctx)
		cancel()
		now := time.Now()
		if err == nil {
			s.mu.Lock()
			s.reads = append(s.reads, internalsRead{k: k, at: now, in: in})
			s.mu.Unlock()
		} else if s.err == nil {
			s.err = err
		}
		// A read that took past the next boundaries skips them.
		k = max(k+1, int(now.Sub(s.measureFrom)/time.Second)+1)
	}
}

// finish gives the headline result the series, stopping the reads before
// the workers' sessions close (it comes before engineStats in the list).
func (s *internalsSampler) finish(e *stepEnd) {
	e.heads[s.part].Internals = s.series(s.out, e.test)
}

// stream hands the points read since the last flush to the step's stream,
// with the other series (ticks.flush), so that a run killed hard keeps
// them. Only the reads since then are turned into series (and the last
// one before them, the start of a counter's next rate), so a long step
// costs each flush the same.
func (s *internalsSampler) stream(st Stream) {
	s.mu.Lock()
	// Reads are only appended, never changed: the slice stays valid.
	reads := s.reads[max(0, s.streamedReads-1):]
	s.streamedReads = len(s.reads)
	s.mu.Unlock()
	var fresh []store.EngineSeries
	for _, x := range internalsSeries(reads) {
		last, ok := s.streamedSec[x.Name]
		i := 0
		for ok && i < len(x.Points) && x.Points[i].Sec <= last {
			i++
		}
		if i < len(x.Points) {
			fresh = append(fresh, store.EngineSeries{Name: x.Name, Gauge: x.Gauge, Points: x.Points[i:]})
			s.streamedSec[x.Name] = x.Points[len(x.Points)-1].Sec
		}
	}
	if len(fresh) > 0 {
		st.FlushInternals(s.ri, fresh)
	}
}

// close stops the reads however the step ended.
func (s *internalsSampler) close() { s.stopReads() }

func (s *internalsSampler) stopReads() {
	s.finished.Do(func() { close(s.stop) })
	<-s.done
}

// series stops the sampler and returns its series, sorted by name; a note
// goes to out when some read failed. Nil for a nil sampler.
func (s *internalsSampler) series(out io.Writer, test string) []store.EngineSeries {
	if s == nil {
		return nil
	}
	s.stopReads()
	if s.err != nil && out != nil {
		fmt.Fprintf(out, "%s: engine internals not read for some seconds, no points for them: %v\n", test, s.err)
	}
	return internalsSeries(s.reads)
}

// internalsSeries turns reads into series. A counter's rate over the
// seconds between two consecutive reads is its growth divided by the time
// between them, given to each of those seconds (one, unless a read was
// missed); a counter that shrank (statistics reset) gives no point. A
// gauge's value at a read is the value of the second that ends there.
func internalsSeries(reads []internalsRead) []store.EngineSeries {
	byName := map[string]*store.EngineSeries{}
	add := func(name string, gauge bool, p store.EnginePoint) {
		s := byName[name]
		if s == nil {
			s = &store.EngineSeries{Name: name, Gauge: gauge}
			byName[name] = s
		}
		s.Points = append(s.Points, p)
	}
	for i, r := range reads {
		if r.k > 0 {
			for name, v := range r.in.Gauges {
				add(name, true, store.EnginePoint{Sec: r.k - 1, Value: v})
			}
		}
		if i == 0 {
			continue
		}
		prev := reads[i-1]
		secs := r.at.Sub(prev.at).Seconds()
		if secs <= 0 {
			continue
		}
		for name, v := range r.in.Counters {
			v0, ok := prev.in.Counters[name]
			if !ok || v < v0 {
				continue
			}
			for k := prev.k; k < r.k; k++ {
				add(name, false, store.EnginePoint{Sec: k, Value: (v - v0) / secs})
			}
		}
	}
	out := make([]store.EngineSeries, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b store.EngineSeries) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
