package meter

import (
	"testing"
	"time"
)

// TestTurnTotals adds two turns read from the process, the second
// straddling the end of the warm-up (a quarter of it measured): the CPU
// burnt between the reads is counted, a quarter of the second turn's, and
// the result is an Efficiency of the measured seconds with what turns
// cannot split not measured; without a measured turn there is none.
func TestTurnTotals(t *testing.T) {
	var tt TurnTotals
	if tt.Efficiency(nil) != nil {
		t.Fatal("efficiency without a turn")
	}
	burn := func() (SelfCounters, SelfCounters) {
		// 20 ms of this process's CPU, not of the clock: a loaded machine
		// may give a clock window no CPU at all.
		before := ReadSelfCounters()
		for ReadSelfCounters().cpu-before.cpu < 20*time.Millisecond {
		}
		return before, ReadSelfCounters()
	}
	b1, a1 := burn()
	tt.Add(b1, a1, 1, 0.02)
	b2, a2 := burn()
	tt.Add(b2, a2, 0.25, 0.005)
	e := tt.Efficiency(nil)
	if e == nil || e.Seconds != 0.025 {
		t.Fatalf("efficiency %+v, want 0.025 s", e)
	}
	want := (a1.cpu - b1.cpu + (a2.cpu-b2.cpu)/4).Seconds()
	if e.ClientCPU <= 0 || e.ClientCPU > want+1e-9 || e.ClientCPU < want-1e-9 {
		t.Errorf("client cpu %v s, want %v (the first turn and a quarter of the second)", e.ClientCPU, want)
	}
	if e.ServerCPU != NotMeasured || e.ClientPeakRSS != NotMeasured || e.DevReads != NotMeasured {
		t.Errorf("server cpu %v, peak RSS %v, device reads %v: want not measured", e.ServerCPU, e.ClientPeakRSS, e.DevReads)
	}
	server := &Efficiency{ServerCPU: 1.5, ServerCS: 10, ServerPeakRSS: 1 << 20}
	if s := tt.Efficiency(server); s.ServerCPU != 1.5 || s.ServerCS != 10 || s.MachineBusy != NotMeasured || s.ForeignPct() != NotMeasured {
		t.Errorf("beside a server: %+v, want its figures and foreign cpu not measured", s)
	}
}

// BenchmarkReadSelfCounters is what a turn's boundary costs.
func BenchmarkReadSelfCounters(b *testing.B) {
	for b.Loop() {
		ReadSelfCounters()
	}
}
