package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

// LagBytes is replica-lag's sampler role's metric: the bytes of WAL the
// furthest replica had yet to replay, averaged over the samples (per
// second in the series). Engines without a byte view (Galera) record 0;
// their lag is in the facts (lag_transactions_*).
var LagBytes = metric.Register(metric.Metric{
	Name: "replica_lag_bytes", Unit: "bytes", Legend: "bytes of changes the furthest replica had not yet replayed, mean of the samples",
	Direction: analysis.LowerIsBetter, Quantity: "replica lag", Symbol: "lag",
	Value: func(c metric.Counts) float64 {
		if c.Events == 0 {
			return 0
		}
		return float64(c.Rows) / float64(c.Events)
	},
	Series: func(c metric.Counts) float64 {
		if c.Events == 0 {
			return 0
		}
		return float64(c.Rows) / float64(c.Events)
	}, SeriesUnit: "bytes behind",
})

// lagRate is how many times a second the sampler reads the lag views.
const lagRate = 5

// lagSamples are the sampler's readings, each the furthest replica's.
type lagSamples struct {
	mu                                   sync.Mutex
	sent, write, flush, replay, secs, tx []float64
}

// add keeps the largest known value of each measure over the replicas.
func (s *lagSamples) add(lags []engine.ReplicaLag) (replay int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := func(dst *[]float64, f func(engine.ReplicaLag) float64) float64 {
		m := -1.0
		for _, l := range lags {
			m = max(m, f(l))
		}
		if m >= 0 && len(*dst) < lagLimit {
			*dst = append(*dst, m)
		}
		return m
	}
	most(&s.sent, func(l engine.ReplicaLag) float64 { return float64(l.SentBytes) })
	most(&s.write, func(l engine.ReplicaLag) float64 { return float64(l.WriteBytes) })
	most(&s.flush, func(l engine.ReplicaLag) float64 { return float64(l.FlushBytes) })
	r := most(&s.replay, func(l engine.ReplicaLag) float64 { return float64(l.ReplayBytes) })
	most(&s.secs, func(l engine.ReplicaLag) float64 { return l.Seconds })
	most(&s.tx, func(l engine.ReplicaLag) float64 { return float64(l.Transactions) })
	return int64(max(0, r))
}

// percentiles adds name_p50, name_p99 and name_max of vals to f.
func percentiles(f map[string]float64, name string, vals []float64) {
	if len(vals) == 0 {
		return
	}
	v := slices.Clone(vals)
	slices.Sort(v)
	q := func(p float64) float64 { return v[min(len(v)-1, int(p*float64(len(v))))] }
	f[name+"_p50"], f[name+"_p99"], f[name+"_max"] = q(0.5), q(0.99), v[len(v)-1]
}

// facts are the lag percentiles of every measure the engine has.
func (s *lagSamples) facts() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := map[string]float64{"lag_samples": float64(max(len(s.replay), len(s.tx), len(s.secs)))}
	percentiles(f, "lag_sent_bytes", s.sent)
	percentiles(f, "lag_write_bytes", s.write)
	percentiles(f, "lag_flush_bytes", s.flush)
	percentiles(f, "lag_replay_bytes", s.replay)
	percentiles(f, "lag_seconds", s.secs)
	percentiles(f, "lag_transactions", s.tx)
	return f
}

// lagStep runs the step's threads of writers on the primary (the
// headline, cluster_wps) and one sampler reading the replicas' lag
// lagRate times a second.
func lagStep(p workload.Params) workload.Step {
	var samples *lagSamples
	o := opts(p)
	return workload.Step{
		Name: ReplicaLag, Family: ReplicaLag, Group: Group, Metric: WPS, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup,
		Roles: []workload.Role{
			{Name: "writers", Metric: WPS,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					cl, err := clusterOf(db, ReplicaLag)
					if err != nil {
						return nil, err
					}
					c, err := cl.ConnectNode(ctx, cl.Primary())
					if err != nil {
						return nil, fmt.Errorf("%s: writer %d on node %d: %w", ReplicaLag, id, cl.Primary()+1, err)
					}
					return &updater{c: c, rows: o.Rows, rng: seed | 1, name: ReplicaLag, update: rowUpdate(cl.Dialect())}, nil
				}},
			{Name: "sampler", Threads: 1, Rate: lagRate, Metric: LagBytes,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					l, ok := db.(engine.Lagger)
					if !ok {
						return nil, fmt.Errorf("%s: the target has no replica lag view", ReplicaLag)
					}
					samples = &lagSamples{}
					nc, _ := db.(engine.NodeCounters)
					return &lagSampler{l: l, s: samples, nc: nc}, nil
				}},
		},
	}
}

// lagSampler reads the lag views, and every node's counters once a
// second.
type lagSampler struct {
	l     engine.Lagger
	s     *lagSamples
	nc    engine.NodeCounters // nil when the engine has none
	ops   int
	nodes nodeFacts
}

// Op takes one sample; its rows are the furthest replica's replay lag in
// bytes.
func (w *lagSampler) Op(ctx context.Context) (workload.Tally, error) {
	lags, err := w.l.ReplicaLags(ctx)
	if err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: read the lag: %w", ReplicaLag, err)
	}
	t := workload.Tally{Statements: 1, Rows: w.s.add(lags)}
	if w.nc != nil && w.ops%lagRate == 0 {
		if r, err := w.nc.NodeCounters(ctx); err == nil {
			w.nodes.add(r)
			t.Statements += len(r)
		}
	}
	w.ops++
	return t, nil
}

// Facts are the lag percentiles, warm-up included, and each node's
// counters over the step (nodeFacts).
func (w *lagSampler) Facts() map[string]float64 {
	f := w.s.facts()
	maps.Copy(f, w.nodes.facts())
	return f
}

// Close does nothing: the DB owns the views' connections.
func (w *lagSampler) Close() error { return nil }

// nodeFacts are every node's counters over a step: the first and last
// reading of each counter, and the highest of each gauge.
type nodeFacts struct {
	first, last []map[string]float64
	peak        []map[string]float64
}

// add takes one reading of every node.
func (n *nodeFacts) add(r []engine.NodeReading) {
	for len(n.first) < len(r) {
		n.first, n.last, n.peak = append(n.first, nil), append(n.last, nil), append(n.peak, map[string]float64{})
	}
	for i, node := range r {
		if len(node.Counters) > 0 {
			if n.first[i] == nil {
				n.first[i] = node.Counters
			}
			n.last[i] = node.Counters
		}
		for k, v := range node.Gauges {
			if old, ok := n.peak[i][k]; !ok || v > old {
				n.peak[i][k] = v
			}
		}
	}
}

// NodeFactPrefix starts the name of a per-node fact: node<k>_<counter>,
// k from 1.
const NodeFactPrefix = "node"

// facts are node<k>_<counter>, the counter's change between the first and
// last reading, and node<k>_<gauge>_max.
func (n *nodeFacts) facts() map[string]float64 {
	f := map[string]float64{}
	for i := range n.first {
		for k, v := range n.last[i] {
			if v0, ok := n.first[i][k]; ok {
				f[fmt.Sprintf("%s%d_%s", NodeFactPrefix, i+1, k)] = v - v0
			}
		}
		for k, v := range n.peak[i] {
			f[fmt.Sprintf("%s%d_%s_max", NodeFactPrefix, i+1, k)] = v
		}
	}
	return f
}
