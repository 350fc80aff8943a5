package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metrics"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Sink receives each step's result as soon as the step ends, between tests,
// so the store's own IO never overlaps a measured interval.
type Sink interface {
	SaveResult(ctx context.Context, r *store.Result) error
}

// StreamSink is a Sink that also keeps a step's results while it runs
// (store.Store): a result row begun before the step, and its 1-second series
// appended as it goes.
type StreamSink interface {
	Sink
	BeginResult(ctx context.Context, r *store.Result) error
	AppendIntervals(ctx context.Context, resultID int64, test string, ivs []store.Interval) error
	UpdateProgress(ctx context.Context, r *store.Result) error
}

// cellStream streams one step's results to a StreamSink (runner.Stream).
type cellStream struct {
	ctx     context.Context
	sink    StreamSink
	runID   int64
	seq     int
	log     io.Writer
	results []*store.Result
	failed  bool
}

func (c *cellStream) Begin(rs []*store.Result) error {
	c.results = rs
	for _, r := range rs {
		r.RunID, r.Seq = c.runID, c.seq
		if err := c.sink.BeginResult(c.ctx, r); err != nil {
			fmt.Fprintf(c.log, "warning: %s: the series will be stored at the step's end only: %v\n", r.Test, err)
			return err
		}
	}
	return nil
}

func (c *cellStream) Flush(ri int, ivs []store.Interval) {
	if c.failed || ri >= len(c.results) || c.results[ri].ID == 0 {
		return
	}
	if err := c.sink.AppendIntervals(c.ctx, c.results[ri].ID, c.results[ri].Test, ivs); err != nil {
		c.failed = true
		fmt.Fprintf(c.log, "warning: %s: the series will be stored at the step's end only: %v\n", c.results[ri].Test, err)
	}
}

func (c *cellStream) FlushLatency(ri int, l SoFar) {
	if c.failed || ri >= len(c.results) || c.results[ri].ID == 0 {
		return
	}
	p := *c.results[ri]
	p.Events, p.Seconds, p.Latency, p.Histogram = l.Events, l.Seconds, l.Latency, l.Histogram
	if err := c.sink.UpdateProgress(c.ctx, &p); err != nil {
		c.failed = true
		fmt.Fprintf(c.log, "warning: %s: the latency will be stored at the step's end only: %v\n", p.Test, err)
	}
}

// Cell is one run of the matrix: a target and a full pass of its steps on a
// fresh data dir.
type Cell struct {
	Target  engine.Target
	Driver  engine.Driver
	Steps   []workload.Step
	Threads []int
	// DataDir is created fresh for the cell and removed afterwards unless Keep.
	DataDir string
	Keep    bool
	Seed    uint64
	RunID   int64
	Options Options
	// Log receives progress lines (load, cleanup, errors).
	Log io.Writer
}

// Outcome summarises a finished cell.
type Outcome struct {
	Status string
	Err    error
	Info   engine.Info
	// Notes are the actions' notes (workload.Tally.Notes), for the manifest.
	Notes []string
}

