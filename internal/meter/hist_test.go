package meter

import (
	"math"
	"testing"
	"time"
)

// TestHistogramResolution records known latencies one at a time and reads
// each back (as the median, the p99 and the maximum) within 0.1%: the
// histogram keeps 3 significant digits from 1 ns up.
func TestHistogramResolution(t *testing.T) {
	for _, d := range []time.Duration{
		1, 7, 150, 999, 1000, 1030, 1500, 2047, 2049, 4 * time.Microsecond, 4100, 13_333,
		time.Millisecond, 1_234_567, 250 * time.Millisecond, 3 * time.Second, 59 * time.Minute,
	} {
		h := NewHistogram()
		RecordLatency(h, d)
		RecordLatency(h, d)
		p := PercentilesOf(h)
		for name, got := range map[string]time.Duration{"p50": p.P50, "p99": p.P99, "max": p.Max, "mean": p.Mean} {
			if rel := math.Abs(float64(got-d)) / float64(d); rel > 0.001 {
				t.Errorf("recorded %d ns, %s reads back %d ns (%+.2f%%)", d, name, got, 100*float64(got-d)/float64(d))
			}
		}
	}
}

// TestHistogramClamps checks that values outside the range are kept at its
// ends rather than dropped.
func TestHistogramClamps(t *testing.T) {
	h := NewHistogram()
	RecordLatency(h, 0)
	RecordLatency(h, 2*time.Hour)
	if h.TotalCount() != 2 {
		t.Fatalf("%d values kept of 2", h.TotalCount())
	}
	if p := PercentilesOf(h); p.Max < 59*time.Minute {
		t.Errorf("2 h recorded as max %s", p.Max)
	}
}
