package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// effData is two targets, one repeat each: "lite" runs in-process (no
// server), "srv" has a server whose client CPU per op is twice the base's.
func effData(withEff bool) *Data {
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "e", Base: "lite", Targets: []string{"lite", "srv"}},
		Runs:    []store.Run{{ID: 1, Target: "lite", Status: store.StatusOK}, {ID: 2, Target: "srv", Status: store.StatusOK}},
		Results: map[int64][]store.Result{}}
	// 1000 qps over 10 s; efficiency window 10 s.
	base := store.Result{Test: "point-query", Group: "point queries", Threads: 1, Metric: "qps", Status: store.StatusOK,
		Seconds: 10, Statements: 10000, Events: 10000}
	lite, srv := base, base
	if withEff {
		lite.Eff = &store.Efficiency{Seconds: 10, ClientCPU: 0.1, ServerCPU: store.NotMeasured,
			ServerReadBytes: store.NotMeasured, ServerWriteBytes: store.NotMeasured, ServerReadCalls: store.NotMeasured,
			ServerWriteCalls: store.NotMeasured, ServerCS: store.NotMeasured, ServerPeakRSS: store.NotMeasured,
			ClientReadBytes: 0, ClientWriteBytes: 10000 * 1024, ClientReadCalls: 20000, ClientWriteCalls: 10,
			DevReads: store.NotReadable, DevWrites: store.NotReadable, DevReadBytes: store.NotReadable, DevWriteBytes: store.NotReadable,
			ClientCS: 500, ClientPeakRSS: 1 << 20, MachineCPU: 20, MachineBusy: 1, MachineSteal: 0.2}
		srv.Eff = &store.Efficiency{Seconds: 10, ClientCPU: 0.2, ServerCPU: 0.3, Device: "vda",
			ServerReadBytes: 0, ServerWriteBytes: 2048 * 10000, ServerReadCalls: 10000, ServerWriteCalls: 10000,
			ClientReadCalls: 10000, ClientWriteCalls: 10000, DevReads: 100, DevWrites: 50, DevReadBytes: 0, DevWriteBytes: 4096 * 10000,
			ServerCS: 20000, ClientCS: 10000, ServerPeakRSS: 300 << 20, ClientPeakRSS: 1 << 20,
			MachineCPU: 20, MachineBusy: 1.5, MachineSteal: 2}
	}
	d.Results[1] = []store.Result{{Test: "prepare", Action: true, Warm: true, Status: store.StatusOK, DBBytes: 5 << 20}, lite}
	d.Results[2] = []store.Result{{Test: "prepare", Action: true, Warm: true, Status: store.StatusOK, DBBytes: store.NotReadable}, srv}
	return d
}

func findTable(r *Report, prefix string) *Table {
	for i := range r.Tables {
		if strings.HasPrefix(r.Tables[i].Title, prefix) {
			return &r.Tables[i]
		}
	}
	return nil
}

func cellOf(t *Table, target, column string) Cell {
	col := -1
	for i, c := range t.Columns {
		if c == column {
			col = i
		}
	}
	for _, row := range t.Rows {
		if row.Label == target && col >= 0 {
			return row.Cells[col]
		}
	}
	return Cell{Kind: Text, Text: "absent"}
}

