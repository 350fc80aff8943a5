package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

type chartDef struct {
	chart  htmlChart
	option map[string]any
}

// buildCharts makes the charts of methodology-style (docs/method.md) reports: relative
// throughput per group, throughput per second, throughput against threads,
// box plots of the steady part, CPU per operation against the base, and
// latency percentiles.
func buildCharts(d *Data) []chartDef {
	s, keys, groups := d.samples()
	targets := d.targets()
	var out []chartDef
	label, threadCounts := labeler(keys)
	var groupNames []string
	byGroup := map[string][]cellKey{}
	for _, k := range keys {
		g := groups[k]
		if _, ok := byGroup[g]; !ok {
			groupNames = append(groupNames, g)
		}
		byGroup[g] = append(byGroup[g], k)
	}
	out = append(out, relativeCharts(s, targets, groupNames, byGroup, label)...)
	out = append(out, perSecondCharts(s, keys, targets, label)...)
	out = append(out, speedCharts(keys, targets, s, label)...)
	out = append(out, threadCharts(s, keys, targets, threadCounts)...)
	out = append(out, sweepCharts(d, keys, s, label)...)
	out = append(out, boxCharts(s, keys, targets, label)...)
	out = append(out, costCharts(s, keys, targets, label)...)
	out = append(out, latencyCharts(s, targets, groupNames, byGroup, label)...)
	for _, c := range chartsOf(d) {
		out = append(out, chartDef{htmlChart{Title: c.Title, Height: c.Height}, c.Option})
	}
	return out
}

// relativeCharts are the relative throughput (or the group's metrics'
// quantity) per group, one bar per non-base target.
func relativeCharts(s samples, targets, groupNames []string, byGroup map[string][]cellKey, label func(cellKey) string) []chartDef {
	var out []chartDef
	tput := func(r store.Result) float64 { return r.Throughput() }
	// Relative throughput (or the group's metrics' quantity) per group, one
	// bar per non-base target.
	if len(targets) > 1 {
		for _, g := range groupNames {
			q := orDefault(quantityOf(s, byGroup[g]), "values")
			o := section.BaseOption("Relative "+q+": "+orDefault(g, "tests")+" (target / "+targets[0]+")",
				"test", "relative "+q+" (1 = base)")
			var cats []string
			for _, k := range byGroup[g] {
				cats = append(cats, label(k))
			}
			categoryAxis(o, cats, 30)
			var series []any
			for ti, t := range targets[1:] {
				var vals []any
				for _, k := range byGroup[g] {
					// A stalled run is no rate: no bar where a side has only those.
					vals = append(vals, section.Num(analysis.Ratio(analysis.Median(section.Values(withoutStalls(s[t][k]), tput)),
						analysis.Median(section.Values(withoutStalls(s[targets[0]][k]), tput)))))
				}
				ser := map[string]any{"name": t, "type": "bar", "data": vals}
				if ti == 0 {
					ser["markLine"] = map[string]any{"silent": true, "symbol": "none",
						"label": map[string]any{"formatter": targets[0]},
						"data":  []any{map[string]any{"yAxis": 1}}}
				}
				series = append(series, ser)
			}
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "relative " + q, Height: 380}, o})
		}
	}
	return out
}

// perSecondCharts are the throughput per second of each test, all targets on
// one chart.
func perSecondCharts(s samples, keys []cellKey, targets []string, label func(cellKey) string) []chartDef {
	var out []chartDef
	// Throughput per second, all targets of a test on one chart (first
	// repeat); seconds before 0 are warm-up and are shaded.
	for _, k := range keys {
		o := section.BaseOption("Throughput per second: "+label(k), "second of the step (shaded: warm-up)", unitOf(s, k)+" per second")
		o["xAxis"].(map[string]any)["type"] = "value"
		var series []any
		first, last := 0, 0
		for _, t := range targets {
			rs := s[t][k]
			if len(rs) == 0 {
				continue
			}
			var pts []any
			for _, iv := range section.Downsample(rs[0].Intervals) {
				first, last = min(first, iv.Sec), max(last, iv.Sec)
				pts = append(pts, []any{iv.Sec, section.Num(section.IntervalRate(rs[0], iv))})
			}
			// Dots only for short series, where single seconds matter.
			series = append(series, map[string]any{"name": t, "type": "line", "showSymbol": len(pts) <= 30, "data": pts})
		}
		if first < 0 && len(series) > 0 {
			series[0].(map[string]any)["markArea"] = warmupArea(first)
		}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "per second", Height: 300}, o})
		// The engine's internals of the same seconds, under it.
		if c := internalsChart(k, targets, s, label(k), first, last, largestInternalsChange(k, targets, s)); c != nil {
			// The same seconds at the same place: one x range, and plot
			// areas at the same left edge (labels of any width inside).
			x := o["xAxis"].(map[string]any)
			x["min"], x["max"] = first, last
			g := o["grid"].(map[string]any)
			g["left"], g["containLabel"] = internalsLeft, false
			out = append(out, *c)
		}
	}
	return out
}

