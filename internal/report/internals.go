package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// The engine's internals per second (store.Result.Internals): charts under
// each test's throughput per second, and a note naming the counter or
// gauge that changed most where throughput changed.

// chartedCounters are the engine counters whose rates the HTML page draws
// per second whenever they moved (every gauge that moved is drawn): the
// flushing, logging and compaction work behind throughput waves. Adding an
// engine's counter to the charts is adding its name here (the names are
// engine.StatsReader's).
var chartedCounters = []string{
	// InnoDB: pages flushed (all, and from the LRU's end), redo bytes,
	// waits for log buffer space and for row locks.
	"status.Innodb_buffer_pool_pages_flushed", "status.Innodb_buffer_pool_pages_lru_flushed",
	"status.Innodb_os_log_written", "status.Innodb_log_waits", "status.Innodb_row_lock_waits",
	"status.Innodb_buffer_pool_wait_free",
	// PostgreSQL: WAL bytes, checkpoints and the buffers the checkpointer,
	// the background writer and the backends wrote.
	"pg_exact.wal_insert_bytes", "pg_stat_bgwriter.checkpoints_req", "pg_stat_bgwriter.checkpoints_timed",
	"pg_stat_bgwriter.buffers_checkpoint", "pg_stat_bgwriter.buffers_clean", "pg_stat_bgwriter.buffers_backend",
	"pg_stat_checkpointer.buffers_written", "pg_stat_wal.wal_buffers_full",
	// LSMs: flushes, compactions, stalls.
	"pebble.flush_bytes", "pebble.compact_write_bytes", "pebble.stall_us",
	// SQLite: WAL restarts after checkpoints.
	"sqlite.wal_restarts",
}

// maxInternalsPanels bounds the panels of one test's internals chart.
const maxInternalsPanels = 12

// internalsLeft is where the plot areas of a test's throughput per second
// chart and its internals panels start, in pixels, so that a second is at
// the same place in both: room for a y axis label of ten digits.
const internalsLeft = 110

// internalsPanel is one series name drawn in a test's internals chart.
type internalsPanel struct {
	name  string
	gauge bool
}

