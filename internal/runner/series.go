package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// This file is the per-second part of the runner's collection: while a
// step runs, its workers' live counters are drained into a 1-second series
// per role, live lines and samples, and streamed to the store.

// DefaultFlushEvery is how often a running step's series and latency so
// far are streamed to the store when Options.FlushEvery is 0: a run killed
// hard loses at most these last seconds. A flush costs a transaction of a
// few rows and one histogram per role.
const DefaultFlushEvery = 5 * time.Second

// tick drains the workers' live counters every second until they are done,
// returning one 1-second series per role and printing a line every report
// interval; each second it has the instruments sample it (the headline
// role's Load), and it marks them at the end of the warm-up.
func tick(ctx context.Context, st workload.Step, threads int, runs []*roleRun, start, measureFrom time.Time,
	done <-chan struct{}, stop *stopper, opt Options, ins instruments, alive func() bool) [][]store.Interval {
	t := &ticks{st: st, threads: threads, runs: runs, start: start, measureFrom: measureFrom, opt: opt, ins: ins,
		series: make([][]store.Interval, len(runs)), spent: make([]time.Duration, len(runs)),
		lineSpent: make([]time.Duration, len(runs)), windows: make([]meter.Window, len(runs)),
		windowStart: start, last: start, flushed: make([]int, len(runs)),
		flushEvery: cmp.Or(opt.FlushEvery, DefaultFlushEvery), lastFlush: start}
	// Intervals are aligned to the end of the warm-up: interval k covers
	// (measureFrom + k s, measureFrom + (k+1) s], so warm-up seconds have
	// negative indexes and the first one may be shorter than a second.
	next := measureFrom.Add(-time.Duration(st.Warmup/time.Second) * time.Second)
	for !next.After(start) {
		next = next.Add(time.Second)
	}
	// final drains the partial interval after the last boundary.
	final := func() {
		now := time.Now()
		t.drain(now, next, true)
	}
	tm := time.NewTimer(time.Until(next))
	defer tm.Stop()
	for {
		select {
		case now := <-tm.C:
			t.drain(now, next, false)
			t.flush(now)
			if !alive() {
				// The engine's process is gone: stop the workers now
				// rather than count failures until the step's time is up.
				stop.Store(true)
			}
			next = next.Add(time.Second)
			tm.Reset(time.Until(next))
		case <-ctx.Done():
			stop.Store(true)
			<-done
			final()
			return t.series
		case <-done:
			final()
			return t.series
		}
	}
}

// ticks is tick's state: the series so far, the live line's window and
// what has been streamed.
type ticks struct {
	st                 workload.Step
	threads            int
	runs               []*roleRun
	start, measureFrom time.Time
	opt                Options
	ins                instruments
	series             [][]store.Interval
	// In an interleaved step a role runs only in its target's turns: its
	// intervals' seconds are its turns' time in them (turns.spent).
	spent, lineSpent []time.Duration
	windows          []meter.Window
	windowStart      time.Time
	last             time.Time
	// flushed counts each role's intervals streamed; asked says the
	// workers were asked for their histograms at lastFlush.
	flushed    []int
	flushEvery time.Duration
	lastFlush  time.Time
	asked      bool
	snap       *hdr.Histogram
}

// drain ends the interval at boundary (now, or the step's end when final):
// the instruments' sample, each role's interval and live sample, and the
// live line every report interval.
func (t *ticks) drain(now time.Time, boundary time.Time, final bool) {
	var load store.IntervalLoad
	t.ins.sample(t.last, now, &load)
	if !final && boundary.Equal(t.measureFrom) {
		t.ins.mark()
	}
	secs := now.Sub(t.last).Seconds()
	sec := int(boundary.Sub(t.measureFrom).Round(time.Second)/time.Second) - 1
	for ri, rr := range t.runs {
		var w meter.Window
		for _, s := range rr.states {
			s.live.DrainInto(&w)
		}
		secs := secs
		if rr.turns != nil {
			spent := rr.turns.spent(rr.target, now)
			secs, t.spent[ri] = (spent - t.spent[ri]).Seconds(), spent
		}
		if w.Events > 0 || secs >= 0.5 {
			iv := store.Interval{Sec: sec, Seconds: secs, Events: w.Events, Statements: w.Statements,
				Errors: w.Errors, Rows: w.Rows, P95: w.Quantile(0.95), Max: w.Max}
			if ri == 0 {
				iv.Load = &load
			}
			t.series[ri] = append(t.series[ri], iv)
		}
		live := rr.live
		if live == nil {
			live = t.opt.Live
		}
		if live != nil && secs > 0 {
			live(LiveSample{Test: t.st.Name, Role: rr.role.Name, Threads: t.threads, Warm: now.Before(t.measureFrom),
				Seconds: secs, Events: w.Events, Errors: w.Errors, Statements: w.Statements, Rows: w.Rows,
				P50: w.Quantile(0.5), P95: w.Quantile(0.95), P99: w.Quantile(0.99), Max: w.Max})
		}
		t.windows[ri].Add(&w)
	}
	t.last = now
	opt := t.opt
	if opt.Out != nil && opt.ReportInterval > 0 && now.Sub(t.windowStart) >= opt.ReportInterval-50*time.Millisecond {
		t.printLine(now)
	}
}

