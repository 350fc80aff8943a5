package cli

import (
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

// TestMetricsAddr scrapes --metrics-addr while a run is going and reads it
// with the Prometheus text parser; a non-loopback address exits 2.
func TestMetricsAddr(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	done := make(chan int)
	go func() {
		code, _, _ := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000", "--time", "4",
			"--warmup", "0", "--report-interval", "0", "--metrics-addr", addr, "--store", filepath.Join(dir, "r.db"))
		done <- code
	}()
	// Scrape until a sample of the measured step comes, for as long as the
	// run lasts (however slowly a busy machine gets to the step).
	var scraped bool
	code := -1
	for !scraped && code < 0 {
		select {
		case code = <-done:
			continue
		case <-time.After(300 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		var p expfmt.TextParser
		fams, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("Prometheus parser: %v", err)
		}
		ops := fams["benchlab_live_ops_per_second"]
		if ops == nil || len(ops.Metric) == 0 {
			continue
		}
		m := ops.Metric[0]
		labels := map[string]string{}
		for _, lp := range m.Label {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels["target"] != "sqlite" || labels["test"] != "point-query" || labels["threads"] != "1" || m.GetGauge().GetValue() <= 0 {
			t.Fatalf("live sample %v", m)
		}
		if lat := fams["benchlab_live_latency_seconds"]; lat == nil || len(lat.Metric) != 4 {
			t.Fatalf("latency family %v", lat)
		}
		// benchlab's own memory, apart from the embedded engine's.
		goMem, heap := fams["benchlab_go_memory_bytes"], fams["benchlab_go_heap_bytes"]
		if goMem == nil || heap == nil || len(goMem.Metric) != 1 || len(heap.Metric) != 1 {
			t.Fatalf("Go memory families %v %v", goMem, heap)
		}
		if g, h := goMem.Metric[0].GetGauge().GetValue(), heap.Metric[0].GetGauge().GetValue(); h <= 0 || g < h || g > 1<<30 {
			t.Fatalf("Go memory %.0f bytes, heap %.0f: want 0 < heap <= memory < 1 GiB", g, h)
		}
		classes := map[string]float64{}
		for _, m := range fams["benchlab_go_memory_class_bytes"].GetMetric() {
			classes[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
		if classes["total"] <= 0 || classes["heap/objects"] <= 0 {
			t.Fatalf("Go memory classes %v: want total and heap/objects", classes)
		}
		// SQLite's page caches: the run's connection has read pages.
		eng := fams["benchlab_engine_memory_bytes"]
		if eng == nil || len(eng.Metric) != 1 || eng.Metric[0].GetLabel()[0].GetValue() != "sqlite" || eng.Metric[0].GetGauge().GetValue() < 64<<10 {
			t.Fatalf("engine memory %v: want sqlite's, at least 64 KiB", eng)
		}
		scraped = true
	}
	if code < 0 {
		code = <-done
	}
	if code != ExitOK {
		t.Fatalf("run exit %d", code)
	}
	if !scraped {
		t.Fatal("no live metrics scraped during the run")
	}
	code, _, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--metrics-addr", "0.0.0.0:9464", "--store", filepath.Join(dir, "x.db"))
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "not a loopback address") {
		t.Errorf("non-loopback --metrics-addr: exit %d %q", code, stderr)
	}
}
