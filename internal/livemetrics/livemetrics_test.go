package livemetrics

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"benchlab/internal/runner"
)

// TestServe records one second of a role and reads /metrics back with the
// Prometheus text parser: its rate and latency quantiles carry the role's
// labels. A second of no time is left out, and an address off the loopback
// is refused.
func TestServe(t *testing.T) {
	if _, err := Start("192.0.2.1:9464"); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("Start on 192.0.2.1: %v, want a refusal naming the loopback", err)
	}
	if _, err := Start("9464"); err == nil || !strings.Contains(err.Error(), "is not host:port") {
		t.Errorf("Start on 9464: %v, want host:port asked for", err)
	}
	lm, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	lm.Record("pg16", runner.LiveSample{Test: "point-query", Role: "reader", Threads: 4, Seconds: 0.5, Events: 600,
		Statements: 1200, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond, Max: 20 * time.Millisecond})
	lm.Record("pg15", runner.LiveSample{Test: "point-query", Threads: 4, Seconds: 0, Events: 10})
	resp, err := http.Get("http://" + lm.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("Prometheus parser: %v", err)
	}
	ops := fams["benchlab_live_ops_per_second"]
	if ops == nil || len(ops.Metric) != 1 {
		t.Fatalf("ops per second: %v, want the one role with time", ops)
	}
	labels := map[string]string{}
	for _, l := range ops.Metric[0].Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["target"] != "pg16" || labels["role"] != "reader" || labels["threads"] != "4" || ops.Metric[0].GetGauge().GetValue() != 1200 {
		t.Errorf("ops per second %v with labels %v, want 1200 for pg16's reader at 4 threads", ops.Metric[0].GetGauge().GetValue(), labels)
	}
	lat := fams["benchlab_live_latency_seconds"]
	if lat == nil || len(lat.Metric) != 4 {
		t.Fatalf("latency quantiles: %v, want 4", lat)
	}
	if fams["benchlab_go_heap_bytes"] == nil {
		t.Errorf("no benchlab_go_heap_bytes among %d families", len(fams))
	}
}