// printLine prints the live line of the window that ends now.
func (t *ticks) printLine(now time.Time) {
	opt := t.opt
	suffix := ""
	if opt.Progress != nil {
		suffix = opt.Progress()
	}
	// An interleaved role's rate is over its target's turns.
	spans := make([]float64, len(t.runs))
	for ri, rr := range t.runs {
		if rr.turns != nil {
			spans[ri] = (t.spent[ri] - t.lineSpent[ri]).Seconds()
			t.lineSpent[ri] = t.spent[ri]
		}
	}
	printLine(opt.Out, t.st.Name, t.threads, now.Sub(t.start), now.Before(t.measureFrom), now.Sub(t.windowStart), t.runs,
		t.windows, spans, cmp.Or(opt.Percentile, 95), suffix)
	for i := range t.windows {
		t.windows[i] = meter.Window{}
	}
	t.windowStart = now
}

// flush hands the intervals not yet streamed and the latency so far to
// opt.Stream, every FlushEvery (and never at the end: the final result
// carries them all). It asks the workers for their histograms
// (workerState.handoff) and streams a second later, once they have
// handed them over.
func (t *ticks) flush(now time.Time) {
	stream := t.opt.Stream
	if stream == nil {
		return
	}
	if t.asked {
		t.asked = false
		if t.snap == nil {
			t.snap = meter.NewHistogram()
		}
		for ri, rr := range t.runs {
			stream.Flush(ri, t.series[ri][t.flushed[ri]:])
			t.flushed[ri] = len(t.series[ri])
			stream.FlushLatency(ri, rr.soFar(t.snap, t.lastFlush.Sub(t.measureFrom).Seconds()))
		}
		t.ins.stream(stream)
		return
	}
	if now.Sub(t.lastFlush) < t.flushEvery-50*time.Millisecond {
		return
	}
	t.lastFlush = now
	for _, rr := range t.runs {
		for _, s := range rr.states {
			s.handoff.Store(true)
		}
	}
	t.asked = true
}

// printLine prints a live line: sysbench's for a step of one role, else
// each role's (or interleaved target's) rate, with spans[i], when > 0, the
// seconds role i ran in the line's span (its target's turns).
func printLine(out io.Writer, test string, threads int, at time.Duration, warm bool, span time.Duration,
	runs []*roleRun, windows []meter.Window, spans []float64, pct float64, suffix string) {
	secs := span.Seconds()
	phase := ""
	if warm {
		phase = " (warm-up)"
	}
	phase += suffix
	if len(runs) == 1 && runs[0].role.Name == "" {
		w := &windows[0]
		fmt.Fprintf(out, "[ %3.0fs ] %s thds: %d tps: %.2f qps: %.2f lat (ms,%g%%): %.3f max: %.3f err/s: %.2f%s\n",
			at.Seconds(), test, threads, float64(w.Events)/secs, float64(w.Statements)/secs, pct,
			ms(w.Quantile(pct/100)), ms(w.Max), float64(w.Errors)/secs, phase)
		return
	}
	line := fmt.Sprintf("[ %3.0fs ] %s", at.Seconds(), test)
	for i, rr := range runs {
		w := &windows[i]
		n, unit := w.Events, "/s"
		if rr.rows {
			n, unit = w.Rows, " rows/s"
		}
		name, secs := rr.role.Name, secs
		if rr.label != "" {
			name = strings.TrimSuffix(rr.label+"/"+name, "/")
		}
		if i < len(spans) && spans[i] > 0 {
			secs = spans[i]
		}
		line += fmt.Sprintf(" %s: %.1f%s max %.3f ms err %d", name, float64(n)/secs, unit, ms(w.Max), w.Errors)
	}
	fmt.Fprintln(out, line+phase)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
