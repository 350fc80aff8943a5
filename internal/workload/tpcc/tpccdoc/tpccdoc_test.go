package tpccdoc_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/server/servertest"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload/tpcc"
	"benchlab/internal/workload/tpcc/tpccdoc"
)

func TestMain(m *testing.M) {
	ferretdb.ServeIfAsked()
	os.Exit(m.Run())
}

// specText is one warehouse, one terminal, 30 or 60 s of the mix on a ferretdb
// target with settings and tpcc options of the test's.
const specText = `name = "tpcc-doc"
[[target]]
name = "f"
engine = "ferretdb"
[target.settings]
%s
[workload]
suite = "tpcc"
threads = [%s]
write_time = "%s"
warmup = "500ms"
postwrite_wait = "0s"
report_interval = "0s"
[workload.tpcc]
warehouses = 1
%s
`

// parse reads the spec for settings and options into a temp work dir.
func parse(t *testing.T, settings, options string) (spec.Spec, error) {
	t.Helper()
	// One terminal: at two over SQLite, writers wait on each other's
	// SQLite locks (busy_timeout 10 s) behind whole-collection scans, and
	// a New-Order outlasts the measured time; one Payment by last name
	// reads all 30,000 customers, so SQLite measures 60 s.
	// Over PostgreSQL too: FerretDB v1 applies an update by reading the
	// document and writing it back, so two terminals' $inc on one
	// warehouse lose updates and condition 1 fails (seen here: w_ytd
	// 301787.83 against the districts' 305938.53).
	terminals, measure := "1", "60s"
	if strings.Contains(settings, "postgresql") {
		measure = "30s"
	}
	s, err := spec.Parse([]byte(fmt.Sprintf(specText, settings, terminals, measure, options)), "tpcc-doc.toml", "")
	if err != nil {
		return s, err
	}
	s.WorkDir = t.TempDir()
	s.Getenv, _ = servertest.Env(t)
	return s, s.Validate()
}

// run runs TPC-C on a ferretdb target and checks what every document run
// must show: the load, New-Orders committed in the standard mix, the
// options as facts, and the consistency conditions after the run.
func run(t *testing.T, settings, options string, want map[string]float64) {
	s, err := parse(t, settings, options)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, runs, err := servertest.Run(context.Background(), t, s, io.MultiWriter(&out, os.Stderr))
	t.Logf("log:\n%s", out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]store.Result{}
	for _, r := range res {
		steps[r.Test] = r
	}
	// About 600,000 documents; 300,000 with the order lines in their orders.
	if p := steps["prepare"]; p.Status != store.StatusOK || p.Rows < 290_000 || (p.Rows < 590_000 && want[tpccdoc.FactDenormalized] == 0) {
		t.Errorf("prepare: %s, %d documents; want ok and about 600,000 (300,000 denormalized)", p.Status, p.Rows)
	}
	m := steps["tpcc"]
	if m.Status != store.StatusOK || m.Rows == 0 || m.Metric != tpcc.TpmC.Name || m.Errors != 0 {
		t.Errorf("tpcc: %s, %d transactions, %d new orders, %d errors %v, metric %s", m.Status, m.Events, m.Rows,
			m.Errors, m.ErrorSamples, m.Metric)
	}
	f := m.Facts
	if f["new_order_ops"] < float64(m.Rows) || f["payment_ops"] == 0 ||
		f["new_order_ops"]+f["payment_ops"]+f["order_status_ops"]+f["delivery_ops"]+f["stock_level_ops"] != float64(m.Events) {
		t.Errorf("per-transaction facts %v do not add up to %d transactions with %d new orders", f, m.Events, m.Rows)
	}
	if _, departs := tpcc.CommittedMix(f); departs != "" {
		t.Errorf("committed mix departs from the standard one: %s", departs)
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("fact %s = %v, want %v", k, f[k], v)
		}
	}
	if m.Eff == nil || m.Eff.ServerCPU <= 0 {
		t.Errorf("tpcc: efficiency %+v; want the server's CPU", m.Eff)
	}
	if c, ok := steps["consistency"]; !ok || c.Status != store.StatusOK {
		t.Errorf("consistency check: %+v", c)
	}
	if !strings.Contains(out.String(), "hold after the load") {
		t.Errorf("no consistency check after the load in the log")
	}
	t.Logf("%.0f tpmC, %d transactions, %.0f retries", m.Throughput(), m.Events, f[store.FactRetries])
	servertest.NoProcs(t, s.WorkDir)
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct{ settings, options, want string }{
		{"", "transactions = true", "tpcc.transactions"},
		{"", `read_preference = "closest"`, "tpcc.read_preference"},
		{`backend = "mysql"`, "", "settings.backend"},
	} {
		_, err := parse(t, c.settings, c.options)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v; want an error naming %s", c.settings, c.options, err, c.want)
		}
	}
}
