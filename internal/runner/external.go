package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/profile"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// This file runs the steps an outside program does (workload.Step.External,
// the command suite): no workers, but the same result as theirs. The
// server's process tree is sampled as for any step; the program's process
// tree takes the place of benchlab's own process as the client side (CPU,
// IO, context switches, peak memory), and the program's own per-period
// figures are the 1-second series, each second with its load.

// measureExternal runs st's program once at threads and returns its
// result, measured from the program's start to its exit.
func measureExternal(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, opt Options) ([]*store.Result, error) {
	m := roleMetric(st, workload.Role{})
	res := &store.Result{Test: st.Name, Family: st.Family, Group: st.Group, Threads: threads, Warm: st.Warm,
		Metric: m.Name, Status: store.StatusOK, Started: time.Now()}
	var roots []int
	if srv, ok := db.(engine.Server); ok {
		roots = srv.PIDs()
	}
	// run --profile samples the server's tree, as for workers; the
	// program itself is not profiled.
	rec := &stepRecording{hz: opt.ProfileHz,
		startErr: errors.New("profile: a program's step profiles the server's processes; this target has none")}
	if opt.ProfileHz > 0 && len(roots) > 0 {
		rec = startRecording(db, opt.ProfileHz)
		defer rec.close()
	}
	s := &externalSampler{server: meter.NewStepSampler(roots, opt.DataDir), last: time.Now()}
	s.server.Mark()
	x := &workload.ExternalRun{Threads: threads, Seed: WorkerSeed(seed, st.Name, threads, 0), Dir: opt.DataDir,
		Log: io.Discard, Started: s.started, Exited: s.exited}
	if opt.Out != nil {
		x.Log = opt.Out
	}
	done := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.sample(false)
			case <-done:
				return
			}
		}
	}()
	from := time.Now()
	out, err := st.External(ctx, db, x)
	to := time.Now()
	close(done)
	<-ticked
	s.sample(true)

	res.Seconds, res.Events, res.Statements = out.Seconds, out.Ops, out.Ops
	res.Latency = store.Latency{Mean: out.Mean, P50: out.P50, P95: out.P95, P99: out.P99, P999: out.P999, Max: out.Max}
	res.Facts = map[string]float64{}
	for k, v := range out.Facts {
		res.Facts[k] = v
	}
	res.Eff = s.efficiency()
	if opt.ProfileHz > 0 {
		res.Profile = rec.profile(profile.Span(profile.At(from), profile.At(to)))
	}
	for _, iv := range out.Intervals {
		siv := store.Interval{Sec: iv.Sec, Seconds: iv.Seconds, Events: iv.Events, Statements: iv.Events}
		if iv.Sec >= 0 && iv.Sec < len(s.loads) {
			siv.Load = &s.loads[iv.Sec]
		}
		res.Intervals = append(res.Intervals, siv)
	}
	if err == nil {
		if l, ok := db.(engine.Liveness); ok {
			if died := l.Died(); died != nil {
				err = fmt.Errorf("%s: %w", st.Name, died)
			}
		}
	}
	if err != nil {
		res.Status, res.Errors, res.ErrorSamples = store.StatusFailed, 1, []string{err.Error()}
		if ctx.Err() != nil {
			res.Status = store.StatusInterrupted
			err = ctx.Err()
		}
	}
	return []*store.Result{res}, err
}

// externalSampler samples the server and, once the program runs, the
// program's process tree, from the tick goroutine and from the program's
// Started and Exited (the step's goroutine).
type externalSampler struct {
	mu     sync.Mutex
	server *meter.StepSampler
	client *meter.StepSampler
	last   time.Time
	// gone: the program's last sample is taken; later ones would find
	// it reaped.
	gone bool
	// clientEff is the program's tree's totals, taken at its exit.
	clientEff *store.Efficiency
	loads     []store.IntervalLoad
}

func (s *externalSampler) started(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = meter.NewStepSampler([]int{pid}, "")
	s.client.Mark()
}

func (s *externalSampler) exited() {
	s.sample(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		s.clientEff = s.client.Efficiency()
	}
	s.gone = true
}

// sample takes one sample of both; a periodic one (final false) also
// keeps the second's load. The program's CPU is the client's, and is taken
// out of the foreign share, which counted it as another process's.
func (s *externalSampler) sample(final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return
	}
	now := time.Now()
	load := s.server.Sample()
	if s.client != nil {
		c := s.client.Sample()
		load.ClientCPU = c.ServerCPU
		if secs := now.Sub(s.last).Seconds(); load.ForeignPct >= 0 && c.ServerCPU >= 0 && secs > 0 {
			load.ForeignPct = max(0, load.ForeignPct-100*c.ServerCPU/(secs*float64(runtime.NumCPU())))
		}
	}
	s.last = now
	if !final {
		s.loads = append(s.loads, load)
	}
}

// efficiency is the server's figures and, for the client, the program's
// tree's (benchlab's own when the program never started).
func (s *externalSampler) efficiency() *store.Efficiency {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.server.Efficiency()
	c := s.clientEff
	if e == nil || c == nil {
		return e
	}
	copyClient(e, c)
	return e
}

// externalAction turns a load's External step into an action: run once at
// threads, unmeasured, its facts kept. The action's resource use is
// sampled as any action's (runAction); clientOf then puts the program's
// tree's figures, taken at its exit, in place of benchlab's as the client's.
func externalAction(st workload.Step, threads int, seed uint64, dir string) (
	action func(context.Context, engine.DB, io.Writer) (workload.Tally, error), clientOf func(*store.Efficiency)) {
	var mu sync.Mutex
	var tree *meter.StepSampler
	var eff *store.Efficiency
	action = func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
		out, err := st.External(ctx, db, &workload.ExternalRun{Threads: threads, Seed: WorkerSeed(seed, st.Name, threads, 0),
			Dir: dir, Log: log,
			Started: func(pid int) {
				mu.Lock()
				defer mu.Unlock()
				tree = meter.NewStepSampler([]int{pid}, "")
				tree.Mark()
			},
			Exited: func() {
				mu.Lock()
				defer mu.Unlock()
				if tree != nil {
					tree.Sample()
					eff = tree.Efficiency()
				}
			}})
		return workload.Tally{Facts: out.Facts}, err
	}
	clientOf = func(e *store.Efficiency) {
		mu.Lock()
		defer mu.Unlock()
		if e != nil && eff != nil {
			copyClient(e, eff)
		}
	}
	return action, clientOf
}

// copyClient makes the server figures of c, a sampler of a program's
// tree, the client figures of e.
func copyClient(e, c *store.Efficiency) {
	e.ClientCPU, e.ClientCS, e.ClientPeakRSS = c.ServerCPU, c.ServerCS, c.ServerPeakRSS
	e.ClientReadBytes, e.ClientWriteBytes = c.ServerReadBytes, c.ServerWriteBytes
	e.ClientReadCalls, e.ClientWriteCalls = c.ServerReadCalls, c.ServerWriteCalls
}
