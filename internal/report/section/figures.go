package section

import (
	"math"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/store"
)

// Median is the median of f over the repeats rs, NaN when there are none.
func Median(rs []store.Result, f func(store.Result) float64) float64 {
	return analysis.Median(Values(rs, f))
}

// Values extracts f from each of the repeats rs.
func Values(rs []store.Result, f func(store.Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// MiB is b bytes in MiB, or b itself when negative (a store sentinel:
// not measured, not readable).
func MiB(b int64) float64 {
	if b < 0 {
		return float64(b)
	}
	return float64(b) / (1 << 20)
}

// SumOf adds the server's and the client's figure; a server that is not
// measured (in-process engine) adds nothing, an unreadable one makes the
// sum unreadable.
func SumOf(server, client float64) float64 {
	switch {
	case server == store.NotReadable || client == store.NotReadable:
		return store.NotReadable
	case server == store.NotMeasured:
		return client
	}
	return server + client
}

// RelativeMarks says how a table of ratios to the base marks them without
// a verdict, for rows of the tests all, of which those in lower report a
// lower-is-better metric (latencies): + (green) at 1.05 and more and -
// (red) at 0.95 and less where more is better, the other way round where
// less is.
func RelativeMarks(all, lower []string) string {
	return byDirection(all, lower, "+ (green) >= 1.05 better, - (red) <= 0.95 worse, grey between",
		"+ (green) <= 0.95 better, - (red) >= 1.05 worse, grey between")
}

// VerdictLegend says on which side of 1 a table of ratios to the base puts
// its significant verdicts, for rows of the tests all, of which those in
// lower report a lower-is-better metric: - slower below 1 and + faster
// above where more is better, the other way round where less is (a
// latency ratio above 1 is slower).
func VerdictLegend(all, lower []string) string {
	return "significant verdicts, " + byDirection(all, lower, "- (slower, red) below 1, + (faster, green) above 1",
		"- (slower, red) above 1, + (faster, green) below 1")
}

// byDirection is higher for rows of the tests all whose metric is
// higher-is-better and lower for those in lower, naming the lower ones
// when the rows mix both.
func byDirection(all, lower []string, higher, lowerText string) string {
	switch {
	case len(lower) == 0:
		return higher
	case len(lower) == len(all):
		return "lower is better: " + lowerText
	}
	return higher + "; lower is better for " + strings.Join(lower, ", ") + ": " + lowerText
}

// palette is Okabe and Ito's colour-blind-safe set.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// Colour is the i-th colour of the palette the charts draw series in,
// repeating after the last.
func Colour(i int) string { return palette[i%len(palette)] }

// BaseOption returns the ECharts option every chart starts from: title,
// axes names, palette, tooltip and legend.
func BaseOption(title, xName, yName string) map[string]any {
	return map[string]any{
		"animation": false,
		"color":     palette,
		"title":     map[string]any{"text": title, "left": "center", "textStyle": map[string]any{"fontSize": 14}},
		"tooltip":   map[string]any{"trigger": "axis"},
		"legend":    map[string]any{"top": 24, "type": "scroll"},
		"grid":      map[string]any{"top": 64, "left": 70, "right": 30, "bottom": 70, "containLabel": true},
		"xAxis":     map[string]any{"name": xName, "nameLocation": "middle", "nameGap": 40},
		"yAxis":     map[string]any{"name": yName, "nameLocation": "middle", "nameGap": 55},
	}
}

// Num turns NaN and infinities into null, which JSON and ECharts accept, and
// keeps 4 significant digits: enough for a chart, and it keeps the page small
// without flattening sub-millisecond latencies to 0.
func Num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	if v == 0 {
		return 0.0
	}
	e := 3 - math.Floor(math.Log10(math.Abs(v)))
	if e < 0 {
		q := math.Pow(10, -e)
		return math.Round(v/q) * q
	}
	p := math.Pow(10, e)
	return math.Round(v*p) / p
}

// MaxSeriesPoints bounds each per-second series in a chart; longer series
// are averaged down so that a report of long runs stays small.
const MaxSeriesPoints = 600

// Downsample averages a long series into at most MaxSeriesPoints points.
func Downsample(ivs []store.Interval) []store.Interval {
	if len(ivs) <= MaxSeriesPoints {
		return ivs
	}
	step := (len(ivs) + MaxSeriesPoints - 1) / MaxSeriesPoints
	var out []store.Interval
	for i := 0; i < len(ivs); i += step {
		agg := ivs[i]
		for _, iv := range ivs[i+1 : min(i+step, len(ivs))] {
			agg.Statements += iv.Statements
			agg.Seconds += iv.Seconds
		}
		out = append(out, agg)
	}
	return out
}

// IntervalRate is one second's throughput in its result's metric, as the
// suite that declared the metric counts a second (metric.Metric.Series).
func IntervalRate(r store.Result, iv store.Interval) float64 {
	return metric.Of(r.Metric).Series(metric.Counts{Seconds: iv.Seconds, Events: iv.Events,
		Statements: iv.Statements, Rows: iv.Rows, RowsPerOp: r.RowsPerOp})
}
