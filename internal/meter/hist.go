package meter

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 ns to one hour, 3 significant digits. The lowest
// trackable value sets the histogram's unit: at 1 ns every value below 2048 ns
// is exact and larger ones are within 1/1024 (0.1%), so in-process operations
// of 1-5 us read back as recorded. (A lowest value of 100 ns made a 64 ns
// unit: 1030 ns read back as 1087 ns.)
const (
	histLowest  = 1
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
func PercentilesOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Mean: time.Duration(h.Mean()),
		P50:  time.Duration(h.ValueAtQuantile(50)),
		P95:  time.Duration(h.ValueAtQuantile(95)),
		P99:  time.Duration(h.ValueAtQuantile(99)),
		P999: time.Duration(h.ValueAtQuantile(99.9)),
		Max:  time.Duration(h.Max()),
	}
}
