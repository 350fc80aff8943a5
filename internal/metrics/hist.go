package metrics

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/store"
)

// Histogram range: 100 ns to one hour, 3 significant digits.
const (
	histLowest  = 100
	histHighest = int64(time.Hour)
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram in nanoseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// RecordLatency adds d to h, clamping it into the histogram's range so that no
// measurement is dropped.
func RecordLatency(h *hdr.Histogram, d time.Duration) {
	v := min(max(int64(d), histLowest), histHighest)
	_ = h.RecordValue(v) // cannot fail: v is in range
}

// PercentilesOf reads the stored latency figures from h.
func PercentilesOf(h *hdr.Histogram) store.Latency {
	if h.TotalCount() == 0 {
		return store.Latency{}
	}
	return store.Latency{
		Mean: time.Duration(h.Mean()),
		P50:  time.Duration(h.ValueAtQuantile(50)),
		P95:  time.Duration(h.ValueAtQuantile(95)),
		P99:  time.Duration(h.ValueAtQuantile(99)),
		P999: time.Duration(h.ValueAtQuantile(99.9)),
		Max:  time.Duration(h.Max()),
	}
}
