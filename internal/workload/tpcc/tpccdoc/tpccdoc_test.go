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
	g "benchlab/internal/workload/tpcc/tpccgen"
)

// TestSQLite loads one warehouse at py-tpcc's scale factor 100 into
// FerretDB over SQLite (as released: no id_index), runs 40 transactions of the mix on one terminal and
// checks the consistency conditions after the load and after the run.
func TestSQLite(t *testing.T) {
	run(t, scenario{options: "scalefactor = 100"}, map[string]float64{tpccdoc.FactDocument: 1, tpccdoc.FactDenormalized: 0,
		tpccdoc.FactFindAndModify: 1, tpccdoc.FactScaleFactor: 100})
}

// TestPostgreSQL does the same at scale factor 10 over a PostgreSQL
// benchlab manages, with the order lines embedded in their orders, no
// findAndModify, and the backend's GIN indexes for lookups by _id and by
// the declared indexes' fields (backend_indexes, with id_index's).
func TestPostgreSQL(t *testing.T) {
	run(t, scenario{settings: "backend = \"postgresql\"\nbackend_indexes = true", options: "scalefactor = 10\ndenormalize = true\nfind_and_modify = false"},
		map[string]float64{tpccdoc.FactDocument: 1, tpccdoc.FactDenormalized: 1, tpccdoc.FactFindAndModify: 0,
			tpccdoc.FactScaleFactor: 10})
}

func TestMain(m *testing.M) {
	ferretdb.ServeIfAsked()
	os.Exit(m.Run())
}

// specText is one warehouse at a scale factor, terminals and a bounded
// count of transactions (write_time only bounds a hung run) on a ferretdb
// target with settings and tpcc options of the test's.
const specText = `name = "tpcc-doc"
[[target]]
name = "f"
engine = "ferretdb"
[target.settings]
%s
[workload]
suite = "tpcc"
threads = [%d]
events = %d
write_time = "10m"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
[workload.tpcc]
warehouses = 1
%s
`

// scenario is one run: the target's settings, the tpcc options, the
// terminals and the transactions to count.
type scenario struct {
	settings, options string
	terminals         int
	events            int
}

// parse reads the spec of sc into a temp work dir.
func parse(t *testing.T, sc scenario) (spec.Spec, error) {
	t.Helper()
	if sc.terminals == 0 {
		sc.terminals = 1
	}
	if sc.events == 0 {
		sc.events = 40
	}
	s, err := spec.Parse([]byte(fmt.Sprintf(specText, sc.settings, sc.terminals, sc.events, sc.options)), "tpcc-doc.toml", "")
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
func run(t *testing.T, sc0 scenario, want map[string]float64) {
	s, err := parse(t, sc0)
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
	// Items and stock, the warehouse and its districts, customers, history
	// and orders, new orders, and 5 to 15 lines per order unless embedded.
	sc := g.ScaleOf(want[tpccdoc.FactScaleFactor])
	fixed := int64(2*sc.Items + 11 + 30*sc.Customers + 10*sc.NewOrders)
	lo, hi := fixed, fixed
	if want[tpccdoc.FactDenormalized] == 0 {
		lo, hi = fixed+int64(50*sc.Orders()), fixed+int64(150*sc.Orders())
	}
	if p := steps["prepare"]; p.Status != store.StatusOK || p.Rows < lo || p.Rows > hi {
		t.Errorf("prepare: %s, %d documents; want ok and %d to %d", p.Status, p.Rows, lo, hi)
	}
	m := steps["tpcc"]
	if m.Status != store.StatusOK || m.Rows == 0 || m.Events < int64(sc0.events) || m.Metric != tpcc.TpmC.Name || m.Errors != 0 {
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
	if strings.Contains(sc0.settings, "_index") != strings.Contains(out.String(), "backend indexes added") {
		t.Errorf("settings %q, and the log says of backend indexes: %v", sc0.settings, strings.Contains(out.String(), "backend indexes added"))
	}
	if !strings.Contains(out.String(), "hold after the load") {
		t.Errorf("no consistency check after the load in the log")
	}
	t.Logf("%.0f tpmC, %d transactions, %.0f retries", m.Throughput(), m.Events, f[store.FactRetries])
	for _, k := range g.Kinds {
		t.Logf("%-12s %3.0f done, p50 %8.1f ms, p99 %8.1f ms", k, f[k+"_ops"], f[k+"_p50_ms"], f[k+"_p99_ms"])
	}
	servertest.NoProcs(t, s.WorkDir)
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct{ settings, options, want string }{
		{"", "scalefactor = 0.5", "tpcc.scalefactor"},
		{"", "transactions = true", "tpcc.transactions"},
		{"", `read_preference = "closest"`, "tpcc.read_preference"},
		{`backend = "mysql"`, "", "settings.backend"},
	} {
		_, err := parse(t, scenario{settings: c.settings, options: c.options})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v; want an error naming %s", c.settings, c.options, err, c.want)
		}
	}
}
