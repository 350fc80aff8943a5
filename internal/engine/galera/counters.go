package galera

import (
	"context"
	"strconv"

	"benchlab/internal/engine"
)

// wsrepCounters are the wsrep_* status variables read on every node: flow
// control (the time and count of pauses a slow node asked for), the
// certification failures and brute-force aborts of conflicting writes,
// and the local send and receive queues (write-sets waiting to be sent or
// applied) with their averages since the last FLUSH STATUS.
var wsrepCounters = []string{
	"wsrep_flow_control_paused", "wsrep_flow_control_paused_ns", "wsrep_flow_control_sent", "wsrep_flow_control_recv",
	"wsrep_local_cert_failures", "wsrep_local_bf_aborts",
	"wsrep_local_send_queue", "wsrep_local_send_queue_avg", "wsrep_local_recv_queue", "wsrep_local_recv_queue_avg",
	"wsrep_replicated", "wsrep_replicated_bytes", "wsrep_received", "wsrep_received_bytes",
	"wsrep_cluster_size", "wsrep_last_committed",
}

// NodeCounters reads the wsrep_* counters of every live node, node by node
// (the killed ones are left out: an empty map).
func (db *DB) NodeCounters(ctx context.Context) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(db.nodes))
	for i, in := range db.nodes {
		out[i] = map[string]float64{}
		if in.Died() != nil {
			continue
		}
		r, err := rootDB(in)
		if err != nil {
			continue
		}
		st, err := status(ctx, r, wsrepCounters...)
		r.Close()
		if err != nil {
			continue
		}
		for k, v := range st {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[i][k] = f
			}
		}
	}
	return out, nil
}

// ReplicaLags are each node's receive queue other than node 1 (the
// writer's in the scenarios): write-sets received and not yet applied.
// Galera has no byte or second lag view.
func (db *DB) ReplicaLags(ctx context.Context) ([]engine.ReplicaLag, error) {
	counters, err := db.NodeCounters(ctx)
	if err != nil {
		return nil, err
	}
	var out []engine.ReplicaLag
	for i := 1; i < len(counters); i++ {
		q, ok := counters[i]["wsrep_local_recv_queue"]
		if !ok {
			continue
		}
		out = append(out, engine.ReplicaLag{Node: i, SentBytes: -1, WriteBytes: -1, FlushBytes: -1, ReplayBytes: -1,
			Seconds: -1, Transactions: int64(q)})
	}
	return out, nil
}