// threadCharts are each test's headline against its thread counts.
func threadCharts(s samples, keys []cellKey, targets []string, threadCounts map[int]bool) []chartDef {
	var out []chartDef
	tput := func(r store.Result) float64 { return r.Throughput() }
	// Throughput against thread count.
	if len(threadCounts) > 1 {
		tests := map[string][]cellKey{}
		var names []string
		for _, k := range keys {
			if _, ok := tests[k.test]; !ok {
				names = append(names, k.test)
			}
			tests[k.test] = append(tests[k.test], k)
		}
		for _, name := range names {
			if len(tests[name]) < 2 {
				continue // this test ran at one thread count only
			}
			// The axis is the test's headline metric: throughput, or
			// connect's latency.
			m := s.metricOf(tests[name][0])
			q := m.QuantityOf()
			o := section.BaseOption(strings.ToUpper(q[:1])+q[1:]+" against threads: "+name, "threads (log 2 scale)", m.Unit+" (median over repeats)")
			lo, hi := tests[name][0].threads, tests[name][len(tests[name])-1].threads
			x := o["xAxis"].(map[string]any)
			x["type"], x["logBase"], x["min"], x["max"] = "log", 2, lo, hi
			var series []any
			for _, t := range targets {
				var pts []any
				for _, k := range tests[name] {
					pts = append(pts, []any{k.threads, section.Num(analysis.Median(section.Values(s[t][k], tput)))})
				}
				series = append(series, map[string]any{"name": t, "type": "line", "data": pts})
			}
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "threads", Height: 300}, o})
		}
	}
	return out
}

// boxCharts are box plots of each test's per-second throughput over the last
// half of each run.
func boxCharts(s samples, keys []cellKey, targets []string, label func(cellKey) string) []chartDef {
	var out []chartDef
	// Box plots of per-second throughput over the last half of each run.
	for _, k := range keys {
		o := section.BaseOption("Per-second throughput, last half of the measured time: "+label(k), "target", unitOf(s, k)+" per second")
		o["tooltip"] = map[string]any{"trigger": "item"}
		o["xAxis"].(map[string]any)["type"] = "category"
		o["xAxis"].(map[string]any)["data"] = targets
		var boxes []any
		for _, t := range targets {
			var xs []float64
			for _, r := range s[t][k] {
				var measured []store.Interval
				for _, iv := range r.Intervals {
					if iv.Sec >= 0 && iv.Seconds >= 0.5 {
						measured = append(measured, iv)
					}
				}
				for _, iv := range measured[len(measured)/2:] {
					xs = append(xs, section.IntervalRate(r, iv))
				}
			}
			boxes = append(boxes, fiveNumbers(xs))
		}
		o["series"] = []any{map[string]any{"name": "per-second throughput", "type": "boxplot", "data": boxes}}
		out = append(out, chartDef{htmlChart{Title: "box plot", Height: 300}, o})
	}
	return out
}

// costCharts are the costs per operation relative to the base, one chart per
// cost measured.
func costCharts(s samples, keys []cellKey, targets []string, label func(cellKey) string) []chartDef {
	var out []chartDef
	// Cost per operation relative to the base (docs/method.md 2.7, sum_met.sh's
	// relative block), one chart per cost, only for costs that were measured.
	if len(targets) > 1 {
		var cats []string
		for _, k := range keys {
			cats = append(cats, label(k))
		}
		for _, m := range effMetrics {
			if !effCharted[m.column] {
				continue
			}
			series, measured := effRelative(s, keys, targets, m.value)
			if !measured {
				continue
			}
			o := section.BaseOption("Relative "+m.column+" (target / "+targets[0]+"): lower is better",
				"test", "relative "+m.column+" (1 = base)")
			categoryAxis(o, cats, 45)
			o["series"] = series
			out = append(out, chartDef{htmlChart{Title: "efficiency", Height: 420}, o})
		}
	}
	return out
}

