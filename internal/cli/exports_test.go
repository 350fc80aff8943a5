package cli

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/common/expfmt"

	"benchlab/internal/store"
)

// TestExports runs two experiments and reads each export back with a real
// parser: Python's csv and json modules for --all, the Prometheus text
// parser, HdrHistogram's log reader, and the wall-clock times of the series.
func TestExports(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to read the exports back")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	for _, name := range []string{"one", "two"} {
		sp := writeFile(t, dir, name+".toml", "name = \""+name+"\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+pointQueryWorkload)
		if code, _, stderr := run(t, Env{}, "run", sp, "--store", db); code != ExitOK {
			t.Fatalf("run %s: %d %s", name, code, stderr)
		}
	}
	export := func(file string, args ...string) string {
		t.Helper()
		p := filepath.Join(dir, file)
		code, _, stderr := run(t, Env{}, append([]string{"report", "--store", db, "-o", p}, args...)...)
		if code != ExitOK {
			t.Fatalf("report %v: exit %d %s", args, code, stderr)
		}
		return p
	}
	allCSV := export("all.csv", "--all")
	allJSON := export("all.json", "--all", "--format", "JSON")
	series := export("series.csv", "--name", "t*", "--series")
	py := `
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
exps = sorted({r["experiment"] for r in rows})
assert exps == ["1", "2"], exps
assert all(float(r["qps"]) > 0 for r in rows if r["test"] == "point-query"), rows
doc = json.load(open(sys.argv[2]))
assert [(e["experiment"], e["name"]) for e in doc["experiments"]] == [(1, "one"), (2, "two")], doc.keys()
assert all(iv["time"].endswith("Z") for e in doc["experiments"] for r in e["results"] for iv in r.get("intervals", []))
assert any(r.get("intervals") for e in doc["experiments"] for r in e["results"])
assert sum(len(e["results"]) for e in doc["experiments"]) == len(rows), (len(rows),)
ser = list(csv.DictReader(open(sys.argv[3])))
assert ser and {r["experiment"] for r in ser} == {"2"}, "the glob t* picks experiment two only"
print("ok", len(rows), len(ser))
`
	out, err := exec.Command("python3", "-c", py, allCSV, allJSON, series).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("python reading the exports: %v\n%s", err, out)
	}
	// Series times are the wall clock of each interval's end, within the run.
	f, _ := os.Open(series)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || recs[0][9] != "time" {
		t.Fatalf("series header %v %v", recs[0], err)
	}
	st, _ := store.Open(db)
	runs, _ := st.Runs(context.Background(), 2)
	st.Close()
	for _, r := range recs[1:] {
		tm, err := time.Parse(time.RFC3339Nano, r[9])
		if err != nil || tm.Before(runs[0].Started) || tm.After(runs[0].Ended.Add(time.Second)) {
			t.Errorf("series time %q outside run 2 (%s .. %s)", r[9], runs[0].Started, runs[0].Ended)
		}
	}

	prom := export("b.prom", "--all")
	pf, _ := os.Open(prom)
	var parser expfmt.TextParser
	fams, err := parser.TextToMetricFamilies(pf)
	pf.Close()
	if err != nil {
		t.Fatalf("Prometheus parser: %v", err)
	}
	tp := fams["benchlab_throughput"]
	lat := fams["benchlab_latency_seconds"]
	if tp == nil || len(tp.Metric) != 2 || lat == nil || len(lat.Metric) != 10 {
		t.Fatalf("families %v", fams)
	}
	for _, m := range tp.Metric {
		if m.GetGauge().GetValue() <= 0 {
			t.Errorf("throughput %v", m)
		}
	}

	hlog := export("lat.hlog", "--experiment", "1")
	hf, _ := os.Open(hlog)
	defer hf.Close()
	lr := hdr.NewHistogramLogReader(hf)
	h, err := lr.NextIntervalHistogram()
	if err != nil || h == nil {
		t.Fatalf("HDR log reader: %v", err)
	}
	if h.TotalCount() < 100 || !strings.Contains(h.Tag(), "e1/a/point-query@1/r1") || h.ValueAtQuantile(50) <= 0 {
		t.Errorf("HDR histogram read back: count %d tag %q p50 %d", h.TotalCount(), h.Tag(), h.ValueAtQuantile(50))
	}
	code, out2, _ := run(t, Env{}, "report", "--store", db, "--format", "hdr-percentiles")
	if code != ExitOK || !strings.Contains(out2, "Value\tPercentile\tTotalCount\t1/(1-Percentile)") {
		t.Errorf("hdr-percentiles: exit %d\n%.500s", code, out2)
	}
	// The terminal report fits 120 columns: wide tables split by columns.
	code, text, _ := run(t, Env{}, "report", "--store", db, "--color", "never")
	if code != ExitOK || !strings.Contains(text, "(continued)") {
		t.Errorf("text report: exit %d, no table split:\n%s", code, text)
	}
	for _, l := range strings.Split(text, "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("report line of %d columns: %q", n, l)
		}
	}
	for _, bad := range [][]string{{"--all", "--format", "text"}, {"--all", "--experiment", "1", "--format", "csv"},
		{"--name", "[", "--format", "csv"}, {"--name", "zz*", "--format", "csv"}, {"-o", filepath.Join(dir, "x.parquet")}} {
		if code, _, stderr := run(t, Env{}, append([]string{"report", "--store", db}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d %q, want %d", bad, code, stderr, ExitUsage)
		}
	}
}
