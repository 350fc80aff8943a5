package report

import (
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// stallData is one 30-second step at 1,000 statements a second whose
// seconds 12 to 18 completed none, the worst of them with an operation of
// 7,008 ms (as a 7-second stall's CSV showed).
func stallData() *Data {
	r := store.Result{Test: "update-index", Threads: 4, Metric: "qps", Status: store.StatusOK, Seconds: 30,
		Events: 23_000, Statements: 23_000}
	for sec := range 30 {
		iv := store.Interval{Sec: sec, Seconds: 1, Events: 1000, Statements: 1000, Max: 3 * time.Millisecond}
		if sec >= 12 && sec <= 18 {
			iv.Events, iv.Statements, iv.Max = 0, 0, 0
		}
		if sec == 18 {
			iv.Max = 7008 * time.Millisecond
		}
		r.Intervals = append(r.Intervals, iv)
	}
	return &Data{Experiment: store.Experiment{ID: 1, Name: "e", Base: "a", Targets: []string{"a"}},
		Runs:    []store.Run{{ID: 1, Target: "a", Repeat: 1, Status: store.StatusOK}},
		Results: map[int64][]store.Result{1: {r}}}
}

// TestStallNoteNamesSecondsAndLatency: the unstable note of a step with a
// 7-second stall names the seconds (12-18) and the worst latency in them
// (7008 ms); a step whose suite planned the disruption gets no such note.
func TestStallNoteNamesSecondsAndLatency(t *testing.T) {
	notes := strings.Join(stabilityNotes(stallData(), nil), "\n")
	for _, want := range []string{"unstable: update-index @4 on a (repeat 1)", "stalled second(s) 12-18 (7 s below 50% of the median second)",
		"worst latency 7008 ms in them"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if n := stabilityNotes(stallData(), map[string]string{"update-index": "node 2 killed"}); len(n) != 0 {
		t.Errorf("a planned disruption is called unstable: %q", n)
	}
}