// latencyCharts are each group's latency percentiles per test (p50 and p99,
// median over repeats), on a log scale.
func latencyCharts(s samples, targets, groupNames []string, byGroup map[string][]cellKey, label func(cellKey) string) []chartDef {
	var out []chartDef
	// Latency percentiles per test (median over repeats), log scale.
	for _, g := range groupNames {
		o := section.BaseOption("Latency per event: "+orDefault(g, "tests")+" (p50 and p99)", "test", "milliseconds (log scale)")
		o["yAxis"].(map[string]any)["type"] = "log"
		var cats []string
		for _, k := range byGroup[g] {
			cats = append(cats, label(k))
		}
		categoryAxis(o, cats, 30)
		var series []any
		lowest := math.Inf(1)
		for ti, t := range targets {
			colour := section.Colour(ti)
			for qi, q := range []struct {
				name string
				f    func(store.Result) float64
			}{
				{"p50", func(r store.Result) float64 { return latencyMS(r.Latency.P50) }},
				{"p99", func(r store.Result) float64 { return latencyMS(r.Latency.P99) }},
			} {
				var vals []any
				for _, k := range byGroup[g] {
					v := analysis.Median(section.Values(s[t][k], q.f))
					if v > 0 {
						lowest = min(lowest, v)
					}
					vals = append(vals, section.Num(v))
				}
				// A target keeps its colour; p99 is the paler bar with a border.
				style := map[string]any{"color": colour, "borderColor": colour}
				if qi == 1 {
					style["opacity"] = 0.45
				}
				series = append(series, map[string]any{"name": t + " " + q.name, "type": "bar", "data": vals, "itemStyle": style})
			}
		}
		// Bars on a log axis grow from its start value (1 by default), so
		// start it at the power of 10 below the smallest latency.
		if !math.IsInf(lowest, 1) {
			o["yAxis"].(map[string]any)["startValue"] = math.Pow(10, math.Floor(math.Log10(lowest)))
		}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "latency", Height: 380}, o})
	}
	return out
}

// unitOf names what a row's per-second charts count.
func unitOf(s samples, k cellKey) string {
	for _, byKey := range s {
		for _, r := range byKey[k] {
			return metric.Of(r.Metric).SeriesUnit
		}
	}
	return metric.QPS.SeriesUnit
}

// categoryAxis makes o's x axis a category axis of cats with labels turned by
// rotate degrees, and moves the axis name below the longest turned label so
// the two do not overlap.
func categoryAxis(o map[string]any, cats []string, rotate float64) {
	longest := 0
	for _, c := range cats {
		longest = max(longest, utf8.RuneCountInString(c))
	}
	gap := min(20+int(float64(longest)*6.5*math.Sin(rotate*math.Pi/180)), 160)
	x := o["xAxis"].(map[string]any)
	x["type"], x["data"], x["nameGap"] = "category", cats, gap
	x["axisLabel"] = map[string]any{"rotate": rotate}
	o["grid"].(map[string]any)["bottom"] = gap + 20
}

// effCharted names the per-operation costs drawn relative to the base; the
// issue asks for CPU and KB per operation, the tables hold the rest.
var effCharted = map[string]bool{"cpu us/op total": true, "KB read/op": true, "KB written/op": true}

// effRelative returns one bar series per non-base target of the ratio of a
// cost per operation to the base's (medians over repeats), and whether any
// ratio could be computed: results without efficiency figures give none.
func effRelative(s samples, keys []cellKey, targets []string, f func(store.Result) float64) ([]any, bool) {
	measured := false
	var series []any
	for _, t := range targets[1:] {
		var vals []any
		for _, k := range keys {
			base, bc := effValues(s[targets[0]][k], f)
			other, oc := effValues(s[t][k], f)
			if bc != nil || oc != nil {
				vals = append(vals, nil)
				continue
			}
			v := analysis.Ratio(analysis.Median(other), analysis.Median(base))
			measured = measured || !math.IsNaN(v)
			vals = append(vals, section.Num(v))
		}
		series = append(series, map[string]any{"name": t, "type": "bar", "data": vals})
	}
	return series, measured
}

