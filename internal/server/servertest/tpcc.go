package servertest

import (
	"fmt"
	"testing"

	"benchlab/internal/store"
	"benchlab/internal/workload/tpcc"
)

const tpccSpec = `name = "tpcc-%[1]s"
[[target]]
name = "only"
engine = %[1]q
[workload]
suite = "tpcc"
threads = [2]
write_time = "2m"
events = 200
warmup = "500ms"
postwrite_wait = "0s"
report_interval = "0s"
[workload.tpcc]
warehouses = 1
`

// TPCC runs TPC-C at one warehouse with two terminals on a managed server
// through `benchlab run`: the load, the measured mix with New-Orders
// committed, and TPC-C's consistency conditions 1-4 holding afterwards.
// The measured step is bounded by a count, 200 transactions (write_time
// only caps it), not by a duration: a busy machine did 26 in 3 s, where
// the chance that none of them was a Delivery (4% of the mix) is 0.96^26,
// 35%; at 200 it is 0.96^200 = 3e-4.
// Deadlocks the engine resolves by failing a transaction are allowed, up to
// 5% of them.
func TPCC(t *testing.T, engineName string) {
	res := runOneTarget(t, fmt.Sprintf(tpccSpec, engineName))
	steps := map[string]store.Result{}
	for _, r := range res {
		steps[r.Test] = r
	}
	if p := steps["prepare"]; p.Status != store.StatusOK || p.Rows < 590_000 {
		t.Errorf("prepare: %s, %d rows; want ok and about 600,000 rows", p.Status, p.Rows)
	}
	m := steps["tpcc"]
	if m.Status != store.StatusOK || m.Rows == 0 || m.Metric != tpcc.TpmC.Name || m.Errors*20 > m.Events {
		t.Errorf("tpcc: %s, %d transactions, %d new orders, %d errors %v, metric %s", m.Status, m.Events, m.Rows,
			m.Errors, m.ErrorSamples, m.Metric)
	}
	// New-Order is 45% of the mix, 1% of it rolled back.
	if share := float64(m.Rows) / float64(m.Events); m.Events > 200 && (share < 0.35 || share > 0.55) {
		t.Errorf("new orders are %.2f of %d transactions, want about 0.45", share, m.Events)
	}
	// Each transaction's count is kept; New-Orders include the 1% rolled back.
	if f := m.Facts; f["new_order_ops"] < float64(m.Rows) || f["payment_ops"] == 0 || f["delivery_ops"] == 0 ||
		f["new_order_ops"]+f["payment_ops"]+f["order_status_ops"]+f["delivery_ops"]+f["stock_level_ops"] != float64(m.Events) {
		t.Errorf("per-transaction facts %v do not add up to %d transactions with %d new orders", f, m.Events, m.Rows)
	}
	if c, ok := steps["consistency"]; !ok || c.Status != store.StatusOK {
		t.Errorf("consistency check: %+v", c)
	}
	t.Logf("%s: %.0f tpmC, %d transactions, %d errors", engineName, m.Throughput(), m.Events, m.Errors)
}
