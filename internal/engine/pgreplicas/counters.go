package pgreplicas

import (
	"context"
	"strconv"

	"benchlab/internal/engine"
)

// counterQuery reads a node's counters of the benchmark database
// (pg_stat_database: commits, rollbacks, rows written, blocks read and
// hit, recovery conflicts on a replica, deadlocks) and its levels: whether
// it is in recovery (a replica) and how many replicas stream from it.
const counterQuery = `SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, blks_read, blks_hit,
  conflicts, deadlocks, pg_is_in_recovery()::int, (SELECT count(*) FROM pg_stat_replication)
FROM pg_stat_database WHERE datname = current_database()`

// counterNames name counterQuery's columns; the last two are gauges.
var counterNames = []string{"xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted", "blks_read", "blks_hit",
	"conflicts", "deadlocks", "in_recovery", "replicas_streaming"}

// NodeCounters reads every live node's counters, one connection each.
func (db *DB) NodeCounters(ctx context.Context) ([]engine.NodeReading, error) {
	out := make([]engine.NodeReading, len(db.nodes))
	for i := range db.nodes {
		out[i] = engine.NodeReading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
		if db.set.Killed(i) {
			continue
		}
		c, err := db.ConnectNode(ctx, i)
		if err != nil {
			continue
		}
		rows, err := c.Values(ctx, counterQuery)
		c.Close()
		if err != nil || len(rows) != 1 || len(rows[0]) != len(counterNames) {
			continue
		}
		for k, name := range counterNames {
			v, err := strconv.ParseFloat(rows[0][k], 64)
			if err != nil {
				continue
			}
			if k >= len(counterNames)-2 {
				out[i].Gauges[name] = v
			} else {
				out[i].Counters[name] = v
			}
		}
	}
	return out, nil
}
