package report

import (
	"fmt"
	"strings"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// stabilityNotes flag measured steps whose per-second throughput was
// unstable (analysis.Stability: variation, stalls, waves, no steady state),
// naming the seconds that stalled and their worst latency; StallNotes name
// the steps that completed no operation or overran. A step whose suite
// planned a disruption in it (section.Sections.Planned: a node killed on
// purpose) is not called unstable: its dip is what it measures.
func stabilityNotes(d *Data, planned map[string]string) []string {
	var out []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.Action || r.Warm || len(r.Intervals) == 0 {
				continue
			}
			if _, ok := planned[r.Test]; ok {
				continue
			}
			var series []float64
			var secs []store.Interval
			for _, iv := range r.Intervals {
				if iv.Sec >= 0 && iv.Seconds >= 0.5 {
					series = append(series, float64(iv.Statements)/iv.Seconds)
					secs = append(secs, iv)
				}
			}
			s := analysis.Stability(series)
			if s.Unstable {
				out = append(out, fmt.Sprintf("unstable: %s @%d on %s (repeat %d): %s%s", r.Test, r.Threads, run.Target,
					run.Repeat, strings.Join(s.Reasons, "; "), stallDetail(secs, series, s.Median)))
			}
		}
	}
	const maxNotes = 15
	if len(out) > maxNotes {
		out = append(out[:maxNotes], fmt.Sprintf("... and %d more unstable steps", len(out)-maxNotes))
	}
	return out
}

// stallDetail names the seconds of a step whose throughput fell below
// analysis.StallFraction of its median second (ranges of the step's
// measured seconds, from 0) and the worst latency any of them saw, so a
// reader can find the stall in the per-second CSV and chart: "; stalled
// seconds 12-18 (7 s), worst latency 7008 ms in them". Empty when no second
// stalled.
func stallDetail(secs []store.Interval, series []float64, median float64) string {
	limit := analysis.StallFraction * median
	var ranges []string
	var worst time.Duration
	n, start, prev := 0, -1, -1
	flush := func() {
		if start < 0 {
			return
		}
		if start == prev {
			ranges = append(ranges, fmt.Sprint(start))
		} else {
			ranges = append(ranges, fmt.Sprintf("%d-%d", start, prev))
		}
		start = -1
	}
	for i, v := range series {
		if v >= limit {
			continue
		}
		sec := secs[i].Sec
		if start < 0 || sec != prev+1 {
			flush()
			start = sec
		}
		prev = sec
		n++
		worst = max(worst, secs[i].Max)
	}
	flush()
	if n == 0 {
		return ""
	}
	out := fmt.Sprintf("; stalled second(s) %s (%d s below %.0f%% of the median second)", strings.Join(ranges, ", "), n,
		100*analysis.StallFraction)
	if worst > 0 {
		out += fmt.Sprintf(", worst latency %s ms in them", FormatValue(ms(worst.Seconds())))
	}
	return out
}
