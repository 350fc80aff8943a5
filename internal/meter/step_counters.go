package meter

import (
	"os"
	"strings"
)

// stepCounters are a step's perf event counters: the server's threads and
// benchlab's own, with their reads at the start of the measured part.
type stepCounters struct {
	server, client         *Counters
	serverMark, clientMark CounterValues
	marked                 bool
	// schedServer and schedClient are the threads' scheduler times at
	// Mark (read whether or not perf counters could be opened).
	schedServer, schedClient schedSnapshot
	schedMarked              bool
	// schedIgnore are benchlab threads left out of the client's figures
	// (IgnoreThreads).
	schedIgnore []int
	// serverOnly: the client's threads are counted elsewhere (per turn
	// of an interleaved step), so this step counts the server's alone.
	serverOnly bool
}

// IgnoreThreads leaves benchlab's threads tids (the CPU speed probes) out
// of the client's run-queue figures: they measure the machine, and pinned
// to one CPU each they wait for whatever runs there.
func (s *StepSampler) IgnoreThreads(tids []int) {
	s.counters.schedIgnore = append(s.counters.schedIgnore, tids...)
}

// CountEvents opens perf event counters (CounterEvents) on every thread of
// the server's process tree as last sampled and on every thread of
// benchlab's process (the client; an in-process engine runs there too).
// Call it after the step's connections are made and before Mark; the
// counts from Mark to CounterFacts go into the results.
func (s *StepSampler) CountEvents() {
	if len(s.roots) > 0 {
		s.counters.server = OpenCounters(ThreadsOf(s.procDir, s.treePIDs()))
	}
	s.counters.client = OpenCounters(ThreadsOf(s.procDir, []int{os.Getpid()}))
	if s.marked {
		s.counters.mark()
	}
}

// CountServerEvents is CountEvents for the server's process tree alone:
// an interleaved step counts benchlab's threads per turn instead
// (TurnTotals.CounterFacts), and the client's facts (perf counts and
// run-queue times) are left out of CounterFacts.
func (s *StepSampler) CountServerEvents() {
	s.counters.serverOnly = true
	if len(s.roots) > 0 {
		s.counters.server = OpenCounters(ThreadsOf(s.procDir, s.treePIDs()))
	}
	if s.marked {
		s.counters.mark()
	}
}

// markSched reads the scheduler times of the server's and benchlab's
// threads at the start of the measured part.
func (s *StepSampler) markSched() {
	c := &s.counters
	if len(s.roots) > 0 {
		c.schedServer = readSched(s.procDir, s.treePIDs())
	}
	c.schedClient = readSched(s.procDir, []int{os.Getpid()}).without(c.schedIgnore)
	c.schedMarked = true
}

// treePIDs are the PIDs of the server's process tree as last sampled.
func (s *StepSampler) treePIDs() []int {
	var pids []int
	for k := range s.tree.procs {
		pids = append(pids, k.pid)
	}
	return pids
}

// schedFacts are the run-queue facts from Mark to now: per side, the
// seconds its threads ran and waited runnable for a CPU
// (SchedRunFact, SchedWaitFact). A side whose threads'
// schedstat could not be read has none.
func (s *StepSampler) schedFacts(out map[string]float64) {
	c := &s.counters
	if !c.schedMarked {
		return
	}
	add := func(side string, mark, now schedSnapshot) {
		if !mark.ok || !now.ok {
			return
		}
		t := now.since(mark)
		out[SchedRunFact(side)] = float64(t.RunNs) / 1e9
		out[SchedWaitFact(side)] = float64(t.WaitNs) / 1e9
	}
	if len(s.roots) > 0 {
		add("server", c.schedServer, readSched(s.procDir, s.treePIDs()))
	}
	if !c.serverOnly {
		add("client", c.schedClient, readSched(s.procDir, []int{os.Getpid()}).without(c.schedIgnore))
	}
}

func (c *stepCounters) mark() {
	if c.client == nil && c.server == nil {
		return
	}
	if c.server != nil {
		c.serverMark = c.server.Read()
	}
	if c.client != nil {
		c.clientMark = c.client.Read()
	}
	c.marked = true
}

// CounterFacts returns the perf event counts from Mark to now as facts
// (CounterFact: perf_server_instructions, perf_client_page_faults,
// ...) and, for each event that could not be counted, a fact saying why
// (CounterUnsupportedFact), with the threads' run-queue times
// (schedFacts). Nil when the step never reached its measured part; no
// perf facts when CountEvents was not called.
func (s *StepSampler) CounterFacts() map[string]float64 {
	c := &s.counters
	out := map[string]float64{}
	s.schedFacts(out)
	if !c.marked {
		if len(out) == 0 {
			return nil
		}
		return out
	}
	add := func(side string, ctr *Counters, mark CounterValues) {
		if ctr == nil {
			return
		}
		for name, v := range ctr.Read().Sub(mark) {
			out[CounterFact(side, name)] = v
		}
		for name, why := range ctr.Unsupported {
			out[CounterUnsupportedFact(side, name)] = unsupportedCode(why)
		}
	}
	add("server", c.server, c.serverMark)
	add("client", c.client, c.clientMark)
	return out
}

// unsupportedCode is the fact value of an event not counted for why
// (Counters.Unsupported).
func unsupportedCode(why string) float64 {
	switch {
	case why == "not supported":
		return CounterNotSupported
	case strings.HasPrefix(why, "not permitted"):
		return CounterNotPermitted
	}
	return CounterNotReadable
}

// CloseCounters releases the step's counters.
func (s *StepSampler) CloseCounters() {
	for _, c := range []*Counters{s.counters.server, s.counters.client} {
		if c != nil {
			c.Close()
		}
	}
}
