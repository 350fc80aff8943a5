package cluster

import (
	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// staleState is what a stale-read step's writer and readers share: the
// last acknowledged counter value, when each value was acknowledged, and
// the lags of the stale reads.
type staleState struct {
	acked atomic.Int64
	ackAt [1 << 16]atomic.Int64 // unix ns of the ack of value v, at v % len

	mu     sync.Mutex
	lags   []float64 // ms
	stale  int64
	reads  int64
	writes int64
}

// lagLimit bounds the stale lags kept for the percentiles.
const lagLimit = 200_000

// staleReadStep is one writer on the primary (node 1 on Galera) (its own role) and the step's
// threads reading on the other nodes in turn (the headline role).
func staleReadStep(p workload.Params) workload.Step {
	var st *staleState
	return workload.Step{
		Name: StaleRead, Family: StaleRead, Group: Group, Metric: StaleShare, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup,
		Roles: []workload.Role{
			{Name: "reader", Metric: StaleShare,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					cl, err := clusterOf(db, StaleRead)
					if err != nil {
						return nil, err
					}
					if cl.Nodes() < 2 {
						return nil, fmt.Errorf("%s: the cluster has %d node; readers need a node the writer is not on", StaleRead, cl.Nodes())
					}
					if id == 0 {
						st = &staleState{}
					}
					// The readers take the nodes other than the writer's in turn.
					node := (cl.Primary() + 1 + id%(cl.Nodes()-1)) % cl.Nodes()
					c, err := cl.ConnectNode(ctx, node)
					if err != nil {
						return nil, fmt.Errorf("%s: reader %d on node %d: %w", StaleRead, id, node+1, err)
					}
					return &reader{c: c, st: st, first: id == 0}, nil
				}},
			{Name: "writer", Threads: 1, Metric: WPS,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					cl, err := clusterOf(db, StaleRead)
					if err != nil {
						return nil, err
					}
					c, err := cl.ConnectNode(ctx, cl.Primary())
					if err != nil {
						return nil, fmt.Errorf("%s: writer on node %d: %w", StaleRead, cl.Primary()+1, err)
					}
					// The counter goes on from where an earlier thread count left it.
					v, err := c.Values(ctx, "SELECT v FROM "+counterTable+" WHERE id = 1")
					if err != nil || len(v) != 1 {
						c.Close()
						return nil, fmt.Errorf("%s: read the counter: %v %w", StaleRead, v, err)
					}
					last, _ := strconv.ParseInt(v[0][0], 10, 64)
					st.acked.Store(last)
					st.ackAt[last%int64(len(st.ackAt))].Store(time.Now().UnixNano())
					return &writer{c: c, st: st, next: last + 1,
						update: cl.Dialect().Bind("UPDATE " + counterTable + " SET v = ? WHERE id = 1")}, nil
				}},
		},
	}
}

// writer sets the counter to the next value and publishes the ack.
type writer struct {
	c      engine.Conn
	st     *staleState
	next   int64
	update string // in the engine's dialect
}

// Op writes the next value; once the server acknowledged it, it is the
// value readers must not read older than.
func (w *writer) Op(ctx context.Context) (workload.Tally, error) {
	if _, err := w.c.Exec(ctx, w.update, w.next); err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: write %d: %w", StaleRead, w.next, err)
	}
	w.st.ackAt[w.next%int64(len(w.st.ackAt))].Store(time.Now().UnixNano())
	w.st.acked.Store(w.next)
	w.next++
	w.st.mu.Lock()
	w.st.writes++
	w.st.mu.Unlock()
	return workload.Tally{Statements: 1, Rows: 1}, nil
}

// Close closes the connection.
func (w *writer) Close() error { return w.c.Close() }

// reader reads the counter on its node.
type reader struct {
	c     engine.Conn
	st    *staleState
	first bool
}

// Kinds are the two outcomes of a read.
func (r *reader) Kinds() []string { return []string{"fresh_read", "stale_read"} }

// Op reads the counter: stale when older than the last ack before the
// read began. A stale read's lag is how long the oldest write it missed
// had been acknowledged when the read returned.
func (r *reader) Op(ctx context.Context) (workload.Tally, error) {
	before := r.st.acked.Load()
	v, err := r.c.Values(ctx, "SELECT v FROM "+counterTable+" WHERE id = 1")
	if err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: read: %w", StaleRead, err)
	}
	if len(v) != 1 {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: read %d rows of the counter; want 1", StaleRead, len(v))
	}
	got, err := strconv.ParseInt(v[0][0], 10, 64)
	if err != nil {
		return workload.Tally{Statements: 1}, fmt.Errorf("%s: counter %q: %w", StaleRead, v[0][0], err)
	}
	now := time.Now().UnixNano()
	t := workload.Tally{Statements: 1}
	r.st.mu.Lock()
	r.st.reads++
	if got < before {
		t.Rows, t.Kind = 1, 1
		r.st.stale++
		missed := got + 1
		if before-missed < int64(len(r.st.ackAt)) && len(r.st.lags) < lagLimit {
			at := r.st.ackAt[missed%int64(len(r.st.ackAt))].Load()
			r.st.lags = append(r.st.lags, float64(now-at)/1e6)
		}
	}
	r.st.mu.Unlock()
	return t, nil
}

// Facts are the step's counts and stale lags, warm-up included (the
// runner's stale_read_ops and fresh_read_ops count the measured part): the
// same for every reader, kept from the first.
func (r *reader) Facts() map[string]float64 {
	if !r.first {
		return nil
	}
	r.st.mu.Lock()
	defer r.st.mu.Unlock()
	f := map[string]float64{"stale_reads_total": float64(r.st.stale), "reads_total": float64(r.st.reads),
		"writer_acks_total": float64(r.st.writes)}
	if len(r.st.lags) > 0 {
		lags := slices.Clone(r.st.lags)
		slices.Sort(lags)
		q := func(p float64) float64 { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
		f["stale_lag_p50_ms"], f["stale_lag_p99_ms"], f["stale_lag_max_ms"] = q(0.5), q(0.99), lags[len(lags)-1]
	}
	return f
}

// Close closes the connection.
func (r *reader) Close() error { return r.c.Close() }
