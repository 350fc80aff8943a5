package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"
	"time"

	"benchlab/internal/store"
)

func exportData() *Data {
	started := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	return &Data{
		Experiment: store.Experiment{ID: 4, Name: "x", Base: "a", Targets: []string{"a"}, Spec: "name = \"x\"\n", Created: started},
		Runs:       []store.Run{{ID: 9, ExperimentID: 4, Target: "a", Engine: "postgres", Version: "15.10", Repeat: 1, Status: "ok", Manifest: `{"seed":1}`}},
		Results: map[int64][]store.Result{9: {
			{RunID: 9, Seq: 1, Test: "prepare", Action: true, Warm: true, Metric: "qps", Status: "ok", Started: started, Seconds: 2, Rows: 5000, DBBytes: 8192},
			{RunID: 9, Seq: 2, Test: "point-query", Family: "point-query", Group: "point queries", Threads: 2, Metric: "qps",
				Status: "ok", Started: started, Seconds: 4, Events: 1000, Statements: 2000, Rows: 1000, Errors: 1,
				Latency: store.Latency{P50: 1500 * time.Microsecond, P99: 3 * time.Millisecond, Max: time.Second},
				Eff: &store.Efficiency{Seconds: 4, ServerCPU: 2, ClientCPU: store.NotMeasured, ServerReadBytes: 4096,
					ServerWriteBytes: store.NotReadable, DevReads: 7, MachineCPU: 8, MachineBusy: 4, MachineSteal: 0.8},
				Facts:     map[string]float64{"client_gomaxprocs": 3},
				Intervals: []store.Interval{{Sec: 0, Seconds: 1, Events: 250, Statements: 500, P95: 2 * time.Millisecond}},
				Internals: []store.EngineSeries{
					{Name: "pg_stat_bgwriter.buffers_checkpoint", Points: []store.EnginePoint{{Sec: 0, Value: 120}, {Sec: 1, Value: 30}}},
					{Name: "pg_exact.wal_insert_bytes", Gauge: true, Points: []store.EnginePoint{{Sec: 1, Value: 4096}}},
				}},
		}},
	}
}

// TestWriteCSV checks one line per result under a header of the same width,
// rates computed from the counts, and empty cells for counters that were
// not measured or not readable.
func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, exportData()); err != nil {
		t.Fatal(err)
	}
	lines, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 results", len(lines))
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	row := lines[2]
	for name, want := range map[string]string{"test": "point-query", "target": "a", "version": "15.10", "threads": "2",
		"qps": "500", "tps": "250", "lat_p50_ms": "1.5", "lat_max_ms": "1000", "server_cpu_s": "2", "client_cpu_s": "",
		"server_read_bytes": "4096", "server_write_bytes": "", "device_reads": "7", "steal_pct": "10", "errors": "1"} {
		if got := row[col[name]]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := lines[1][col["db_bytes"]]; got != "8192" {
		t.Errorf("prepare db_bytes = %q, want 8192", got)
	}
}

// TestWriteJSON checks that the document carries the spec, each run's
// manifest as JSON, and every result with its facts and 1-second series.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, exportData()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name      string
		Spec      string
		Manifests map[string]map[string]any
		Results   []map[string]any
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "x" || doc.Spec == "" || doc.Manifests["9"]["seed"] != 1.0 || len(doc.Results) != 2 {
		t.Fatalf("document %+v", doc)
	}
	r := doc.Results[1]
	if r["qps"] != 500.0 || r["client_cpu_s"] != nil || r["server_cpu_s"] != 2.0 {
		t.Errorf("result %v", r)
	}
	if f, _ := r["facts"].(map[string]any); f["client_gomaxprocs"] != 3.0 {
		t.Errorf("facts %v", r["facts"])
	}
	if iv, _ := r["intervals"].([]any); len(iv) != 1 || iv[0].(map[string]any)["p95_ms"] != 2.0 {
		t.Errorf("intervals %v", r["intervals"])
	}
	es, _ := r["engine_series"].([]any)
	if len(es) != 2 {
		t.Fatalf("engine series %v, want 2", r["engine_series"])
	}
	first := es[0].(map[string]any)
	pts, _ := first["points"].([]any)
	if first["name"] != "pg_stat_bgwriter.buffers_checkpoint" || first["kind"] != "counter" || first["unit"] != "/s" ||
		len(pts) != 2 || pts[1].(map[string]any)["value"] != 30.0 || pts[1].(map[string]any)["time"] != "2026-11-23T10:00:02Z" {
		t.Errorf("engine series %v", first)
	}
	if g := es[1].(map[string]any); g["kind"] != "gauge" || g["unit"] != "" {
		t.Errorf("gauge %v", g)
	}
}

// TestWriteEngineSeriesCSV checks one line per stored point of an engine
// series, with its result's identity, the series' kind and unit, and the
// second's wall-clock end.
func TestWriteEngineSeriesCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteEngineSeriesCSV(&b, exportData()); err != nil {
		t.Fatal(err)
	}
	lines, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and the three stored points:\n%v", len(lines), lines)
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	for name, want := range map[string]string{"test": "point-query", "target": "a", "name": "pg_stat_bgwriter.buffers_checkpoint",
		"kind": "counter", "unit": "/s", "sec": "1", "time": "2026-11-23T10:00:02Z", "value": "30"} {
		if got := lines[2][col[name]]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if lines[3][col["kind"]] != "gauge" || lines[3][col["value"]] != "4096" {
		t.Errorf("gauge line %v", lines[3])
	}
}

// TestWriteSeriesCSV checks one line per stored second with its result's
// identity and the second's rates.
func TestWriteSeriesCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSeriesCSV(&b, exportData()); err != nil {
		t.Fatal(err)
	}
	lines, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want a header and the one stored second", len(lines))
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	for name, want := range map[string]string{"test": "point-query", "threads": "2", "sec": "0", "qps": "500",
		"tps": "250", "p95_ms": "2"} {
		if got := lines[1][col[name]]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
