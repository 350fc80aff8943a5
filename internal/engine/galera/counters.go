package galera

import (
	"context"
	"slices"
	"strconv"

	"benchlab/internal/engine"
)

// wsrepCounters are the wsrep_* status counters read on every node: flow
// control (the time and count of pauses a slow node asked for), the
// certification failures and brute-force aborts of conflicting writes,
// and the write-sets and bytes replicated and received.
var wsrepCounters = []string{
	"wsrep_flow_control_paused_ns", "wsrep_flow_control_sent", "wsrep_flow_control_recv",
	"wsrep_local_cert_failures", "wsrep_local_bf_aborts",
	"wsrep_replicated", "wsrep_replicated_bytes", "wsrep_received", "wsrep_received_bytes",
}

// wsrepGauges are the levels: the local send and receive queues
// (write-sets waiting to be sent or applied) and their averages since the
// last FLUSH STATUS, the share of time flow control paused replication
// since then, and the cluster's size.
var wsrepGauges = []string{
	"wsrep_local_send_queue", "wsrep_local_send_queue_avg", "wsrep_local_recv_queue", "wsrep_local_recv_queue_avg",
	"wsrep_flow_control_paused", "wsrep_cluster_size",
}

// NodeCounters reads the wsrep_* counters of every live node, node by node
// (the killed ones are left out: an empty map).
func (db *DB) NodeCounters(ctx context.Context) ([]engine.NodeReading, error) {
	out := make([]engine.NodeReading, len(db.nodes))
	for i, in := range db.nodes {
		out[i] = engine.NodeReading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
		if in.Died() != nil {
			continue
		}
		r, err := rootDB(in)
		if err != nil {
			continue
		}
		st, err := status(ctx, r, append(slices.Clone(wsrepCounters), wsrepGauges...)...)
		r.Close()
		if err != nil {
			continue
		}
		for k, v := range st {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			if slices.Contains(wsrepGauges, k) {
				out[i].Gauges[k] = f
			} else {
				out[i].Counters[k] = f
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
		q, ok := counters[i].Gauges["wsrep_local_recv_queue"]
		if !ok {
			continue
		}
		out = append(out, engine.ReplicaLag{Node: i, SentBytes: -1, WriteBytes: -1, FlushBytes: -1, ReplayBytes: -1,
			Seconds: -1, Transactions: int64(q)})
	}
	return out, nil
}
