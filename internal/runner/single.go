package runner

import (
	"context"
	"runtime"
	"time"

	"benchlab/internal/meter"
)

// measureSingle measures a step on its one target, with every instrument:
// the processes' resource use per operation, perf counters, the engine's
// own counters, the CPUs' speed and, with Options.ProfileHz, a profile.
func (s *stepRun) measureSingle() {
	db := s.parts[0].db
	s.beginStreams()
	var rec *stepRecording
	if s.opt.ProfileHz > 0 {
		// perf record starts before the step's clock does (startRecording).
		rec = startRecording(db, s.opt.ProfileHz)
		s.use(instruments{rec})
	}
	s.open(stepWindow(s.st, s.roles, time.Now()))
	// Resource use is sampled from the tick goroutine only (never from a
	// worker, so the workers' hot path pays nothing for it): once now,
	// once a second, and when the workers are done; the measured part
	// starts at the end of the warm-up.
	sampler := newLoadSampler(s.parts, s.opt.DataDir)
	ins := instruments{effSampler{sampler}, startPerfCounters(sampler)}
	// The engine's counters and gauges once a second over the measured
	// part (engine.InternalsReader), read on a goroutine of their own;
	// before the engine's counters, whose finish closes the sessions.
	if in := startInternals(s.ctx, db, 0, 0, s.win.measureFrom, s.opt.Out); in != nil {
		ins = append(ins, in)
	}
	// The engine's own counters (engine.StatsReader) start and end with
	// the sampler's measured part.
	if stats := newEngineStats(s.ctx, db, s.opt.Out); stats != nil {
		ins = append(ins, stats)
	}
	if speed := startSpeedProbe(s.opt, s.win, sampler); speed != nil {
		ins = append(ins, speed)
	}
	if mem := newCgroupMemory(s.parts, s.opt.Out); mem != nil {
		ins = append(ins, mem)
	}
	s.use(ins)
	if rec != nil {
		ins = append(ins, rec) // closed already when the step is over
	}
	start := func(clock meter.Clock, c *crew) (wait func()) {
		startWorkers(s.stepCtx, s.runs, clock, s.win, s.stop, s.iop.lockThreads, c)
		return func() {}
	}
	s.run(ins, start, func(_ *roleRun, end time.Time) time.Duration {
		return max(0, end.Sub(s.win.measureFrom))
	})
}

// startWorkers starts every worker's loop, each goroutine with its lane in
// c (watch.go).
func startWorkers(ctx context.Context, runs []*roleRun, clock meter.Clock, win window, stop *stopper,
	lockThreads bool, c *crew) {
	measureFromNs, deadlineNs := clock.At(win.measureFrom), clock.At(win.deadline)
	finishOne := func() {
		for _, rr := range runs {
			if rr.role.Ops > 0 && rr.finished.Load() < rr.bounded {
				return
			}
		}
		stop.Store(true)
	}
	for _, rr := range runs {
		rr.locked = lockThreads
		for i, w := range rr.workers {
			ln := c.add(ctx)
			p := newPacer(rr.role, i, len(rr.workers), win.start)
			quota := share(rr.role.Ops, i, len(rr.workers))
			go func() {
				defer c.exit(ln)
				// A worker keeps its own OS thread, as sysbench's and
				// db_bench's threads do: a goroutine that hops between
				// threads after cgo calls and blocking reads loses its CPU
				// caches (in-process RocksDB readrandom: 80k -> 107k gets/s
				// on one thread here). Polled and spread workers do not: a
				// parked goroutine tied to a thread costs two thread switches
				// per wake-up (PostgreSQL point query at 4 threads on 2 CPUs:
				// 52k locked, 82k unlocked here).
				if lockThreads {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				work(ctx, w, rr.states[i], clock, measureFromNs, deadlineNs, stop, rr.errs, p, rr, quota, finishOne, ln)
			}()
		}
	}
}
