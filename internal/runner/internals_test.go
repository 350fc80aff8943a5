package runner

import (
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
)

// TestInternalsSeries checks how reads become series: a counter's rate
// over the time between reads, given to each second a missed read spans;
// a counter that shrank gives no point; a gauge belongs to the second that
// ends at its read, and the read at the start of the measured part gives
// no gauge point.
func TestInternalsSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	read := func(k int, at time.Duration, c, g float64) internalsRead {
		return internalsRead{k: k, at: t0.Add(at), in: engine.Internals{
			Counters: map[string]float64{"x.written": c}, Gauges: map[string]float64{"x.dirty": g}}}
	}
	got := internalsSeries([]internalsRead{
		read(0, 0, 100, 7),
		read(1, 1000*time.Millisecond, 150, 8), // 50 in 1 s
		read(3, 3000*time.Millisecond, 350, 9), // 200 in 2 s: 100/s for seconds 1 and 2
		read(4, 3500*time.Millisecond, 10, 10), // reset: no rate
		read(5, 4500*time.Millisecond, 20, 11), // 10 in 1 s
	})
	want := []store.EngineSeries{
		{Name: "x.dirty", Gauge: true, Points: []store.EnginePoint{{Sec: 0, Value: 8}, {Sec: 2, Value: 9}, {Sec: 3, Value: 10}, {Sec: 4, Value: 11}}},
		{Name: "x.written", Points: []store.EnginePoint{{Sec: 0, Value: 50}, {Sec: 1, Value: 100}, {Sec: 2, Value: 100}, {Sec: 4, Value: 10}}},
	}
	if len(got) != len(want) {
		t.Fatalf("series %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Gauge != want[i].Gauge || len(got[i].Points) != len(want[i].Points) {
			t.Fatalf("series %d: %+v, want %+v", i, got[i], want[i])
		}
		for j, p := range want[i].Points {
			if g := got[i].Points[j]; g.Sec != p.Sec || g.Value != p.Value {
				t.Errorf("%s point %d: %+v, want %+v", want[i].Name, j, g, p)
			}
		}
	}
}
