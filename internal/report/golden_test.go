package report_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/golden"
	"benchlab/internal/importer"
	"benchlab/internal/metric"
	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload/cluster"
)

// The header prints times in the local zone; the golden files hold UTC
// whatever the machine's zone.
func init() { time.Local = time.UTC }

// goldenDay is when every golden experiment was created and ran.
var goldenDay = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// checkGolden renders r as text and as Markdown and compares each with
// its file under testdata (go test -update rewrites them), and checks the
// HTML page opens with the summary too.
func checkGolden(t *testing.T, name string, d *report.Data) *report.Report {
	t.Helper()
	r := report.Build(d)
	var txt, md, page bytes.Buffer
	if err := report.WriteText(&txt, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", name+".txt"), txt.String())
	golden.Check(t, filepath.Join("testdata", name+".md"), md.String())
	if err := report.WriteHTML(&page, d, r); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	sum, head := strings.Index(html, `<section class="summary">`), strings.Index(html, `<ul class="header">`)
	if sum < 0 || head < 0 || sum > head {
		t.Errorf("%s: the HTML page does not open with the summary (summary at %d, header at %d)", name, sum, head)
	}
	for _, want := range []string{"Summary:\n", strings.TrimSpace(r.Summary[0])} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("%s: text lacks %q", name, want)
		}
	}
	if !strings.HasPrefix(md.String(), "# "+r.Title+"\n\n**Summary**\n") {
		t.Errorf("%s: the Markdown does not start with the summary:\n%.300s", name, md.String())
	}
	return r
}

// goldenSpec is a stored spec of suite with tests and threads.
func goldenSpec(t *testing.T, suite string, tests []string, threads []int, repeats int) string {
	t.Helper()
	sp := spec.Default()
	sp.Name, sp.Workload.Suite, sp.Workload.Tests, sp.Workload.Threads, sp.Workload.Repeats = "golden", suite, tests, threads, repeats
	return sp.TOML()
}

