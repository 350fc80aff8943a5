// Package runner executes a workload's steps against an engine: N workers in
// closed loops, each with its own connection, a warm-up that is excluded from
// results, a fixed measured duration, a live 1-second series and HDR latency
// histograms. It owns the clock and the error policy; workloads own only
// their statements.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/engine"
	"benchlab/internal/metrics"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// maxErrorSamples is how many distinct error messages a result keeps.
const maxErrorSamples = 5

// Options control how a step is measured and reported while it runs.
type Options struct {
	// Out receives the live lines; nil silences them.
	Out io.Writer
	// ReportInterval is how often a live line is printed (sysbench's
	// --report-interval); 0 prints none. The stored series is always 1 s.
	ReportInterval time.Duration
	// DataDir is where the engine keeps its files; the block device that
	// holds it is the one whose IO counts per operation. Empty: none.
	DataDir string
}

// workerState is what one worker goroutine measures; only it writes here
// until it has finished.
type workerState struct {
	live                             metrics.Live
	hist                             *hdr.Histogram
	events, statements, errors, rows int64
}

// errorLog keeps the count and first distinct messages of failed operations.
type errorLog struct {
	mu      sync.Mutex
	samples []string
}

func (l *errorLog) add(err error) {
	msg := err.Error()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) >= maxErrorSamples {
		return
	}
	for _, s := range l.samples {
		if s == msg {
			return
		}
	}
	l.samples = append(l.samples, msg)
}

// Measure runs a measured step with the given number of workers and returns
// its result. If ctx is cancelled the result holds what was measured so far
// and has status interrupted; the returned error is then ctx's.
func Measure(ctx context.Context, db engine.DB, st workload.Step, threads int, seed uint64, opt Options) (*store.Result, error) {
	res := &store.Result{
		Test: st.Name, Family: st.Family, Group: st.Group, Threads: threads, Warm: st.Warm,
		Metric: metricName(st.Metric), RowsPerOp: st.RowsPerOp, Status: store.StatusOK,
	}
	workers := make([]workload.Worker, 0, threads)
	defer func() {
		for _, w := range workers {
			w.Close()
		}
	}()
	for i := 0; i < threads; i++ {
		w, err := st.NewWorker(ctx, db, i, threads, WorkerSeed(seed, st.Name, threads, i))
		if err != nil {
			res.Status = store.StatusFailed
			res.Errors = 1
			res.ErrorSamples = []string{err.Error()}
			return res, fmt.Errorf("%s: worker %d: %w", st.Name, i, err)
		}
		workers = append(workers, w)
	}

	states := make([]*workerState, threads)
	for i := range states {
		states[i] = &workerState{hist: metrics.NewHistogram()}
	}
	var stop atomic.Bool
	var errs errorLog
	start := time.Now()
	measureFrom := start.Add(st.Warmup)
	deadline := measureFrom.Add(st.Duration)
	res.Started = measureFrom

	// Resource use is sampled from the tick goroutine only (issue 3 item 5):
	// once now, once a second, and when the workers are done; the measured
	// part starts at the end of the warm-up.
	var roots []int
	if srv, ok := db.(engine.Server); ok {
		roots = srv.PIDs()
	}
	sampler := metrics.NewStepSampler(roots, opt.DataDir)
	if st.Warmup <= 0 {
		sampler.Mark()
	}

	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(ctx, w, states[i], measureFrom, deadline, &stop, &errs)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	res.Intervals = tick(ctx, st, threads, states, start, measureFrom, done, &stop, opt, sampler)
	end := time.Now()
	res.Eff = sampler.Efficiency()

	for _, s := range states {
		res.Events += s.events
		res.Statements += s.statements
		res.Errors += s.errors
		res.Rows += s.rows
	}
	merged := metrics.NewHistogram()
	for _, s := range states {
		merged.Merge(s.hist)
	}
	res.Latency = metrics.PercentilesOf(merged)
	if enc, err := merged.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		res.Histogram = enc
	}
	res.ErrorSamples = errs.samples
	if end.After(deadline) {
		end = deadline
	}
	res.Seconds = max(0, end.Sub(measureFrom).Seconds())
	if ctx.Err() != nil {
		res.Status = store.StatusInterrupted
		return res, ctx.Err()
	}
	return res, nil
}

