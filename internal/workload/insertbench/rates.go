package insertbench

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// This file is the insert benchmark's report tables of response times and of
// insert-rate percentiles.

// rtBounds are docs/method.md 1.10's response-time buckets: a response counts in
// the first bucket whose bound it does not exceed.
var rtBounds = []struct {
	name  string
	bound time.Duration
}{
	{"256us", 256 * time.Microsecond}, {"1ms", time.Millisecond}, {"4ms", 4 * time.Millisecond},
	{"16ms", 16 * time.Millisecond}, {"64ms", 64 * time.Millisecond}, {"256ms", 256 * time.Millisecond},
	{"1s", time.Second}, {"4s", 4 * time.Second}, {"16s", 16 * time.Second},
}

// rtBuckets returns the share (percent) of responses in each bucket of the
// merged histograms, the last being "gt", and the max; ok is false when no
// histogram decodes.
func rtBuckets(rs []store.Result) (pct []float64, maxLat time.Duration, ok bool) {
	counts := make([]int64, len(rtBounds)+1)
	var total int64
	for _, r := range rs {
		if len(r.Histogram) == 0 {
			continue
		}
		h, err := hdr.Decode(r.Histogram)
		if err != nil {
			continue
		}
		ok = true
		maxLat = max(maxLat, r.Latency.Max)
		for _, b := range h.Distribution() {
			if b.Count == 0 {
				continue
			}
			v := time.Duration(b.From)
			i := sort.Search(len(rtBounds), func(i int) bool { return v <= rtBounds[i].bound })
			counts[i] += b.Count
			total += b.Count
		}
	}
	if !ok || total == 0 {
		return nil, 0, false
	}
	pct = make([]float64, len(counts))
	for i, c := range counts {
		pct[i] = 100 * float64(c) / float64(total)
	}
	return pct, maxLat, true
}

// ibResponseTimes are chart_rt.sh's tables, one per operation type: per
// step, each target's share of responses in each bucket (blank when none,
// "nonzero" when a share rounds to 0.000) and the max in seconds, red in the
// top quartile and green in the bottom one.
func ibResponseTimes(ib ibSteps, targets []string) []section.Table {
	var out []section.Table
	for _, op := range []struct{ name, plural, extra string }{
		{"insert", "inserts", "; in qr and qp steps an insert's time counts from its intended start, so a late start is not hidden"},
		{"delete", "deletes", ""},
		{"query", "queries", ""},
	} {
		t := section.Table{Title: "Insert Benchmark " + op.name + " response time",
			Legend: "% of " + op.plural + " per bucket (a response counts in the first bucket it does not exceed" + op.extra +
				"); max in seconds: - red in the top quartile, + green in the bottom one (docs/method.md 1.13)"}
		for _, b := range rtBounds {
			t.Columns = append(t.Columns, b.name)
		}
		t.Columns = append(t.Columns, "gt", "max s")
		for _, s := range ib.steps {
			role := op.name
			if role == "insert" && s == "l.x" {
				role = "index"
			}
			var rows []section.Row
			var maxes []float64
			for _, tg := range targets {
				pct, mx, ok := rtBuckets(ib.role(tg, s, role))
				if !ok {
					continue
				}
				row := section.Row{Group: s, Label: tg}
				for _, p := range pct {
					switch {
					case p == 0:
						row.Cells = append(row.Cells, section.TextCell(""))
					case p < 0.0005:
						row.Cells = append(row.Cells, section.TextCell("nonzero"))
					default:
						row.Cells = append(row.Cells, section.TextCell(fmt.Sprintf("%.3f", p)))
					}
				}
				row.Cells = append(row.Cells, section.NumberCell(mx.Seconds()))
				maxes = append(maxes, mx.Seconds())
				rows = append(rows, row)
			}
			toneQuartiles(rows, maxes)
			t.Rows = append(t.Rows, rows...)
		}
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// toneQuartiles marks the last cell of each row (lower is better): red in
// the top quartile of the range, green in the bottom one unless min >= 0.8
// max. A single row gets no tone.
func toneQuartiles(rows []section.Row, vals []float64) {
	if len(rows) < 2 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	gap := (hi - lo) / 4
	top, bottom := hi-gap, lo+gap
	if lo >= 0.8*hi {
		bottom = math.Inf(-1)
	}
	for i, v := range vals {
		c := &rows[i].Cells[len(rows[i].Cells)-1]
		switch {
		case v >= top && gap > 0:
			c.Tone = section.ToneBad
		case v <= bottom:
			c.Tone = section.ToneGood
		}
	}
}

// ratePercentiles are docs/method.md 1.11's positions: per-second rates sorted in
// descending order, the value at position round(p * lines), only with at
// least 10 lines. p99 is thus the rate that 99% of the seconds met.
var ratePercentiles = []float64{0.50, 0.75, 0.90, 0.95, 0.99}

// RateAtPercentile returns the per-second rate that the share p of the
// seconds met or exceeded, or NaN with fewer than 10 seconds.
func RateAtPercentile(rates []float64, p float64) float64 {
	if len(rates) < 10 {
		return math.NaN()
	}
	s := append([]float64(nil), rates...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	i := int(math.Round(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// perSecondRates are the full measured seconds' rates of a result in its
// metric: rows/s for inserts, statements/s for queries.
func perSecondRates(r store.Result) []float64 {
	var out []float64
	for _, iv := range r.Intervals {
		if iv.Sec < 0 || iv.Seconds < 0.9 {
			continue
		}
		n := iv.Statements
		if r.Metric == IPS.Name {
			n = iv.Rows
		}
		out = append(out, float64(n)/iv.Seconds)
	}
	return out
}

// ibRatePercentiles is the throughput low-watermark table of docs/method.md 1.11
// for each step's headline rate.
func ibRatePercentiles(ib ibSteps, targets []string) section.Table {
	t := section.Table{Title: "Insert Benchmark per-second rate at percentile",
		Legend: "throughput low-watermarks (docs/method.md 1.11): per-second inserts/s (load steps) or queries/s (qr, qp) " +
			"sorted in descending order, the value at position round(p x seconds); p99 is the rate 99% of the seconds " +
			"met; n/a under 10 seconds; median over repeats", Columns: []string{"seconds", "p50", "p75", "p90", "p95", "p99"}}
	for _, s := range ib.steps {
		for _, tg := range targets {
			rs := ib.role(tg, s, headline(s))
			if len(rs) == 0 {
				continue
			}
			row := section.Row{Group: s, Label: tg}
			row.Cells = append(row.Cells, section.NumberCell(section.Median(rs, func(r store.Result) float64 { return float64(len(perSecondRates(r))) })))
			for _, p := range ratePercentiles {
				row.Cells = append(row.Cells, section.NumberCell(section.Median(rs, func(r store.Result) float64 {
					return RateAtPercentile(perSecondRates(r), p)
				})))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}
