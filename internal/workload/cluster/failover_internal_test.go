package cluster

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestProbeClockStartsAtFirstOp checks that the probe's step clock (its
// kill time and the end its retries give up at) starts at its first
// operation, not when the runner created the workers: a step whose
// workers took 3 s to create still ends its probe's tries just before the
// step's real end, so the last writes are not cut short as failures.
func TestProbeClockStartsAtFirstOp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &failState{length: 10 * time.Second, killAt: 4 * time.Second}
		created := time.Now()
		time.Sleep(3 * time.Second) // the other workers connect; then the step's clock starts
		first := time.Now()
		s.begin(first)
		s.begin(first.Add(time.Second)) // later operations change nothing
		if want := first.Add(10*time.Second - endMargin); !s.end.Equal(want) {
			t.Fatalf("end %v after the first op; want %v", s.end.Sub(first), want.Sub(first))
		}
		if !s.end.After(created.Add(10 * time.Second)) {
			t.Fatalf("end %v after the workers' creation: it falls before the step's real end", s.end.Sub(created))
		}
	})
}

// TestStalled checks the outage test a write cut by the step's end goes
// through: a try that fails while other writers still succeed is no
// outage, nor is a pause shorter than stallAfter; one with no success by
// anyone for longer is.
func TestStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &failState{}
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		s.success(time.Now()) // another writer succeeded after t0
		time.Sleep(time.Second)
		if s.stalled(t0, time.Now()) {
			t.Fatal("stalled although a write succeeded after the operation began")
		}
		t1 := time.Now()
		time.Sleep(stallAfter - time.Millisecond)
		if s.stalled(t1, time.Now()) {
			t.Fatal("stalled before stallAfter: a loaded machine's pause, too soon to call it an outage")
		}
		time.Sleep(2 * time.Millisecond)
		if !s.stalled(t1, time.Now()) {
			t.Fatal("not stalled after stallAfter without any success")
		}
	})
}

// TestRejoinNote checks the report's words for each way an old primary
// rejoined: kept, copied, copied after keeping failed, and not within
// the step (nothing said).
func TestRejoinNote(t *testing.T) {
	for _, c := range []struct {
		facts map[string]float64
		want  string
	}{
		{map[string]float64{"switchover_rejoin_copied": 0, "switchover_rejoin_s": 1.25, "switchback_rejoin_copied": -1},
			"; after the switch the old primary rejoined in 1.2 s keeping its data (rewound, or following on from its own position)"},
		{map[string]float64{"switchover_rejoin_copied": 1, "switchover_rejoin_s": 9, "switchback_rejoin_copied": 0, "switchback_rejoin_s": 0.5},
			"; after the switch the old primary rejoined in 9.0 s on a new copy of the new primary's data" +
				"; after the switch back the old primary rejoined in 0.5 s keeping its data (rewound, or following on from its own position)"},
		{map[string]float64{"switchover_rejoin_copied": 1, "switchover_rejoin_fallback": 1, "switchover_rejoin_s": 8},
			"; after the switch the old primary rejoined in 8.0 s on a new copy of the new primary's data, as its own could not be rewound (its server log says why)"},
		{map[string]float64{"switchover_rejoin_copied": -1}, ""},
		{map[string]float64{}, ""},
	} {
		if got := rejoinNote(c.facts); got != c.want {
			t.Errorf("rejoinNote(%v) = %q; want %q", c.facts, got, c.want)
		}
	}
}
