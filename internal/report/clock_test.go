package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestClockColumns: where the server's cycles, instructions and task-clock
// were counted, the efficiency table gives GHz (cycles per nanosecond of
// task-clock) and IPC; where cycles were not supported it gives the speed
// probe's rate, and a note says GHz and IPC were not measured.
func TestClockColumns(t *testing.T) {
	d := profileData()
	d.Results[1][0].Eff = &store.Efficiency{Seconds: 10, ServerCPU: 5}
	d.Results[2][0].Eff = &store.Efficiency{Seconds: 10, ServerCPU: 5}
	d.Results[1][0].Facts = map[string]float64{store.CounterFact("server", "cycles"): 12e9,
		store.CounterFact("server", "instructions"): 18e9, store.CounterFact("server", "task-clock"): 5e9}
	d.Results[2][0].Facts = map[string]float64{store.CounterUnsupportedFact("server", "cycles"): store.CounterNotSupported,
		store.CounterFact("server", "task-clock"): 5e9, store.FactCPUSpeed: 812.5}
	r := Build(d)
	tb := findTable(r, "Efficiency per operation")
	if tb == nil {
		t.Fatal("no efficiency table")
	}
	col := func(name string) int {
		i := slices.Index(tb.Columns, name)
		if i < 0 {
			t.Fatalf("no column %q in %v", name, tb.Columns)
		}
		return i
	}
	ghz, ipc, speed := col("GHz server"), col("IPC server"), col("cpu speed")
	var a, b *Row
	for i := range tb.Rows {
		switch tb.Rows[i].Label {
		case "a":
			a = &tb.Rows[i]
		case "b":
			b = &tb.Rows[i]
		}
	}
	if a == nil || b == nil {
		t.Fatalf("rows %+v", tb.Rows)
	}
	if math.Abs(a.Cells[ghz].Value-2.4) > 1e-9 || math.Abs(a.Cells[ipc].Value-1.5) > 1e-9 || !a.Cells[speed].Missing {
		t.Errorf("a: GHz %+v IPC %+v speed %+v; want 2.4, 1.5, n/a", a.Cells[ghz], a.Cells[ipc], a.Cells[speed])
	}
	if !b.Cells[ghz].Missing || !b.Cells[ipc].Missing || b.Cells[speed].Value != 812.5 {
		t.Errorf("b: GHz %+v IPC %+v speed %+v; want n/a, n/a, 812.5", b.Cells[ghz], b.Cells[ipc], b.Cells[speed])
	}
	found := false
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "clock rate: GHz = cycles / task-clock") && strings.Contains(n, "not measured where cycles are not supported") {
			found = true
		}
	}
	if !found {
		t.Errorf("no clock-rate note saying cycles are unsupported: %v", r.Notes)
	}
}