// TestGoldenCompare is two targets of eight repeats: b is 20% slower at
// update-index with twice the server CPU per statement, its third repeat
// stalled for seconds 12-18 (worst latency 7008 ms), and the latencies
// stored reach p99.9 and max. The summary names the change, its evidence
// and the CPU cue; the latency table shows every stored percentile; the
// stall note names its seconds and latency.
func TestGoldenCompare(t *testing.T) {
	d := &report.Data{Experiment: store.Experiment{ID: 7, Name: "golden-compare", Base: "a", Targets: []string{"a", "b"},
		Created: goldenDay, Spec: goldenSpec(t, "sysbench", []string{"point-query", "update-index"}, []int{4}, 8)},
		Results: map[int64][]store.Result{}}
	id := int64(0)
	for _, target := range []string{"a", "b"} {
		for rep := 1; rep <= 8; rep++ {
			id++
			m := store.Manifest{Host: store.Host{Hostname: "h", CPUModel: "cpu", Cores: 2}}
			d.Runs = append(d.Runs, store.Run{ID: id, Target: target, Engine: "sqlite", Version: "3.46.0", Repeat: rep,
				Status: store.StatusOK, Started: goldenDay, Ended: goldenDay.Add(time.Minute), Manifest: m.JSON()})
			for seq, test := range []string{"point-query", "update-index"} {
				qps := int64(10_000 + 10*rep)
				serverCPU := 0.3
				if test == "update-index" {
					qps = int64(2_000 + 5*rep)
					if target == "b" {
						qps, serverCPU = int64(1_600+5*rep), 0.6
					}
				}
				res := store.Result{RunID: id, Seq: seq + 1, Test: test, Family: test, Group: "writes", Threads: 4, Metric: "qps",
					Status: store.StatusOK, Started: goldenDay, Seconds: 30, Events: 30 * qps, Statements: 30 * qps,
					Latency: store.Latency{P50: 400 * time.Microsecond, P95: 900 * time.Microsecond, P99: 2 * time.Millisecond,
						P999: 9 * time.Millisecond, Max: 40 * time.Millisecond},
					Eff: &store.Efficiency{Seconds: 30, ServerCPU: serverCPU * 30, ClientCPU: 0.1 * 30, ServerReadBytes: 0,
						ServerWriteBytes: 30 * qps * 4096, ClientReadBytes: 0, ClientWriteBytes: 0}}
				if test == "point-query" {
					res.Group = "point queries"
				}
				for sec := range 30 {
					iv := store.Interval{Sec: sec, Seconds: 1, Events: qps, Statements: qps, Max: 3 * time.Millisecond}
					if target == "b" && rep == 3 && test == "update-index" && sec >= 12 && sec <= 18 {
						iv.Events, iv.Statements, iv.Max = 0, 0, 0
						if sec == 18 {
							iv.Max = 7008 * time.Millisecond
						}
					}
					res.Intervals = append(res.Intervals, iv)
				}
				d.Results[id] = append(d.Results[id], res)
			}
		}
	}
	r := checkGolden(t, "compare", d)
	sum := strings.Join(r.Summary, "\n")
	for _, want := range []string{"1 of 2 cells changed beyond noise (1 slower, 0 faster)", "update-index @4: b is 0.80x a's",
		"why (update-index on b): cpu us/op server"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// TestGoldenImportedSysbench is an imported sysbench file (the importer's
// own test file): its p95 and max are in the latency table, not n/a.
func TestGoldenImportedSysbench(t *testing.T) {
	path := filepath.Join("..", "importer", "testdata", "sysbench-point-select.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := importer.Parse(importer.Sysbench, "point-query.1.txt", data, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	src := store.ImportSource{Tool: "sysbench", File: "/data/point-query.1.txt", SHA256: hex.EncodeToString(sum[:]),
		ToolVersion: out.Version, Imported: goldenDay}
	m := store.Manifest{Import: &src}
	d := &report.Data{Experiment: store.Experiment{ID: 3, Name: "imported", Base: "pg16", Targets: []string{"pg16"},
		Created: goldenDay, Spec: goldenSpec(t, "sysbench", []string{"point-query"}, []int{2}, 1)},
		Runs: []store.Run{{ID: 1, Target: "pg16", Engine: "postgres", Version: out.EngineVersion, Repeat: 1,
			Status: store.StatusOK, Started: goldenDay, Ended: goldenDay, Manifest: m.JSON()}},
		Results: map[int64][]store.Result{1: out.Results}}
	r := checkGolden(t, "imported", d)
	lat := findTable(r, "Latency per event")
	if lat == nil || strings.Join(lat.Columns, ",") != "pg16 p95,pg16 max,pg16 err %" {
		t.Fatalf("latency table %+v; want the p95 and max sysbench printed", lat)
	}
	if c := lat.Rows[0].Cells[0]; c.Missing || c.Value < 0.0599 || c.Value > 0.0601 {
		t.Errorf("imported p95 cell %+v; want 0.06 ms", c)
	}
}

// TestGoldenCluster is one galera target's stale-read, write-scaling (2
// nodes: 2 failed transactions, 400 retries) and failover steps
// with the facts the suite stores (stale lags p50 67 ms, p99 279 ms; the
// probe's outage, longest gap, failed tries, recovery; writers' errors and
// retries) and a planned kill of node 2 at 5 s: the cluster tables show
// them with units, the kill is reported as planned, and its dip is not
// called unstable.
func TestGoldenCluster(t *testing.T) {
	m := store.Manifest{Host: store.Host{Hostname: "h", CPUModel: "cpu", Cores: 2}}
	d := &report.Data{Experiment: store.Experiment{ID: 9, Name: "galera", Base: "g3", Targets: []string{"g3"},
		Created: goldenDay, Spec: goldenSpec(t, "cluster", []string{cluster.StaleRead, cluster.WriteScaling, cluster.Failover}, []int{4}, 1)},
		Runs: []store.Run{{ID: 1, Target: "g3", Engine: "galera", Version: "11.4.2", Repeat: 1, Status: store.StatusOK,
			Started: goldenDay, Ended: goldenDay.Add(time.Minute), Manifest: m.JSON()}}}
	series := func(perSec int64, dip bool) []store.Interval {
		var ivs []store.Interval
		for sec := range 20 {
			iv := store.Interval{Sec: sec, Seconds: 1, Events: perSec, Statements: perSec, Max: 5 * time.Millisecond}
			if dip && sec >= 5 && sec <= 11 {
				iv.Events, iv.Statements = 0, 0
			}
			ivs = append(ivs, iv)
		}
		return ivs
	}
	d.Results = map[int64][]store.Result{1: {
		{RunID: 1, Seq: 1, Test: cluster.StaleRead, Family: cluster.StaleRead, Group: cluster.Group, Threads: 4, Metric: "stale_share",
			Status: store.StatusOK, Seconds: 20, Events: 40_000, Statements: 40_000, Rows: 1_200, Role: store.RoleInfo{Name: "reader"},
			Latency:   store.Latency{P50: time.Millisecond, P99: 4 * time.Millisecond, Max: 12 * time.Millisecond},
			Intervals: series(2000, false),
			Facts: map[string]float64{"stale_reads_total": 1_300, "reads_total": 44_000, "writer_acks_total": 9_000,
				"stale_lag_p50_ms": 67, "stale_lag_p99_ms": 279, "stale_lag_max_ms": 412}},
		{RunID: 1, Seq: 1, Test: cluster.StaleRead, Family: cluster.StaleRead, Group: cluster.Group, Threads: 1, Metric: "cluster_wps",
			Status: store.StatusOK, Seconds: 20, Events: 9_000, Statements: 9_000, Errors: 3,
			Role: store.RoleInfo{Name: "writer", Secondary: true}, Facts: map[string]float64{store.FactRetries: 12}},
		{RunID: 1, Seq: 2, Test: cluster.WriteScaling + "_nodes=2", Family: cluster.WriteScaling, Group: cluster.Group, Threads: 4,
			Metric: "cluster_wps", Status: store.StatusOK, Seconds: 20, Events: 20_000, Statements: 40_000, Errors: 2,
			Latency: store.Latency{P50: 2 * time.Millisecond, P99: 9 * time.Millisecond}, Intervals: series(1000, false),
			Facts: map[string]float64{store.FactRetries: 400, store.FactRetried: 380}},
		{RunID: 1, Seq: 3, Test: cluster.Failover, Family: cluster.Failover, Group: cluster.Group, Threads: 4, Metric: "downtime_s",
			Status: store.StatusOK, Seconds: 20, Events: 300, Statements: 300, Rows: 6_480, Role: store.RoleInfo{Name: "probe"},
			Intervals: series(15, true), Errors: 0,
			Facts: map[string]float64{"failover_max_gap_ms": 6_950, "failover_errors": 108, "failover_recovery_s": 7.4,
				"failover_killed_node": 2, "failover_kill_at_s": 5, "failover_writes_after_kill": 4_100,
				"failover_outage_open_at_end": 0}},
		{RunID: 1, Seq: 3, Test: cluster.Failover, Family: cluster.Failover, Group: cluster.Group, Threads: 4, Metric: "cluster_wps",
			Status: store.StatusOK, Seconds: 20, Events: 16_000, Statements: 16_000, Errors: 30,
			ErrorSamples: []string{"Error 1047 (08S01): WSREP has not yet prepared node for application use"},
			Role:         store.RoleInfo{Name: "writers", Secondary: true}, Facts: map[string]float64{store.FactRetries: 95}},
	}}
	for _, rs := range d.Results {
		metric.Fill(rs) // as the runner stamps what it stores
	}
	r := checkGolden(t, "cluster", d)
	var txt bytes.Buffer
	if err := report.WriteText(&txt, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	text := txt.String()
	for _, want := range []string{"67.0 ms", "279 ms", "Cluster: write scaling conflicts", "6950 ms", "7.40 s", "node 2", "node 2 killed by benchlab as planned at 5.0 s",
		"failover: node 2 killed by benchlab at 5.0 s (planned)",
		"30 failed operations during the planned disruption (node 2 killed by benchlab at 5.0 s), expected"} {
		if !strings.Contains(text, want) && !strings.Contains(strings.Join(r.Notes, "\n"), want) {
			t.Errorf("cluster report lacks %q", want)
		}
	}
	if strings.Contains(text, "unstable: failover") {
		t.Error("the planned kill's dip is called unstable")
	}
}

func findTable(r *report.Report, title string) *report.Table {
	for i := range r.Tables {
		if r.Tables[i].Title == title {
			return &r.Tables[i]
		}
	}
	return nil
}