// RunCell opens the target's database in a fresh data dir, runs every step in
// order, and hands each result to sink. A failing measured step is recorded
// and the cell goes on; a failing action (load, cleanup) ends the cell, since
// later steps depend on its state. On cancellation the partial result is
// saved and the cell ends with status interrupted. The data dir is removed in
// every case unless Keep is set.
func RunCell(ctx context.Context, c Cell, sink Sink) Outcome {
	saveCtx := context.WithoutCancel(ctx)
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	if err := os.RemoveAll(c.DataDir); err != nil {
		return Outcome{Status: store.StatusFailed, Err: fmt.Errorf("clear data dir: %w", err)}
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return Outcome{Status: store.StatusFailed, Err: fmt.Errorf("data dir: %w", err)}
	}
	if !c.Keep {
		defer os.RemoveAll(c.DataDir)
	}
	db, err := c.Driver.Open(ctx, c.Target, c.DataDir)
	if err != nil {
		return Outcome{Status: store.StatusFailed, Err: fmt.Errorf("open %s: %w", c.Target.Name, err)}
	}
	defer db.Close()
	out := Outcome{Status: store.StatusOK}
	if out.Info, err = db.Info(ctx); err != nil {
		return Outcome{Status: store.StatusFailed, Err: fmt.Errorf("describe %s: %w", c.Target.Name, err)}
	}

	seq := 0
	var failures []error
	for _, st := range c.Steps {
		clientOf := func(*store.Efficiency) {}
		if st.Action == nil && st.External != nil && st.Load {
			threads := st.Threads
			if len(threads) == 0 {
				threads = c.Threads
			}
			st.Action, clientOf = externalAction(st, threads[0], c.Seed, c.DataDir)
		}
		if st.Action != nil {
			seq++
			res, notes, err := runAction(ctx, db, st, c.DataDir, log)
			clientOf(res.Eff)
			res.RunID, res.Seq = c.RunID, seq
			out.Notes = append(out.Notes, notes...)
			if st.Name == "prepare" && err == nil {
				res.DBBytes = dbSize(c.DataDir)
			}
			if serr := sink.SaveResult(saveCtx, res); serr != nil {
				return Outcome{Status: store.StatusFailed, Err: serr, Info: out.Info, Notes: out.Notes}
			}
			if err != nil {
				if ctx.Err() != nil {
					out.Status, out.Err = store.StatusInterrupted, ctx.Err()
					return out
				}
				if died := diedSoon(db); died != nil && !strings.Contains(err.Error(), died.Error()) {
					err = fmt.Errorf("%w; %v", err, died)
				}
				out.Status, out.Err = store.StatusFailed, fmt.Errorf("%s: %w", st.Name, err)
				return out
			}
			continue
		}
		threads := st.Threads
		if len(threads) == 0 {
			threads = c.Threads
		}
		for _, n := range threads {
			seq++
			opt := c.Options
			if opt.DataDir == "" {
				opt.DataDir = c.DataDir
			}
			if ss, ok := sink.(StreamSink); ok {
				opt.Stream = &cellStream{ctx: saveCtx, sink: ss, runID: c.RunID, seq: seq, log: log}
			}
			var rs []*store.Result
			var err error
			if sr, ok := db.(engine.StepRunner); ok && st.Bench != nil {
				rs, err = runBench(ctx, sr, st, n)
			} else if st.External != nil {
				rs, err = measureExternal(ctx, db, st, n, c.Seed, opt)
			} else {
				rs, err = MeasureRoles(ctx, db, st, n, c.Seed, opt)
			}
			if st.SizeAfter && len(rs) > 0 && err == nil {
				rs[0].DBBytes = dbSize(c.DataDir)
				if sz, ok := db.(engine.Sizer); ok {
					if n, serr := sz.DBSize(ctx); serr == nil {
						if rs[0].Facts == nil {
							rs[0].Facts = map[string]float64{}
						}
						rs[0].Facts[store.FactDBBytes] = float64(n)
					}
				}
			}
			for _, res := range rs {
				res.RunID, res.Seq = c.RunID, seq
				if serr := sink.SaveResult(saveCtx, res); serr != nil {
					return Outcome{Status: store.StatusFailed, Err: serr, Info: out.Info, Notes: out.Notes}
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					out.Status, out.Err = store.StatusInterrupted, ctx.Err()
					return out
				}
				fmt.Fprintf(log, "error: %s at %d threads: %v\n", st.Name, n, err)
				failures = append(failures, fmt.Errorf("%s/threads=%d: %w", st.Name, n, err))
				continue
			}
			for _, res := range rs {
				name := st.Name
				if res.Role.Name != "" {
					name += "/" + res.Role.Name
				}
				fmt.Fprintf(log, "%-28s %3d thr  %10.1f %s  p99 %8.3f ms  errors %d\n", name, n, res.Throughput(),
					res.Metric, float64(res.Latency.P99)/1e6, res.Errors)
				if res.Errors > 0 {
					fmt.Fprintf(log, "warning: %s at %d threads: %d failed operations, first: %s\n",
						name, n, res.Errors, res.ErrorSamples[0])
				}
			}
		}
	}
	if len(failures) > 0 {
		out.Status, out.Err = store.StatusFailed, errors.Join(failures...)
	}
	return out
}

