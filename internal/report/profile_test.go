package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// profileData is two targets, a (base) and b, one repeat of point-query
// each, 10,000 statements, profiled at 100 Hz: a samples hash_search 300
// times as leaf, memcpy 100, idle 100 and f01..f08 once each; b
// hash_search 600, memcpy 50, idle 100, new_func 20 and f01..f08 once.
// One sample at 100 Hz over 10,000 operations is 1 us/op.
func profileData() *Data {
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "e", Base: "a", Targets: []string{"a", "b"}},
		Runs:    []store.Run{{ID: 1, Target: "a", Status: store.StatusOK}, {ID: 2, Target: "b", Status: store.StatusOK}},
		Results: map[int64][]store.Result{}}
	fold := func(hash, mem, idle, newf int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "postgres;main;exec;hash_search %d\npostgres;main;exec;memcpy %d\npostgres;main;idle %d\n", hash, mem, idle)
		if newf > 0 {
			fmt.Fprintf(&b, "postgres;main;exec;new_func %d\n", newf)
		}
		for i := 1; i <= 8; i++ {
			fmt.Fprintf(&b, "postgres;main;f%02d 1\n", i)
		}
		return []byte(b.String())
	}
	res := func(folded []byte) store.Result {
		return store.Result{Test: "point-query", Group: "point queries", Threads: 1, Metric: "qps", Status: store.StatusOK,
			Seconds: 10, Statements: 10000, Events: 10000, Profile: &store.Profile{Hz: 100, Folded: folded}}
	}
	d.Results[1] = []store.Result{res(fold(300, 100, 100, 0))}
	d.Results[2] = []store.Result{res(fold(600, 50, 100, 20))}
	return d
}

func TestProfileTable(t *testing.T) {
	r := Build(profileData())
	tb := findTable(r, "CPU profile: ")
	if tb == nil {
		t.Fatalf("no CPU profile table in %d tables", len(r.Tables))
	}
	if !strings.Contains(tb.Title, "b vs a") {
		t.Errorf("title %q", tb.Title)
	}
	type row struct {
		name           string
		base, tg, diff float64
		pct            float64 // NaN: no base
	}
	nan := math.NaN()
	want := []row{
		{"all functions", 508, 778, 270, 100 * 270.0 / 508},
		{"hash_search", 300, 600, 300, 100},
		{"new_func", 0, 20, 20, nan},
	}
	for i := 1; i <= 7; i++ {
		want = append(want, row{fmt.Sprintf("f%02d", i), 1, 1, 0, 0})
	}
	want = append(want, row{"memcpy", 100, 50, -50, -50})
	if len(tb.Rows) != len(want) {
		var got []string
		for _, r := range tb.Rows {
			got = append(got, r.Label)
		}
		t.Fatalf("rows %v, want %d", got, len(want))
	}
	near := func(c Cell, v float64) bool {
		if math.IsNaN(v) {
			return c.Missing
		}
		return !c.Missing && math.Abs(c.Value-v) < 1e-9
	}
	for i, w := range want {
		g := tb.Rows[i]
		if g.Label != w.name || !near(g.Cells[0], w.base) || !near(g.Cells[1], w.tg) || !near(g.Cells[2], w.diff) ||
			!near(g.Cells[3], w.pct) {
			t.Errorf("row %d: %s %+v, want %+v", i, g.Label, g.Cells, w)
		}
	}
	// The text report carries it.
	var b strings.Builder
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "CPU profile: ") || !strings.Contains(b.String(), "hash_search") {
		t.Errorf("text report has no profile table:\n%s", b.String())
	}
}

// TestProfileSingleTarget: one target lists its most expensive functions.
func TestProfileSingleTarget(t *testing.T) {
	d := profileData()
	d.Experiment.Targets, d.Runs = []string{"a"}, d.Runs[:1]
	tb := findTable(Build(d), "CPU profile: ")
	if tb == nil || len(tb.Rows) != 1+ProfileTop {
		t.Fatalf("table %+v", tb)
	}
	if g := tb.Rows[1]; g.Label != "hash_search" || g.Cells[0].Value != 300 || math.Abs(g.Cells[1].Value-100*300.0/508) > 1e-9 {
		t.Errorf("top row %s %+v, want hash_search 300 us/op, 59%%", g.Label, g.Cells)
	}
}