func TestEfficiencyTables(t *testing.T) {
	r := Build(effData(true))
	abs := findTable(r, "Efficiency per operation")
	rel := findTable(r, "Relative efficiency")
	if abs == nil || rel == nil {
		t.Fatalf("efficiency tables missing: %d tables", len(r.Tables))
	}
	num := func(tb *Table, target, col string, want float64) {
		t.Helper()
		c := cellOf(tb, target, col)
		if c.Missing || c.Kind == Text || c.Value < want*0.999 || c.Value > want*1.001 {
			t.Errorf("%s %s %s = %+v, want %v", tb.Title, target, col, c, want)
		}
	}
	// 0.1 s client CPU / 10 s / 1000 qps = 10 us per op.
	num(abs, "lite", "cpu us/op client", 10)
	num(abs, "lite", "cpu us/op total", 10)
	num(abs, "srv", "cpu us/op server", 30)
	num(abs, "srv", "cpu us/op total", 50)
	// In-process: IO is the client's. 10000 KB / 10000 ops.
	num(abs, "lite", "KB written/op", 1)
	num(abs, "lite", "reads/op", 2)
	// Server: IO is the server's, not the client's.
	num(abs, "srv", "KB written/op", 2)
	num(abs, "srv", "dev KB written/op", 4)
	num(abs, "srv", "cs/op", 3)
	num(abs, "srv", "peak server RSS MB", 300)
	num(abs, "srv", "steal %", 10)
	// Foreign: busy 1.5 - 0.3 - 0.2 = 1 s of 20 s.
	num(abs, "srv", "foreign cpu %", 5)
	num(abs, "lite", "foreign cpu %", 4.5)
	if c := cellOf(abs, "lite", "cpu us/op server"); !c.Missing {
		t.Errorf("server cpu of an in-process engine: %+v, want n/a", c)
	}
	if c := cellOf(abs, "lite", "dev KB read/op"); c.Kind != Text || c.Text != "not readable" {
		t.Errorf("unreadable device counter shown as %+v", c)
	}
	// Relative: client cpu 20/10 = 2.00, lower is better, so red.
	if c := cellOf(rel, "srv", "cpu us/op client"); c.Kind != Ratio || c.Value != 2 || c.Band != analysis.Worse {
		t.Errorf("relative client cpu %+v, want 2.00 worse", c)
	}
	if c := cellOf(rel, "srv", "cpu us/op server"); !c.Missing {
		t.Errorf("relative server cpu against an in-process base: %+v, want n/a", c)
	}
	// 0 KB read on both sides: 1, as sum_met.awk.
	if c := cellOf(rel, "srv", "KB read/op"); c.Kind != Ratio || c.Value != 1 {
		t.Errorf("relative KB read/op %+v, want 1", c)
	}
	if len(rel.Rows) != 1 || len(rel.Columns) != 6 {
		t.Errorf("relative table: %d rows, columns %v", len(rel.Rows), rel.Columns)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, w := range []string{"lite run in-process", "10 ms ticks", "lite repeat 0: 5.00 MB", "srv repeat 0: not readable",
		"noisy step: point-query on srv (1 threads): 10.0% CPU steal", "dev columns are the whole device (vda)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "not readable") || !strings.Contains(buf.String(), "2.00-") {
		t.Errorf("rendered report lacks the efficiency cells:\n%s", buf.String())
	}
}

// TestEfficiencyOnlyWhenMeasured checks that results without efficiency
// (stored before it existed) add no tables and leave the others as they were.
func TestEfficiencyOnlyWhenMeasured(t *testing.T) {
	without := Build(effData(false))
	with := Build(effData(true))
	if findTable(without, "Efficiency") != nil || findTable(without, "Relative efficiency") != nil {
		t.Error("efficiency tables shown without measurements")
	}
	if len(with.Tables) != len(without.Tables)+2 {
		t.Errorf("%d tables with efficiency, %d without: want exactly 2 more", len(with.Tables), len(without.Tables))
	}
	for i := range without.Tables {
		if without.Tables[i].Title != with.Tables[i].Title {
			t.Errorf("table %d: %q became %q", i, without.Tables[i].Title, with.Tables[i].Title)
		}
	}
}

func TestDisturbedSeconds(t *testing.T) {
	r := store.Result{Intervals: []store.Interval{
		{Sec: -1, Load: &store.IntervalLoad{StealPct: 50}}, // warm-up: not counted
		{Sec: 0, Load: &store.IntervalLoad{StealPct: 1, ForeignPct: 2}},
		{Sec: 1, Load: &store.IntervalLoad{StealPct: 11}},
		{Sec: 2, Load: &store.IntervalLoad{ForeignPct: 30}},
		{Sec: 3}, // not sampled
	}}
	if bad, all := disturbedSeconds(r); bad != 2 || all != 3 {
		t.Errorf("disturbed %d of %d, want 2 of 3", bad, all)
	}
	// CPU speed: the median second is 100; 85 is below x0.9 of it, 95
	// is not, and a second without a probe (0) is not slow.
	r = store.Result{Intervals: []store.Interval{
		{Sec: -1, Load: &store.IntervalLoad{CPUSpeed: 10}}, // warm-up: not counted
		{Sec: 0, Load: &store.IntervalLoad{CPUSpeed: 100}},
		{Sec: 1, Load: &store.IntervalLoad{CPUSpeed: 85}},
		{Sec: 2, Load: &store.IntervalLoad{CPUSpeed: 95}},
		{Sec: 3, Load: &store.IntervalLoad{CPUSpeed: 105}},
		{Sec: 4, Load: &store.IntervalLoad{CPUSpeed: 110}},
		{Sec: 5, Load: &store.IntervalLoad{}},
	}}
	if bad, all := disturbedSeconds(r); bad != 1 || all != 6 {
		t.Errorf("with CPU speeds: disturbed %d of %d, want 1 (the second at 85) of 6", bad, all)
	}
}

// TestClientNote checks the note on how benchlab's workers ran: one entry per
// target and thread count, in target order, naming GOMAXPROCS, the IO mode of
// server clients and batched tests; no note when no result has the facts.
func TestClientNote(t *testing.T) {
	d := effData(false)
	if n := clientNote(d); n != "" {
		t.Fatalf("note %q for results without client facts", n)
	}
	lite, srv := d.Results[1][1], d.Results[2][1]
	lite.Facts = map[string]float64{"client_gomaxprocs": 2, "client_ops_per_call": 1}
	batched := lite
	batched.Test, batched.Facts = "readrandom", map[string]float64{"client_gomaxprocs": 2, "client_ops_per_call": 16}
	srv.Facts = map[string]float64{"client_gomaxprocs": 2, "client_polled_io": 0, "client_ops_per_call": 1}
	srv4 := srv
	srv4.Threads, srv4.Facts = 4, map[string]float64{"client_gomaxprocs": 2, "client_polled_io": 1, "client_ops_per_call": 1}
	d.Results[1] = []store.Result{d.Results[1][0], lite, batched}
	d.Results[2] = []store.Result{d.Results[2][0], srv4, srv}
	want := "client (how benchlab's workers ran): lite at 1 thread: GOMAXPROCS 2; GOMAXPROCS 2, readrandom 16 operations per call" +
		" | srv at 1 thread: GOMAXPROCS 2, blocking reads | srv at 4 threads: GOMAXPROCS 2, poller IO"
	if n := clientNote(d); n != want {
		t.Errorf("note\n%s\nwant\n%s", n, want)
	}
	found := false
	for _, n := range notes(d, nil) {
		found = found || n == want
	}
	if !found {
		t.Errorf("notes %q lack the client note", notes(d, nil))
	}
}

// TestCounterTables: perf counter facts become per-operation columns (the
// count over the efficiency window's operations) in an absolute table and
// one relative to the base, events no side counted get no column, and the
// events a side could not count are named in a note with the reason.
func TestCounterTables(t *testing.T) {
	d := effData(true)
	lite, srv := &d.Results[1][1], &d.Results[2][1]
	lite.Facts = map[string]float64{store.CounterFact("client", "instructions"): 2e8, // 10000 ops: 20000/op
		store.CounterFact("client", "page-faults"):       500,
		store.CounterUnsupportedFact("client", "cycles"): store.CounterNotSupported}
	srv.Facts = map[string]float64{store.CounterFact("client", "instructions"): 1e8,
		store.CounterFact("server", "instructions"): 3e8, store.CounterFact("client", "page-faults"): 1000,
		store.CounterUnsupportedFact("client", "cycles"):       store.CounterNotSupported,
		store.CounterUnsupportedFact("server", "cycles"):       store.CounterNotSupported,
		store.CounterUnsupportedFact("server", "cache-misses"): store.CounterNotPermitted}
	r := Build(d)
	abs, rel := findTable(r, "Perf counters per operation"), findTable(r, "Relative perf counters")
	if abs == nil || rel == nil {
		t.Fatalf("perf counter tables missing: %d tables", len(r.Tables))
	}
	if got := strings.Join(abs.Columns, ","); got != "instructions/op server,instructions/op client,page-faults/op client" {
		t.Errorf("columns %s", got)
	}
	for _, c := range []struct {
		target, col string
		want        float64
	}{{"lite", "instructions/op client", 20000}, {"srv", "instructions/op client", 10000},
		{"srv", "instructions/op server", 30000}, {"lite", "page-faults/op client", 0.05}} {
		if got := cellOf(abs, c.target, c.col); got.Missing || got.Value < c.want*0.999 || got.Value > c.want*1.001 {
			t.Errorf("%s %s = %+v, want %v", c.target, c.col, got, c.want)
		}
	}
	if got := cellOf(abs, "lite", "instructions/op server"); !got.Missing {
		t.Errorf("in-process target's server instructions: %+v, want n/a", got)
	}
	if got := cellOf(rel, "srv", "instructions/op client"); got.Missing || got.Value < 0.499 || got.Value > 0.501 {
		t.Errorf("relative client instructions %+v, want 0.5", got)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"perf counters: cycles not supported on this machine (server and client)",
		"perf counters: cache-misses not permitted (perf_event_paranoid) (server)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if findTable(Build(effData(true)), "Perf counters") != nil {
		t.Error("a perf counter table without any counted event")
	}
}

// TestOverrunNotes: a measured step that completed no operation is noted
// as stalled, with how long its measured part was sampled over when that
// overran; one whose 1-second measured part was sampled over 3.5 s is
// noted as late, blaming a stall of the target when an operation took as
// long (its max latency, since late operations' latency is recorded), else
// the machine; one sampled over 1.3 s (within half a second) is not.
func TestOverrunNotes(t *testing.T) {
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "e", Base: "a", Targets: []string{"a"}},
		Runs: []store.Run{{ID: 1, Target: "a", Repeat: 1, Status: store.StatusOK}}, Results: map[int64][]store.Result{}}
	step := func(test string, events int64, secs ...float64) store.Result {
		r := store.Result{Test: test, Threads: 1, Metric: "qps", Status: store.StatusOK, Seconds: 1, Events: events, Statements: events}
		r.Intervals = append(r.Intervals, store.Interval{Sec: -1, Seconds: 0.3, Events: 100})
		for i, s := range secs {
			r.Intervals = append(r.Intervals, store.Interval{Sec: i, Seconds: s})
		}
		return r
	}
	stalled := step("stall", 3000, 3.5)
	stalled.Latency.Max = 2400 * time.Millisecond
	d.Results[1] = []store.Result{step("none", 0, 5), step("none-short", 0, 1), step("late", 3000, 3.5),
		step("tail", 3000, 1, 0.3), stalled}
	notes := strings.Join(StallNotes(d), "\n")
	for _, want := range []string{"stalled: none @1 on a (repeat 1) completed no operation; its measured part of 1 s was sampled over 5 s",
		"stalled: none-short @1 on a (repeat 1) completed no operation in its measured part",
		"late: late @1 on a (repeat 1): its measured part of 1 s was sampled over 3.5 s (the machine did not schedule",
		"late: stall @1 on a (repeat 1): its measured part of 1 s was sampled over 3.5 s; an operation took 2.4 s (its max latency): a stall of the target"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "tail") {
		t.Errorf("a 0.3 s tail was noted:\n%s", notes)
	}
}