// runAction runs a non-measured step (load, cleanup) and records what it did
// and what it cost: its resource use is sampled from /proc once a second, as
// a measured step's is, so the load's CPU and IO per inserted row can be
// reported (METHOD.md 2.2, sysbench's sb.prepare.met).
func runAction(ctx context.Context, db engine.DB, st workload.Step, dataDir string, log io.Writer) (*store.Result, []string, error) {
	start := time.Now()
	fmt.Fprintf(log, "%s ...\n", st.Name)
	var roots []int
	if srv, ok := db.(engine.Server); ok {
		roots = srv.PIDs()
	}
	sampler := metrics.NewStepSampler(roots, dataDir)
	sampler.Mark()
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				sampler.Sample()
			case <-done:
				sampler.Sample()
				return
			}
		}
	}()
	tally, err := st.Action(ctx, db, log)
	close(done)
	<-sampled
	res := &store.Result{
		Test: st.Name, Family: st.Name, Warm: true, Action: true, Metric: "qps", Status: store.StatusOK,
		Started: start, Seconds: time.Since(start).Seconds(), Events: 1,
		Statements: int64(tally.Statements), Rows: tally.Rows, Facts: tally.Facts, Eff: sampler.Efficiency(),
	}
	if err != nil {
		res.Status = store.StatusFailed
		if isCancel(err) || ctx.Err() != nil {
			res.Status = store.StatusInterrupted
		}
		res.Errors = 1
		res.ErrorSamples = []string{err.Error()}
	}
	return res, tally.Notes, err
}

// dbSize is the database size after load (METHOD.md 1.11 dbdirGB: du -bs of
// the data dir), or store.NotReadable when the dir cannot be walked.
func dbSize(dir string) int64 {
	n, err := metrics.DirBytes(dir)
	if err != nil {
		return store.NotReadable
	}
	return n
}

// runBench hands a step to an engine that runs it in its own process
// (db_bench) and turns what the tool measured into a result: its operations,
// time, ops/s and latency percentiles, and its LSM facts.
func runBench(ctx context.Context, sr engine.StepRunner, st workload.Step, threads int) ([]*store.Result, error) {
	res := &store.Result{
		Test: st.Name, Family: st.Family, Group: st.Group, Threads: threads, Warm: st.Warm,
		Metric: "qps", Status: store.StatusOK, Started: time.Now(),
	}
	ks, ok := st.Bench(threads)
	if !ok {
		res.Status, res.Errors, res.ErrorSamples = store.StatusFailed, 1, []string{"no db_bench form for " + st.Name}
		return []*store.Result{res}, fmt.Errorf("%s: no db_bench form", st.Name)
	}
	out, err := sr.RunStep(ctx, ks)
	if err != nil {
		res.Status, res.Errors, res.ErrorSamples = store.StatusFailed, 1, []string{err.Error()}
		if ctx.Err() != nil {
			res.Status = store.StatusInterrupted
		}
		return []*store.Result{res}, err
	}
	res.Events, res.Statements, res.Seconds = out.Ops, out.Ops, out.Seconds
	if res.Seconds <= 0 && out.OpsPerSec > 0 {
		res.Seconds = float64(out.Ops) / out.OpsPerSec
	}
	res.Latency = store.Latency{Mean: time.Duration(out.MicrosPerOp * float64(time.Microsecond)),
		P50: out.P50, P99: out.P99, P999: out.P999, Max: out.Max}
	res.Facts = out.LSM.Facts()
	res.Facts[store.FactToolOpsPerSec] = out.OpsPerSec
	return []*store.Result{res}, nil
}
