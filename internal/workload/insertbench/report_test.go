package insertbench

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/analysis"
	"benchlab/internal/meter"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// ibData builds an Insert Benchmark experiment of three targets: "a" (the
// base), "b" faster at loading, and "c" slow at loading and short of its
// background insert rate in qp100.
func ibData(t *testing.T) *report.Data {
	t.Helper()
	sp := spec.Default()
	sp.Name = "ib"
	sp.Workload.Suite = "insert"
	d := &report.Data{Experiment: store.Experiment{ID: 1, Name: "ib", Base: "a", Targets: []string{"a", "b", "c"}, Spec: sp.TOML()},
		Results: map[int64][]store.Result{}}
	hist := func(lat ...time.Duration) []byte {
		h := meter.NewHistogram()
		for _, l := range lat {
			meter.RecordLatency(h, l)
		}
		b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	load := map[string]int64{"a": 100_000, "b": 130_000, "c": 60_000}
	ips := map[string]int64{"a": 100, "b": 100, "c": 80}
	for i, tg := range []string{"a", "b", "c"} {
		id := int64(i + 1)
		d.Runs = append(d.Runs, store.Run{ID: id, Target: tg, Status: store.StatusOK})
		d.Results[id] = []store.Result{
			{Seq: 1, Test: "setup", Action: true, Status: store.StatusOK},
			{Seq: 2, Test: "l.i0", Metric: "ips", Status: store.StatusOK, Seconds: 1, Rows: load[tg], Events: load[tg] / 100,
				Role: store.RoleInfo{Name: "insert"}, Histogram: hist(100*time.Microsecond, 2*time.Millisecond)},
			{Seq: 3, Test: "qp100", Metric: "qps", Status: store.StatusOK, Seconds: 10, Statements: 50_000, Events: 50_000,
				Rows: 49_000, Role: store.RoleInfo{Name: "query"}},
			{Seq: 3, Test: "qp100", Metric: "ips", Status: store.StatusOK, Seconds: 10, Rows: 10 * ips[tg], Events: ips[tg] / 5,
				Role: store.RoleInfo{Name: "insert", Secondary: true, TargetRate: 100}},
		}
	}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	return d
}

func mustTable(t *testing.T, r *report.Report, prefix string) report.Table {
	t.Helper()
	for _, tb := range r.Tables {
		if strings.HasPrefix(tb.Title, prefix) {
			return tb
		}
	}
	t.Fatalf("no table %q", prefix)
	return report.Table{}
}

// TestInsertBenchmarkTables checks the suite's report sections as the report
// lays them out, found through the suite registry.
func TestInsertBenchmarkTables(t *testing.T) {
	r := report.Build(ibData(t))
	sum := mustTable(t, r, "Insert Benchmark summary")
	if strings.Join(sum.Columns, " ") != "l.i0 qp100" {
		t.Fatalf("summary columns %v, want the measured steps in run order", sum.Columns)
	}
	// l.i0: min 60k, max 130k, gap 17.5k: c (60k) red, b (130k) green, a plain.
	want := map[string][2]report.Tone{"a": {report.ToneNone, report.ToneNone}, "b": {report.ToneGood, report.ToneNone}, "c": {report.ToneBad, report.ToneIgnore}}
	for _, row := range sum.Rows {
		for i, c := range row.Cells {
			if c.Tone != want[row.Label][i] {
				t.Errorf("summary %s %s: tone %v, want %v", row.Label, sum.Columns[i], c.Tone, want[row.Label][i])
			}
		}
	}
	sla := mustTable(t, r, "Insert Benchmark background insert rate")
	if len(sla.Rows) != 4 || sla.Rows[3].Label != "target" || sla.Rows[3].Cells[0].Value != 100 {
		t.Fatalf("SLA table rows %+v, want a, b, c and the target 100", sla.Rows)
	}
	if sla.Rows[2].Cells[0].Tone != report.ToneBad || sla.Rows[2].Cells[0].Value != 80 || sla.Rows[0].Cells[0].Tone != report.ToneNone {
		t.Errorf("SLA cells: a %+v, c %+v; want c's 80 red, a plain", sla.Rows[0].Cells[0], sla.Rows[2].Cells[0])
	}
	rel := mustTable(t, r, "Insert Benchmark relative")
	if got := rel.Rows[0].Cells[0].Value; math.Abs(got-1.3) > 1e-9 {
		t.Errorf("b's relative l.i0 = %v, want 1.30", got)
	}
	// It is the report's relative table (the HTML page shows it first,
	// compare keeps it), titled after its steps' metrics and marked for
	// their direction, throughput's.
	const title = "Insert Benchmark relative throughput: IPS(target) / IPS(a) for l.i0; QPS(target) / QPS(a) for qp100"
	if !rel.Relative || rel.Title != title || !strings.Contains(rel.Legend, "+ (green) >= 1.05 better") ||
		!strings.Contains(rel.Legend, "significant verdicts, - (slower, red) below 1, + (faster, green) above 1") {
		t.Errorf("relative table: marked %v, title %q, legend %q; want marked, %q, throughput's marks", rel.Relative,
			rel.Title, rel.Legend, title)
	}
	for _, tb := range r.Tables {
		if tb.Relative && tb.Title != rel.Title {
			t.Errorf("table %q is marked relative too", tb.Title)
		}
	}
	rows := mustTable(t, r, "Insert Benchmark rows fetched")
	if got := rows.Rows[0].Cells[0].Value; math.Abs(got-0.98) > 1e-9 {
		t.Errorf("rows per query %v, want 49000 rows / 50000 queries = 0.98", got)
	}
	rt := mustTable(t, r, "Insert Benchmark insert response time")
	if rt.Rows[0].Group != "l.i0" || rt.Rows[0].Cells[0].Text != "50.000" || rt.Rows[0].Cells[2].Text != "50.000" ||
		rt.Rows[0].Cells[1].Text != "" {
		t.Errorf("l.i0 buckets %+v, want 50%% in 256us and 50%% in 4ms, none in 1ms", rt.Rows[0].Cells)
	}
	var buf bytes.Buffer
	if err := report.WriteText(&buf, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "SLA missed: qp100 on c inserted 80 rows/s") {
		t.Errorf("report lacks the SLA note:\n%s", buf.String())
	}
}

func TestRateAtPercentile(t *testing.T) {
	rates := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	// Descending: 10 9 8 ... 1; p50 is position 5 (6), p90 position 9 (2),
	// p99 position round(9.9) = 10 (1).
	for p, want := range map[float64]float64{0.5: 6, 0.9: 2, 0.99: 1, 0.75: 3} {
		if got := RateAtPercentile(rates, p); got != want {
			t.Errorf("p%.0f = %v, want %v", p*100, got, want)
		}
	}
	if !math.IsNaN(RateAtPercentile(rates[:9], 0.5)) {
		t.Error("fewer than 10 seconds must give no percentile")
	}
}

// TestInsertRelativeWithHistory: the relative table of single runs per
// target. Without history its cells follow the 0.95/1.05 bands; with the
// host's history of l.i0 (s = 2%, 40 df) b's 1.30 and c's 0.60 are
// verdicts on the noise prior, single run (t = ln 1.3/(0.02·√2) = 9.3 on 40
// df), and their details say so; with a history of s = 30% neither can be
// told from noise (t = 0.62), so both are unknown.
func TestInsertRelativeWithHistory(t *testing.T) {
	ctx := context.Background()
	d := ibData(t)
	d.Experiment.ID = 1000 // history leaves the experiment itself out: not the store's experiment 1
	host := store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
	for i := range d.Runs {
		var m store.Manifest
		m.Host = host
		d.Runs[i].Engine, d.Runs[i].Manifest = "sqlite", m.JSON()
	}
	rel := func(t *testing.T, r *report.Report) report.Table { return mustTable(t, r, "Insert Benchmark relative") }
	plain := rel(t, report.Build(d))
	if c := plain.Rows[0].Cells[0]; c.Band != analysis.Better || c.Verdict != "" {
		t.Fatalf("no history: b's l.i0 %+v, want the plain better band and no verdict", c)
	}
	for _, c := range []struct {
		s            float64
		wantB, wantC string
	}{{0.02, "faster", "slower"}, {0.30, "unknown", "unknown"}} {
		st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		earlier := store.Experiment{Name: "earlier", Base: "x", Targets: []string{"x"}}
		if err := st.CreateExperiment(ctx, &earlier); err != nil {
			t.Fatal(err)
		}
		key := store.NoiseKey{Host: host.ID(), Engine: "sqlite", Test: noise.TestKey(d.Experiment, "l.i0"), Threads: 0}
		if err := st.SaveNoise(ctx, earlier.ID, []store.NoiseEntry{{NoiseKey: key, ExperimentID: earlier.ID,
			Config: "x", Runs: 41, DF: 40, LogVar: c.s * c.s}}); err != nil {
			t.Fatal(err)
		}
		if d.Noise, err = noise.Load(ctx, st, d.Experiment, d.Runs, d.Results); err != nil {
			t.Fatal(err)
		}
		st.Close()
		tb := rel(t, report.Build(d))
		for i, want := range []string{c.wantB, c.wantC} {
			cell := tb.Rows[i].Cells[0]
			if cell.Verdict != want || !strings.Contains(cell.Detail, "noise prior (41 history points) + repeats 1/1, single run") {
				t.Errorf("s=%g, %s's l.i0: verdict %q, detail %q; want %s on the noise prior, single run",
					c.s, tb.Rows[i].Label, cell.Verdict, cell.Detail, want)
			}
		}
	}
}