// TestProfileNotesAndFolded: a step without a profile is noted with the
// reason; Folded sums a test's stacks over its repeats and names what is
// missing.
func TestProfileNotesAndFolded(t *testing.T) {
	d := profileData()
	extra := d.Results[2][0]
	extra.Profile = &store.Profile{Hz: 100, Note: "profile: perf record failed: no permission"}
	d.Results[2] = append(d.Results[2], extra)
	again := d.Results[1][0]
	d.Results[1] = append(d.Results[1], again)
	r := Build(d)
	found := false
	for _, n := range r.Notes {
		if strings.Contains(n, "CPU profile: none for point-query on b: profile: perf record failed: no permission") {
			found = true
		}
	}
	if !found {
		t.Errorf("no note on the missing profile: %v", r.Notes)
	}
	text, n, err := Folded(d, "point-query", "", 0)
	if err != nil || n != 2 || !strings.Contains(string(text), "postgres;main;exec;hash_search 600\n") {
		t.Errorf("folded of a: %d repeats, %v:\n%s", n, err, text)
	}
	if _, _, err := Folded(d, "nope", "", 0); err == nil || !strings.Contains(err.Error(), "point-query") {
		t.Errorf("unknown test: %v", err)
	}
	if _, _, err := Folded(d, "point-query", "c", 0); err == nil || !strings.Contains(err.Error(), "a, b") {
		t.Errorf("unknown target: %v", err)
	}
	if _, _, err := Folded(d, "point-query", "", 4); err == nil {
		t.Error("unknown thread count: no error")
	}
}

// TestFlameSVG: an icicle of hand-made stacks: the root spans the width,
// each frame's width is its share, narrow frames are dropped, names are
// escaped.
func TestFlameSVG(t *testing.T) {
	st := map[string]int64{"p;main;a<b>": 3, "p;main;c": 1, "p;tiny": 0}
	svg := FlameSVG(st)
	for _, want := range []string{
		`<rect x="0.0" y="0.0" width="1200.0"`,   // all
		`<rect x="0.0" y="34.0" width="1200.0"`,  // main, level 2
		`<rect x="0.0" y="51.0" width="900.0"`,   // a<b>: 3 of 4
		`<rect x="900.0" y="51.0" width="300.0"`, // c: 1 of 4
		`<title>a&lt;b&gt;: 3 samples, 75.00%</title>`,
		`viewBox="0 0 1200 68"`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %s:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "tiny") {
		t.Error("a frame with no samples was drawn")
	}
	if FlameSVG(nil) != "" {
		t.Error("empty stacks drew a graph")
	}
	var b strings.Builder
	d := profileData()
	if err := WriteHTML(&b, d, Build(d)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `<svg xmlns="http://www.w3.org/2000/svg" class="flame"`); n != 3 {
		t.Errorf("HTML report has %d flame graphs, want 3 (a, b, and b against a)", n)
	}
	if !strings.Contains(b.String(), "<h2>Differential flame graphs</h2>") {
		t.Error("HTML report has no differential flame graph section")
	}
}