// internalsPanels picks what a test's chart draws, from the first repeat
// of each target: every gauge whose value changed at some second, and
// each charted counter (plus extra, the note's counter) whose rate was
// above 0 somewhere; gauges first, each kind by name.
func internalsPanels(k cellKey, targets []string, s samples, extra string) []internalsPanel {
	type seen struct {
		gauge, moved bool
		first        float64
		any          bool
	}
	byName := map[string]*seen{}
	for _, t := range targets {
		rs := s[t][k]
		if len(rs) == 0 {
			continue
		}
		for _, es := range rs[0].Internals {
			x := byName[es.Name]
			if x == nil {
				x = &seen{gauge: es.Gauge}
				byName[es.Name] = x
			}
			for _, p := range es.Points {
				if !x.any {
					x.first, x.any = p.Value, true
				}
				if es.Gauge && p.Value != x.first || !es.Gauge && p.Value > 0 {
					x.moved = true
				}
			}
		}
	}
	var out []internalsPanel
	for name, x := range byName {
		if !x.moved || !x.gauge && !slices.Contains(chartedCounters, name) && name != extra {
			continue
		}
		out = append(out, internalsPanel{name: name, gauge: x.gauge})
	}
	slices.SortFunc(out, func(a, b internalsPanel) int {
		if a.gauge != b.gauge {
			if a.gauge {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out[:min(len(out), maxInternalsPanels)]
}

// internalsChart draws a test's engine internals per second as panels
// stacked under one another, one per series, one line per target (first
// repeat), on the seconds axis of the test's throughput per second chart
// (first is its first second, negative with a warm-up); nil when no
// target has a series that moved.
func internalsChart(k cellKey, targets []string, s samples, title string, first, last int, extra string) *chartDef {
	panels := internalsPanels(k, targets, s, extra)
	if len(panels) == 0 {
		return nil
	}
	const top, panelH, gap = 56, 110, 34
	var titles, grids, xs, ys, series []any
	titles = append(titles, map[string]any{"text": "Engine internals per second: " + title, "left": "center",
		"textStyle": map[string]any{"fontSize": 14}})
	for i, p := range panels {
		y := top + i*(panelH+gap)
		unit := "per second"
		if p.gauge {
			unit = "value"
		}
		titles = append(titles, map[string]any{"text": shortStatName(p.name) + " (" + unit + ")", "left": internalsLeft, "top": y - 20,
			"textStyle": map[string]any{"fontSize": 12, "fontWeight": "normal"}})
		grids = append(grids, map[string]any{"top": y, "height": panelH - 14, "left": internalsLeft, "right": 30, "containLabel": false})
		xs = append(xs, map[string]any{"type": "value", "gridIndex": i, "min": first, "max": last,
			"axisLabel": map[string]any{"show": i == len(panels)-1}})
		ys = append(ys, map[string]any{"type": "value", "gridIndex": i, "splitNumber": 2, "scale": p.gauge})
		for _, t := range targets {
			rs := s[t][k]
			if len(rs) == 0 {
				continue
			}
			for _, es := range rs[0].Internals {
				if es.Name != p.name {
					continue
				}
				var pts []any
				for _, pt := range downsamplePoints(es.Points) {
					pts = append(pts, []any{pt.Sec, section.Num(pt.Value)})
				}
				series = append(series, map[string]any{"name": t, "type": "line", "xAxisIndex": i, "yAxisIndex": i,
					"showSymbol": len(pts) <= 30, "data": pts})
			}
		}
	}
	o := section.BaseOption("", "", "")
	o["title"], o["grid"], o["xAxis"], o["yAxis"], o["series"] = titles, grids, xs, ys, series
	o["legend"] = map[string]any{"top": 22, "type": "scroll"}
	o["axisPointer"] = map[string]any{"link": []any{map[string]any{"xAxisIndex": "all"}}}
	return &chartDef{htmlChart{Title: "engine internals", Height: top + len(panels)*(panelH+gap) + 10}, o}
}

// downsamplePoints averages a long series into at most
// section.MaxSeriesPoints points, as the throughput series are.
func downsamplePoints(ps []store.EnginePoint) []store.EnginePoint {
	if len(ps) <= section.MaxSeriesPoints {
		return ps
	}
	step := (len(ps) + section.MaxSeriesPoints - 1) / section.MaxSeriesPoints
	var out []store.EnginePoint
	for i := 0; i < len(ps); i += step {
		chunk := ps[i:min(i+step, len(ps))]
		sum := 0.0
		for _, p := range chunk {
			sum += p.Value
		}
		out = append(out, store.EnginePoint{Sec: chunk[0].Sec, Value: sum / float64(len(chunk))})
	}
	return out
}

// shortStatName is a counter's name within its source
// ("Innodb_checkpoint_age").
func shortStatName(name string) string {
	if _, after, ok := strings.Cut(name, "."); ok {
		return after
	}
	return name
}

// internalsChange is how much one counter (per operation) or gauge (mean
// per second) of a target differs from the base's in one row, and how its
// per-second series moved with throughput.
type internalsChange struct {
	name        string
	gauge       bool
	base, other float64
	// rho is the rank correlation of the series' value with throughput
	// second by second within each step (internalsRho), NaN when it has no
	// side of at least minCorrelationSeconds; seconds counts the seconds
	// of the side it comes from.
	rho     float64
	seconds int
}

// ratioScore orders changes by size: the larger |log ratio|, the larger
// the change; a figure that appears from 0 counts as the largest.
func (c internalsChange) ratioScore() float64 {
	if c.base == 0 {
		return math.Inf(1)
	}
	return math.Abs(math.Log(c.other / c.base))
}

// explains says the change's series fell as throughput rose (and rose as
// it fell) over the seconds of a step: work that competes with the
// workload's, or a wait, rather than work the operations do (which rises
// with throughput).
func (c internalsChange) explains() bool { return c.rho <= -explainRho }

func (c internalsChange) String() string {
	what := "per op"
	if c.gauge {
		what = "mean per second"
	}
	var out string
	if c.base == 0 {
		out = fmt.Sprintf("%s %s from 0 to %.3g", shortStatName(c.name), what, c.other)
	} else {
		out = fmt.Sprintf("%s %s %.2fx (%.3g to %.3g)", shortStatName(c.name), what, c.other/c.base, c.base, c.other)
	}
	if !math.IsNaN(c.rho) {
		out += fmt.Sprintf(", rank correlation with throughput per second %.2f over %d s", c.rho, c.seconds)
	}
	return out
}

// minInternalsPerOp and minInternalsGauge are the least a counter per
// operation or a gauge's mean must reach on one side to be named: below,
// a ratio of tiny figures (a counter that moved once) says nothing.
const (
	minInternalsPerOp = 0.01
	minInternalsGauge = 1
)

// explainRho is how strongly a series must move against throughput to be
// named as what explains a change (a rank correlation at or below its
// negative); minCorrelationSeconds is the fewest paired seconds of a side
// that give one. A rank correlation of 0 spreads by about 1/sqrt(n-1), so
// at 25 seconds -0.4 is two of its standard errors from 0.
const (
	explainRho            = 0.4
	minCorrelationSeconds = 25
)

// internalsChanges are the engine figures of row k that differ between the
// base and target: counters per operation (the step's growth,
// store.EngineStatFact, or the sum of its per-second series where the step
// stored no growth, as an interleaved one), gauges as their mean over the
// measured seconds; each the median over repeats. Those whose series move
// against throughput come first, the strongest first (explains); then the
// others, the largest ratio first (docs/measurement.md, "Engine internals
// per second").
func internalsChanges(k cellKey, base, target string, s samples) []internalsChange {
	var out []internalsChange
	add := func(b, o map[string]float64, gauge bool, least float64) {
		for name, bv := range b {
			ov, ok := o[name]
			if !ok || max(bv, ov) < least || bv == ov {
				continue
			}
			c := internalsChange{name: name, gauge: gauge, base: bv, other: ov}
			c.rho, c.seconds = internalsRho(name, s[base][k], s[target][k])
			out = append(out, c)
		}
	}
	add(internalsPerOp(s[base][k]), internalsPerOp(s[target][k]), false, minInternalsPerOp)
	add(gaugeMeans(s[base][k]), gaugeMeans(s[target][k]), true, minInternalsGauge)
	slices.SortFunc(out, func(a, b internalsChange) int {
		switch {
		case a.explains() && !b.explains():
			return -1
		case b.explains() && !a.explains():
			return 1
		case a.explains():
			if c := cmpFloat(a.rho, b.rho); c != 0 {
				return c
			}
		}
		if c := -cmpFloat(a.ratioScore(), b.ratioScore()); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// internalsPerOp is each engine counter's median per operation over rs:
// the step's stored growth, or the sum of its series' rates (one per
// second) where it stored none.
func internalsPerOp(rs []store.Result) map[string]float64 {
	vals := map[string][]float64{}
	for _, r := range rs {
		seen := map[string]bool{}
		for f, v := range r.Facts {
			if name, ok := store.EngineStatName(f); ok {
				if x := perOp(r, v, 1); x >= 0 && !math.IsNaN(x) {
					vals[name] = append(vals[name], x)
					seen[name] = true
				}
			}
		}
		for _, es := range r.Internals {
			if es.Gauge || seen[es.Name] || r.Statements <= 0 {
				continue
			}
			sum := 0.0
			for _, p := range es.Points {
				sum += p.Value
			}
			vals[es.Name] = append(vals[es.Name], sum/float64(r.Statements))
		}
	}
	return medians(vals)
}

// gaugeMeans is each engine gauge's median over rs of its mean over the
// measured seconds.
func gaugeMeans(rs []store.Result) map[string]float64 {
	vals := map[string][]float64{}
	for _, r := range rs {
		for _, es := range r.Internals {
			if !es.Gauge || len(es.Points) == 0 {
				continue
			}
			sum := 0.0
			for _, p := range es.Points {
				sum += p.Value
			}
			vals[es.Name] = append(vals[es.Name], sum/float64(len(es.Points)))
		}
	}
	return medians(vals)
}

func medians(vals map[string][]float64) map[string]float64 {
	out := map[string]float64{}
	for n, v := range vals {
		out[n] = analysis.Median(v)
	}
	return out
}

// internalsRho is how consistently series name moved against throughput
// within the steps of either side: for each side (a target's repeats) with
// at least minCorrelationSeconds paired seconds, the rank correlation of
// the series' value with throughput second by second, each repeat ranked
// on its own (analysis.SpearmanWithin), so that one target being faster
// than the other adds nothing by itself; the lower of the two sides' (the
// waves are often in one target only), with that side's seconds. NaN when
// no side has a correlation.
func internalsRho(name string, sides ...[]store.Result) (float64, int) {
	rho, secs := math.NaN(), 0
	for _, rs := range sides {
		var xs, ys [][]float64
		n := 0
		for _, r := range rs {
			x, y := seriesAgainstThroughput(name, r)
			xs, ys, n = append(xs, x), append(ys, y), n+len(x)
		}
		if n < minCorrelationSeconds {
			continue
		}
		if v := analysis.SpearmanWithin(xs, ys); !math.IsNaN(v) && (math.IsNaN(rho) || v < rho) {
			rho, secs = v, n
		}
	}
	return rho, secs
}

// seriesAgainstThroughput pairs series name's value in each measured
// second of r with the throughput of the same second
// (section.IntervalRate). Seconds with under half a second of measured
// time (of the target's turns when interleaved) are left out.
func seriesAgainstThroughput(name string, r store.Result) (x, y []float64) {
	at := map[int]float64{}
	for _, es := range r.Internals {
		if es.Name == name {
			for _, p := range es.Points {
				at[p.Sec] = p.Value
			}
		}
	}
	if len(at) == 0 {
		return nil, nil
	}
	least := 0.5 / max(1, r.Facts[store.FactInterleaveTargets])
	for _, iv := range r.Intervals {
		v, ok := at[iv.Sec]
		if iv.Sec < 0 || iv.Seconds < least || !ok {
			continue
		}
		x, y = append(x, v), append(y, section.IntervalRate(r, iv))
	}
	return x, y
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// internalsChangeMin is the least relative throughput change for which,
// without a verdict beyond noise, the note names the engine's largest
// change.
const internalsChangeMin = 0.05

// internalsNotes name, for every row and target whose throughput changed
// (a verdict of slower or faster, or a ratio at least internalsChangeMin
// from 1 where the repeats cannot decide), the engine counter or gauge
// that best explains it (internalsChanges), and the next one.
func internalsNotes(v *view) []string {
	if len(v.targets) < 2 {
		return nil
	}
	var out []string
	for _, c := range v.compare() {
		changed := c.Verdict.Outcome == analysis.Slower || c.Verdict.Outcome == analysis.Faster ||
			c.Verdict.Outcome == analysis.Unknown && math.Abs(c.Verdict.Ratio-1) >= internalsChangeMin
		if !changed || math.IsNaN(c.Verdict.Ratio) {
			continue
		}
		k := cellKey{test: c.Test, threads: c.Threads}
		ch := internalsChanges(k, v.targets[0], c.Target, v.s)
		if len(ch) == 0 {
			continue
		}
		what := "the change that moved against throughput most is"
		if !ch[0].explains() {
			what = "no engine series moved against throughput; the largest change is"
		}
		n := fmt.Sprintf("engine internals: %s on %s, %s %.2fx of %s: %s %s", v.label(k), c.Target,
			c.Metric.QuantityOf(), c.Verdict.Ratio, v.targets[0], what, ch[0])
		if len(ch) > 1 {
			n += "; next " + ch[1].String()
		}
		out = append(out, n)
	}
	return out
}

// largestInternalsChange is the counter or gauge the notes name for row k
// (against the first target that differs), so that the row's chart draws
// it; "" when none.
func largestInternalsChange(k cellKey, targets []string, s samples) string {
	for _, t := range targets[min(1, len(targets)):] {
		if ch := internalsChanges(k, targets[0], t, s); len(ch) > 0 {
			return ch[0].name
		}
	}
	return ""
}
