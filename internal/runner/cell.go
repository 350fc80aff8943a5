package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/metric"
	"benchlab/internal/spec"
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
	AppendInternals(ctx context.Context, resultID int64, test string, series []store.EngineSeries) error
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

func (c *cellStream) FlushInternals(ri int, series []store.EngineSeries) {
	if c.failed || ri >= len(c.results) || c.results[ri].ID == 0 {
		return
	}
	if err := c.sink.AppendInternals(c.ctx, c.results[ri].ID, c.results[ri].Test, series); err != nil {
		c.failed = true
		fmt.Fprintf(c.log, "warning: %s: the engine series will be stored at the step's end only: %v\n", c.results[ri].Test, err)
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
	// Swept marks a sweep's target, whose setting is read back once the
	// server runs (checkSwept).
	Swept *spec.Swept
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
	r, closeCell := openCell(ctx, c, sink)
	defer closeCell()
	for _, st := range c.Steps {
		if r.ended {
			break
		}
		if r.step(ctx, st) {
			continue
		}
		for _, n := range r.threadsOf(st) {
			rs, err := r.measure(ctx, st, n)
			if !r.record(ctx, st, n, rs, err) {
				break
			}
		}
	}
	return r.outcome()
}

// RunGroup runs cells, the targets of one repeat of an interleaved
// experiment (spec workload.interleave), side by side: every target is
// opened in its own data dir, each action runs on each target in turn, and
// each measured step that benchlab's workers run in closed loops is
// measured on all the targets still going at once, in turns of slice
// (measureParts); other measured steps (db_bench's, a program's, paced or
// op-bounded ones) run on each target in turn. Each cell fails, is
// interrupted and is cleaned up as RunCell's would be; the outcomes are in
// the cells' order.
func RunGroup(ctx context.Context, cells []Cell, sink Sink, slice time.Duration) []Outcome {
	rs := make([]*cellRun, len(cells))
	for i, c := range cells {
		r, closeCell := openCell(ctx, c, sink)
		defer closeCell()
		rs[i] = r
	}
	for si := range cells[0].Steps {
		// Actions run on each target in turn; going are the targets
		// still running whose step si is a measured one.
		var going []*cellRun
		for _, r := range rs {
			if !r.ended && !r.step(ctx, r.c.Steps[si]) {
				going = append(going, r)
			}
		}
		if len(going) == 0 {
			continue
		}
		st := going[0].c.Steps[si]
		for _, n := range going[0].threadsOf(st) {
			going = slices.DeleteFunc(going, func(r *cellRun) bool { return r.ended })
			if len(going) == 0 {
				break
			}
			if !interleavable(st, n, going[0].c.Options) || len(going) == 1 {
				for _, r := range going {
					if !r.ended {
						results, err := r.measure(ctx, r.c.Steps[si], n)
						r.record(ctx, r.c.Steps[si], n, results, err)
					}
				}
				continue
			}
			parts := make([]stepPart, len(going))
			for i, r := range going {
				parts[i] = r.part(r.c.Steps[si], n)
			}
			opt := going[0].c.Options
			opt.DataDir = cmp.Or(opt.DataDir, going[0].c.DataDir)
			results, errs := measureParts(ctx, parts, st, n, slice, opt)
			for i, r := range going {
				r.record(ctx, r.c.Steps[si], n, results[i], errs[i])
			}
		}
	}
	out := make([]Outcome, len(rs))
	for i, r := range rs {
		out[i] = r.outcome()
	}
	return out
}

// interleavable says whether a measured step at n threads can take turns
// with other targets: benchlab's own workers in closed loops, with no role
// paced or bounded by a count.
func interleavable(st workload.Step, n int, opt Options) bool {
	if st.External != nil || st.Bench != nil || opt.Rate > 0 || opt.Events > 0 {
		return false
	}
	for _, r := range stepRoles(st, n, opt) {
		if r.Rate > 0 || r.Ops > 0 {
			return false
		}
	}
	return true
}

// cellRun is a cell under way: its open database and what it has done.
type cellRun struct {
	c        Cell
	db       engine.DB
	sink     Sink
	log      io.Writer
	saveCtx  context.Context
	out      Outcome
	seq      int
	failures []error
	// ended: an action failed, the run was interrupted, or the database
	// could not be opened; no more steps run.
	ended bool
}

// openCell makes the cell's fresh data dir and opens its database; a cell
// that cannot is ended with its failure. The returned func closes the
// database and removes the data dir unless Keep.
func openCell(ctx context.Context, c Cell, sink Sink) (*cellRun, func()) {
	r := &cellRun{c: c, sink: sink, log: c.Log, saveCtx: context.WithoutCancel(ctx), out: Outcome{Status: store.StatusOK}}
	if r.log == nil {
		r.log = io.Discard
	}
	fail := func(err error) (*cellRun, func()) {
		r.out, r.ended = Outcome{Status: store.StatusFailed, Err: err}, true
		return r, func() {}
	}
	if err := os.RemoveAll(c.DataDir); err != nil {
		return fail(fmt.Errorf("clear data dir: %w", err))
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return fail(fmt.Errorf("data dir: %w", err))
	}
	removeDir := func() {
		if !c.Keep {
			os.RemoveAll(c.DataDir)
		}
	}
	db, err := c.Driver.Open(ctx, c.Target, c.DataDir)
	if err != nil {
		removeDir()
		return fail(fmt.Errorf("open %s: %w", c.Target.Name, err))
	}
	closeAll := func() {
		db.Close()
		removeDir()
	}
	if r.out.Info, err = db.Info(ctx); err != nil {
		closeAll()
		return fail(fmt.Errorf("describe %s: %w", c.Target.Name, err))
	}
	if err := checkSwept(c, r.out.Info, r.log); err != nil {
		closeAll()
		return fail(err)
	}
	r.db = db
	return r, closeAll
}

// checkSwept reads a sweep's setting back from the server just started
// (its Info) and refuses the target, with a field error, when the server
// has no such setting: every value would run the same server. A value the
// server runs otherwise (clamped, rounded) is said in the log; the report
// flags it from the run's manifest.
func checkSwept(c Cell, info engine.Info, log io.Writer) error {
	sw := c.Swept
	if sw == nil || !sw.SweepsSetting() {
		return nil
	}
	chk := spec.CheckSetting(sw.Setting, sw.Asked(c.Target.Settings), info.Settings, info.SettingUnits)
	switch chk.Outcome {
	case spec.SettingUnknown:
		return spec.UnknownSettingError(*sw, chk)
	case spec.SettingDiffers:
		fmt.Fprintf(log, "%s: %s; the report flags this value\n", c.Target.Name, chk)
	}
	return nil
}

// threadsOf is a step's thread counts: its own, or the cell's.
func (r *cellRun) threadsOf(st workload.Step) []int {
	if len(st.Threads) > 0 {
		return st.Threads
	}
	return r.c.Threads
}

// step runs st if it is an action (a program's load included) and reports
// whether it was one; a failing action ends the cell.
func (r *cellRun) step(ctx context.Context, st workload.Step) bool {
	clientOf := func(*store.Efficiency) {}
	if st.Action == nil && st.External != nil && st.Load {
		st.Action, clientOf = externalAction(st, r.threadsOf(st)[0], r.c.Seed, r.c.DataDir)
	}
	if st.Action == nil {
		return false
	}
	r.seq++
	res, notes, err := runAction(ctx, r.db, st, r.c.DataDir, r.log)
	clientOf(res.Eff)
	r.out.Notes = append(r.out.Notes, notes...)
	if st.Name == "prepare" && err == nil {
		res.DBBytes = dbSize(r.c.DataDir)
	}
	if !r.save(res) {
		return true
	}
	if err != nil {
		if r.interrupted(ctx) {
			return true
		}
		if died := diedSoon(r.db); died != nil && !strings.Contains(err.Error(), died.Error()) {
			err = fmt.Errorf("%w; %v", err, died)
		}
		r.end(Outcome{Status: store.StatusFailed, Err: fmt.Errorf("%s: %w", st.Name, err)})
	}
	return true
}

// save stores a result under the cell's run and current step number; a
// store error ends the cell (false).
func (r *cellRun) save(res *store.Result) bool {
	res.RunID, res.Seq = r.c.RunID, r.seq
	metric.Stamp(res)
	if err := r.sink.SaveResult(r.saveCtx, res); err != nil {
		r.end(Outcome{Status: store.StatusFailed, Err: err})
		return false
	}
	return true
}

// interrupted ends the cell as interrupted when ctx is done, and says so.
func (r *cellRun) interrupted(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	r.end(Outcome{Status: store.StatusInterrupted, Err: ctx.Err()})
	return true
}

// end ends the cell with o's status and error, keeping its info and notes.
func (r *cellRun) end(o Outcome) {
	r.out.Status, r.out.Err, r.ended = o.Status, o.Err, true
}

// part is the cell as one target of an interleaved step at n threads.
func (r *cellRun) part(st workload.Step, n int) stepPart {
	r.seq++
	return stepPart{name: r.c.Target.Name, db: r.db, seed: r.c.Seed, live: r.c.Options.Live, stream: r.stream()}
}

// stream is where the current step's results stream as it runs (nil when
// the sink keeps results only at their end).
func (r *cellRun) stream() Stream {
	if ss, ok := r.sink.(StreamSink); ok {
		return &cellStream{ctx: r.saveCtx, sink: ss, runID: r.c.RunID, seq: r.seq, log: r.log}
	}
	return nil
}

// measure runs a measured step at n threads on the cell's target alone.
func (r *cellRun) measure(ctx context.Context, st workload.Step, n int) ([]*store.Result, error) {
	r.seq++
	opt := r.c.Options
	opt.DataDir = cmp.Or(opt.DataDir, r.c.DataDir)
	opt.Stream = r.stream()
	if sr, ok := r.db.(engine.StepRunner); ok && st.Bench != nil {
		return runBench(ctx, sr, st, n)
	} else if st.External != nil {
		return measureExternal(ctx, r.db, st, n, r.c.Seed, opt)
	}
	return MeasureRoles(ctx, r.db, st, n, r.c.Seed, opt)
}

// record stores a measured step's results under the cell's current step
// number and logs them, and reports whether the cell goes on: a failed
// step is counted and the cell goes on; an interrupted one, one that
// overran its time (ErrOverrun) or a store error ends it.
func (r *cellRun) record(ctx context.Context, st workload.Step, n int, rs []*store.Result, err error) bool {
	if err == nil && ctx.Err() == nil {
		err = errorPolicy(st, rs, r.c.Options.MaxErrorRate)
	}
	if st.SizeAfter && len(rs) > 0 && err == nil {
		rs[0].DBBytes = dbSize(r.c.DataDir)
		if sz, ok := r.db.(engine.Sizer); ok {
			if size, serr := sz.DBSize(r.saveCtx); serr == nil {
				if rs[0].Facts == nil {
					rs[0].Facts = map[string]float64{}
				}
				rs[0].Facts[store.FactDBBytes] = float64(size)
			}
		}
	}
	for _, res := range rs {
		if !r.save(res) {
			return false
		}
	}
	if err != nil {
		if r.interrupted(ctx) {
			return false
		}
		fmt.Fprintf(r.log, "error: %s at %d threads: %v\n", st.Name, n, err)
		r.failures = append(r.failures, fmt.Errorf("%s/threads=%d: %w", st.Name, n, err))
		if errors.Is(err, ErrOverrun) {
			// Its server hangs: the next steps would only hang too.
			r.end(Outcome{Status: store.StatusFailed, Err: errors.Join(r.failures...)})
			return false
		}
		return true
	}
	for _, res := range rs {
		name := st.Name
		if res.Role.Name != "" {
			name += "/" + res.Role.Name
		}
		fmt.Fprintf(r.log, "%-28s %3d thr  %10.1f %s  p99 %8.3f ms  errors %d (%.2g%%)\n", name, n, res.Throughput(),
			res.Metric, float64(res.Latency.P99)/1e6, res.Errors, 100*res.ErrorRate())
		if res.Errors > 0 {
			fmt.Fprintf(r.log, "warning: %s at %d threads: %d failed operations, first: %s\n",
				name, n, res.Errors, res.ErrorSamples[0])
		}
	}
	return true
}

// outcome is how the cell ended.
func (r *cellRun) outcome() Outcome {
	if !r.ended && len(r.failures) > 0 {
		r.out.Status, r.out.Err = store.StatusFailed, errors.Join(r.failures...)
	}
	return r.out
}

// runAction runs a non-measured step (load, cleanup) and records what it did
// and what it cost: its resource use is sampled from /proc once a second, as
// a measured step's is, so the load's CPU and IO per inserted row can be
// reported (docs/method.md 2.2, sysbench's sb.prepare.met).
func runAction(ctx context.Context, db engine.DB, st workload.Step, dataDir string, log io.Writer) (*store.Result, []string, error) {
	start := time.Now()
	fmt.Fprintf(log, "%s ...\n", st.Name)
	var roots []int
	if srv, ok := db.(engine.Server); ok {
		roots = srv.PIDs()
	}
	sampler := meter.NewStepSampler(roots, dataDir)
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

// dbSize is the database size after load (docs/method.md 1.11 dbdirGB: du -bs of
// the data dir), or store.NotReadable when the dir cannot be walked.
func dbSize(dir string) int64 {
	n, err := engine.DirBytes(dir)
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