// work is one worker's closed loop. Operations that start during the warm-up
// are run but not counted; the loop ends at the deadline, when stop is set,
// or when ctx is cancelled. An operation cut short by cancellation is not
// counted at all, neither as done nor as failed.
func work(ctx context.Context, w workload.Worker, s *workerState, measureFrom, deadline time.Time, stop *atomic.Bool, errs *errorLog) {
	for !stop.Load() {
		t0 := time.Now()
		tally, err := w.Op(ctx)
		t1 := time.Now()
		if err != nil && ctx.Err() != nil {
			return
		}
		lat := t1.Sub(t0)
		failed := err != nil
		s.live.Record(lat, tally.Statements, tally.Rows, failed)
		if !t0.Before(measureFrom) {
			s.events++
			s.statements += int64(tally.Statements)
			s.rows += tally.Rows
			metrics.RecordLatency(s.hist, lat)
			if failed {
				s.errors++
			}
		}
		if failed {
			errs.add(err)
		}
		if !t1.Before(deadline) {
			return
		}
	}
}

// tick drains the workers' live counters every second until they are done,
// returning the 1-second series and printing a line every report interval.
func tick(ctx context.Context, st workload.Step, threads int, states []*workerState, start, measureFrom time.Time,
	done <-chan struct{}, stop *atomic.Bool, opt Options, sampler *metrics.StepSampler) []store.Interval {
	var series []store.Interval
	var window metrics.Window
	windowStart := start
	last := start
	// Intervals are aligned to the end of the warm-up: interval k covers
	// (measureFrom + k s, measureFrom + (k+1) s], so warm-up seconds have
	// negative indexes and the first one may be shorter than a second.
	next := measureFrom.Add(-time.Duration(st.Warmup/time.Second) * time.Second)
	for !next.After(start) {
		next = next.Add(time.Second)
	}
	drain := func(now time.Time, boundary time.Time, final bool) {
		var w metrics.Window
		for _, s := range states {
			s.live.DrainInto(&w)
		}
		load := sampler.Sample()
		if !final && boundary.Equal(measureFrom) {
			sampler.Mark()
		}
		secs := now.Sub(last).Seconds()
		if w.Events > 0 || secs >= 0.5 {
			sec := int(boundary.Sub(measureFrom).Round(time.Second)/time.Second) - 1
			series = append(series, store.Interval{
				Sec: sec, Seconds: secs, Events: w.Events, Statements: w.Statements, Errors: w.Errors,
				Rows: w.Rows, P95: w.Quantile(0.95), Max: w.Max, Load: &load,
			})
		}
		window.Add(&w)
		last = now
		if opt.Out != nil && opt.ReportInterval > 0 && now.Sub(windowStart) >= opt.ReportInterval-50*time.Millisecond {
			printLine(opt.Out, st.Name, threads, now.Sub(start), now.Before(measureFrom), now.Sub(windowStart), &window)
			window = metrics.Window{}
			windowStart = now
		}
	}
	// final drains the partial interval after the last boundary.
	final := func() {
		now := time.Now()
		drain(now, next, true)
	}
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			drain(now, next, false)
			next = next.Add(time.Second)
			t.Reset(time.Until(next))
		case <-ctx.Done():
			stop.Store(true)
			<-done
			final()
			return series
		case <-done:
			final()
			return series
		}
	}
}

func printLine(out io.Writer, test string, threads int, at time.Duration, warm bool, span time.Duration, w *metrics.Window) {
	secs := span.Seconds()
	phase := ""
	if warm {
		phase = " (warm-up)"
	}
	fmt.Fprintf(out, "[ %3.0fs ] %s thds: %d tps: %.2f qps: %.2f lat (ms,95%%): %.3f max: %.3f err/s: %.2f%s\n",
		at.Seconds(), test, threads, float64(w.Events)/secs, float64(w.Statements)/secs,
		ms(w.Quantile(0.95)), ms(w.Max), float64(w.Errors)/secs, phase)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func metricName(m workload.Metric) string {
	if m == workload.KRPS {
		return "krps"
	}
	return "qps"
}

// WorkerSeed derives a worker's seed from the experiment seed, the step, the
// thread count and the worker number, so every worker draws its own stream and
// a rerun with the same seed draws the same ones.
func WorkerSeed(seed uint64, step string, threads, worker int) uint64 {
	h := seed ^ 0x9e3779b97f4a7c15
	for i := 0; i < len(step); i++ {
		h = splitmix(h ^ uint64(step[i]))
	}
	h = splitmix(h ^ uint64(threads)<<32 ^ uint64(worker))
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// isCancel reports whether err is a cancellation rather than a failure.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