// TestPowerCountsRepeatsRun: a verdict that left runs out (a slow host)
// judged 6 against 4, but the experiment ran 6 against 6, and its power is
// that of 6 against 6 (2/C(12,6) = 0.0022), not of 6 against 4 (0.0095).
func TestPowerCountsRepeatsRun(t *testing.T) {
	c := Comparison{Verdict: analysis.Verdict{NBase: 6, NOther: 4}}
	c.Noise.Left[1] = []int{0, 3}
	if b, o := c.RepeatsRun(); b != 6 || o != 6 {
		t.Fatalf("RepeatsRun = %d, %d; want 6, 6", b, o)
	}
	p := PowerOf([]Comparison{c}, VerdictOptions{Alpha: 0.01})
	if p.NBase != 6 || p.NOther != 6 || p.Floor > 0.0023 {
		t.Errorf("power %+v; want 6 vs 6 with floor 0.0022", p)
	}
}

// TestEfficiencyByTurns builds a report of two interleaved in-process
// targets whose efficiency was split by turns: both show a client cpu per
// op, the shared figures are n/a without a "not readable" device note,
// and a note says how the figures were attributed.
func TestEfficiencyByTurns(t *testing.T) {
	d := effData(true)
	for id, cpu := range map[int64]float64{1: 0.1, 2: 0.4} {
		r := &d.Results[id][1]
		r.Facts = map[string]float64{store.FactInterleave: 0.02, store.FactInterleaveTargets: 2, store.FactEffByTurns: 1}
		r.Eff = &store.Efficiency{Seconds: 10, ClientCPU: cpu, ServerCPU: store.NotMeasured,
			ServerReadBytes: store.NotMeasured, ServerWriteBytes: store.NotMeasured, ServerReadCalls: store.NotMeasured,
			ServerWriteCalls: store.NotMeasured, ServerCS: store.NotMeasured, ServerPeakRSS: store.NotMeasured,
			ClientWriteBytes: 1024 * 10000, ClientCS: 100, ClientPeakRSS: store.NotMeasured,
			DevReads: store.NotMeasured, DevWrites: store.NotMeasured, DevReadBytes: store.NotMeasured, DevWriteBytes: store.NotMeasured,
			MachineCPU: 20, MachineBusy: 1, MachineSteal: 0}
	}
	r := Build(d)
	abs := findTable(r, "Efficiency per operation")
	if abs == nil {
		t.Fatal("no efficiency table")
	}
	for target, want := range map[string]float64{"lite": 10, "srv": 40} {
		if c := cellOf(abs, target, "cpu us/op client"); c.Missing || c.Kind == Text || c.Value < want*0.999 || c.Value > want*1.001 {
			t.Errorf("%s cpu us/op client = %+v, want %v", target, c, want)
		}
		for _, col := range []string{"peak client RSS MB", "dev KB written/op"} {
			if c := cellOf(abs, target, col); !c.Missing {
				t.Errorf("%s %s = %+v, want n/a", target, col, c)
			}
		}
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "split by turns") {
		t.Errorf("notes lack how interleaved figures were attributed:\n%s", notes)
	}
	if strings.Contains(notes, "dev columns not readable") {
		t.Errorf("notes call the shared device columns not readable:\n%s", notes)
	}
}
