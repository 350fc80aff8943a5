package mariadbreplicas

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"benchlab/internal/engine"
)

// statusCounters are the global status counters read on every node: the
// statements and InnoDB rows written, the binlog bytes, and the
// semi-synchronous commits acknowledged by a replica (yes_tx) or not
// (no_tx, after rpl_semi_sync_master_timeout: those were asynchronous).
var statusCounters = []string{"com_insert", "com_update", "innodb_rows_inserted", "innodb_rows_updated", "innodb_data_written",
	"binlog_bytes_written", "rpl_semi_sync_master_yes_tx", "rpl_semi_sync_master_no_tx"}

// statusGauges are levels: the semi-synchronous replicas connected, the
// primary's average wait for their acknowledgement (µs), and whether
// semi-sync is on now (it turns off after a timeout).
var statusGauges = []string{"rpl_semi_sync_master_clients", "rpl_semi_sync_master_tx_avg_wait_time", "rpl_semi_sync_master_status"}

// NodeCounters reads every live node's global status.
func (db *DB) NodeCounters(ctx context.Context) ([]engine.NodeReading, error) {
	names := append(append([]string{}, statusCounters...), statusGauges...)
	q := "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE LOWER(VARIABLE_NAME) IN ('" +
		strings.Join(names, "','") + "')"
	out := make([]engine.NodeReading, len(db.nodes))
	for i := range db.nodes {
		out[i] = engine.NodeReading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
		if db.set.Killed(i) {
			continue
		}
		rows, err := db.roots[i].QueryContext(ctx, q)
		if err != nil {
			continue
		}
		for rows.Next() {
			var k, v string
			if rows.Scan(&k, &v) != nil {
				continue
			}
			if v == "ON" {
				v = "1"
			} else if v == "OFF" {
				v = "0"
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			if slices.Contains(statusGauges, k) {
				out[i].Gauges[k] = f
			} else {
				out[i].Counters[k] = f
			}
		}
		rows.Close()
	}
	return out, nil
}