// TestDiffFlameSVG: the target's frames, as wide as its time per op on
// a scale of the larger total, coloured red where it grew, blue where it
// shrank and white where it stayed; a frame only the base has is absent.
func TestDiffFlameSVG(t *testing.T) {
	base := map[string]float64{"p;main;grow": 100, "p;main;shrink": 200, "p;main;same": 100, "p;main;gone": 100}
	target := map[string]float64{"p;main;grow": 300, "p;main;shrink": 100, "p;main;same": 100}
	svg := DiffFlameSVG(base, target)
	// Totals: base 500, target 500; grow is +200 (the largest change,
	// deepest red), shrink -100 (half as blue), same white.
	for _, want := range []string{
		`<rect x="0.0" y="0.0" width="1200.0" height="16.0" fill="rgb(255,255,255)"`,   // all: 500 -> 500
		`<rect x="0.0" y="51.0" width="720.0" height="16.0" fill="rgb(255,80,80)"`,     // grow: 300 of 500
		`<rect x="720.0" y="51.0" width="240.0"`,                                       // same
		`<rect x="960.0" y="51.0" width="240.0" height="16.0" fill="rgb(167,167,255)"`, // shrink: -100 of max 200
		`<title>grow: 300 us/op (base 100), +200 us/op (+200.0%)</title>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %s:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, ">gone<") || strings.Contains(svg, "<title>gone") {
		t.Error("a frame the target lacks was drawn")
	}
	// A cheaper target draws narrower than the width.
	if svg := DiffFlameSVG(map[string]float64{"p;x": 200}, map[string]float64{"p;x": 100}); !strings.Contains(svg,
		`<rect x="0.0" y="0.0" width="600.0"`) {
		t.Errorf("half the cost: want half the width:\n%s", svg)
	}
	if DiffFlameSVG(base, nil) != "" {
		t.Error("an empty target drew a graph")
	}
}

// TestProfileCoverage: the title gives the profiled share of the CPU time
// /proc counted, and a profile under 80% gets a warning; inclusive time
// counts a function wherever it is on the stack.
func TestProfileCoverage(t *testing.T) {
	d := profileData()
	d.Experiment.Targets, d.Runs = []string{"a"}, d.Runs[:1]
	// a profiled 508 us/op; /proc counted 5.08 s over 10 s at 1,000 QPS
	// (508 us/op: 100%), then 10.16 s (50%).
	d.Results[1][0].Eff = &store.Efficiency{Seconds: 10, ServerCPU: 5.08}
	tb := findTable(Build(d), "CPU profile: ")
	if tb == nil || !strings.HasSuffix(tb.Title, "(a) (coverage 100%)") {
		t.Fatalf("table %+v: want coverage 100%% in the title", tb)
	}
	if g := tb.Rows[0]; g.Label != "all functions" || g.Cells[2].Value != 508 {
		t.Errorf("all functions %+v", g.Cells)
	}
	for _, r := range tb.Rows {
		if r.Label == "hash_search" && (r.Cells[0].Value != 300 || r.Cells[2].Value != 300) {
			t.Errorf("hash_search self %v incl %v, want 300 and 300", r.Cells[0].Value, r.Cells[2].Value)
		}
	}
	for _, n := range Build(d).Notes {
		if strings.Contains(n, "covers") {
			t.Errorf("a full profile is warned of: %s", n)
		}
	}
	d.Results[1][0].Eff.ServerCPU = 10.16
	warned := false
	for _, n := range Build(d).Notes {
		if strings.Contains(n, "point-query on a covers 50% of the CPU time /proc counted (profiled 508 us/op of 1016)") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no coverage warning at 50%%: %v", Build(d).Notes)
	}
}

// TestOffCPUTable: a step whose threads waited far longer than they ran
// gets an off-CPU table of where they waited, per operation; one that ran
// more than it waited does not.
func TestOffCPUTable(t *testing.T) {
	d := profileData()
	d.Experiment.Targets, d.Runs = []string{"a"}, d.Runs[:1]
	// 508 us/op on CPU; 30 s and 2 s off CPU over 10,000 operations.
	d.Results[1][0].Profile.OffCPU = []byte("postgres;main;exec;XLogFlush;blkdev_issue_flush 30000000\n" +
		"postgres;main;secure_read;sock_recvmsg 2000000\n")
	tb := findTable(Build(d), "Off-CPU profile: ")
	if tb == nil {
		t.Fatal("no off-CPU table for a step off CPU 3,200 us/op against 508 on it")
	}
	want := []struct {
		label string
		us    float64
	}{{"all waits", 3200}, {"blkdev_issue_flush", 3000}, {"sock_recvmsg", 200}}
	if len(tb.Rows) != len(want) {
		t.Fatalf("rows %+v", tb.Rows)
	}
	for i, w := range want {
		if tb.Rows[i].Label != w.label || math.Abs(tb.Rows[i].Cells[0].Value-w.us) > 1e-9 {
			t.Errorf("row %d: %s %v, want %s %v", i, tb.Rows[i].Label, tb.Rows[i].Cells[0].Value, w.label, w.us)
		}
	}
	d.Results[1][0].Profile.OffCPU = []byte("postgres;main;secure_read;sock_recvmsg 5000000\n") // 500 us/op
	if tb := findTable(Build(d), "Off-CPU profile: "); tb != nil {
		t.Errorf("off-CPU table for a step that ran about as long as it waited: %+v", tb)
	}
}