// warmupArea shades the warm-up seconds, from first (negative) to 0.
func warmupArea(first int) map[string]any {
	return map[string]any{
		"silent":    true,
		"itemStyle": map[string]any{"color": "rgba(120, 120, 120, 0.15)"},
		"label":     map[string]any{"position": "insideTop", "color": "#555"},
		"data":      []any{[]any{map[string]any{"name": "warm-up", "xAxis": first}, map[string]any{"xAxis": 0}}},
	}
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// fiveNumbers returns min, lower quartile, median, upper quartile and max.
func fiveNumbers(xs []float64) []any {
	if len(xs) == 0 {
		return []any{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		pos := p * float64(len(s)-1)
		lo := int(math.Floor(pos))
		hi := int(math.Ceil(pos))
		return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
	}
	return []any{section.Num(s[0]), section.Num(q(0.25)), section.Num(q(0.5)), section.Num(q(0.75)), section.Num(s[len(s)-1])}
}

// speedCharts draws, for each test whose first repeats have per-second CPU
// speed (the speed probes' mean rate in each second), that speed against
// the second, as a share of the median second of all the targets drawn:
// a dip in throughput that the CPU speed shares came from the machine
// (the host slowed its CPUs), not the database.
func speedCharts(keys []cellKey, targets []string, s samples, label func(cellKey) string) []chartDef {
	var out []chartDef
	for _, k := range keys {
		pts := map[string][][2]float64{}
		var all []float64
		for _, t := range targets {
			rs := s[t][k]
			if len(rs) == 0 {
				continue
			}
			pts[t] = secondSpeeds(rs[0].Intervals)
			for _, p := range pts[t] {
				all = append(all, p[1])
			}
		}
		if len(all) == 0 {
			continue
		}
		med := analysis.Median(all)
		o := section.BaseOption("CPU speed per second: "+label(k)+" (the speed probes' rate / the median second's)",
			"second of the step", "CPU speed (1 = median second)")
		o["xAxis"].(map[string]any)["type"] = "value"
		o["yAxis"].(map[string]any)["scale"] = true
		var series []any
		for _, t := range targets {
			if len(pts[t]) == 0 {
				continue
			}
			var data []any
			for _, p := range pts[t] {
				data = append(data, []any{p[0], section.Num(p[1] / med)})
			}
			series = append(series, map[string]any{"name": t, "type": "line", "showSymbol": len(data) <= 30, "data": data})
		}
		series[0].(map[string]any)["markLine"] = map[string]any{"silent": true, "symbol": "none",
			"label": map[string]any{"formatter": fmt.Sprintf("slow below x%.2f", noise.SlowCPUFactor)},
			"data":  []any{map[string]any{"yAxis": noise.SlowCPUFactor}}}
		o["series"] = series
		out = append(out, chartDef{htmlChart{Title: "CPU speed", Height: 260}, o})
	}
	return out
}

// secondSpeeds are the measured seconds of ivs that have a CPU speed, as
// (second, speed) pairs; a long series is averaged down to
// section.MaxSeriesPoints points.
func secondSpeeds(ivs []store.Interval) [][2]float64 {
	var pts [][2]float64
	for _, iv := range ivs {
		if iv.Sec >= 0 && iv.Load != nil && iv.Load.CPUSpeed > 0 {
			pts = append(pts, [2]float64{float64(iv.Sec), iv.Load.CPUSpeed})
		}
	}
	if len(pts) <= section.MaxSeriesPoints {
		return pts
	}
	step := (len(pts) + section.MaxSeriesPoints - 1) / section.MaxSeriesPoints
	var out [][2]float64
	for i := 0; i < len(pts); i += step {
		group := pts[i:min(i+step, len(pts))]
		var sum float64
		for _, p := range group {
			sum += p[1]
		}
		out = append(out, [2]float64{group[0][0], sum / float64(len(group))})
	}
	return out
}
