package cluster

import (
	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"context"
	"fmt"
)

// maxTries bounds the tries of a write that conflicts.
const maxTries = 10

// scalingStep runs transactions of two random row updates with the
// step's threads spread over k nodes (worker i on node i % k); a conflict
// is tried again, up to maxTries.
func scalingStep(p workload.Params, o *Options, k int) workload.Step {
	name := fmt.Sprintf("%s_nodes=%d", WriteScaling, k)
	return workload.Step{
		Name: name, Family: WriteScaling, Group: Group, Metric: WPS, Write: true,
		Duration: p.WriteTime, Warmup: p.Warmup,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			cl, err := clusterOf(db, name)
			if err != nil {
				return nil, err
			}
			if k > cl.Nodes() {
				return nil, fmt.Errorf("%s: the cluster has %d nodes", name, cl.Nodes())
			}
			c, err := cl.ConnectNode(ctx, id%k)
			if err != nil {
				return nil, fmt.Errorf("%s: worker %d on node %d: %w", name, id, id%k+1, err)
			}
			return &updater{c: c, rows: o.Rows, rng: seed | 1, name: name, update: rowUpdate(cl.Dialect())}, nil
		},
	}
}

// updater adds one to random rows' values.
type updater struct {
	c      engine.Conn
	rows   int
	rng    uint64
	name   string
	update string // one row's update, in the engine's dialect
}

// rowUpdate adds one to a row of the rows table, in dialect d.
func rowUpdate(d engine.Dialect) string {
	return d.Bind("UPDATE " + rowsTable + " SET v = v + 1 WHERE id = ?")
}

// id draws a row (xorshift).
func (u *updater) id() int {
	u.rng ^= u.rng << 13
	u.rng ^= u.rng >> 7
	u.rng ^= u.rng << 17
	return 1 + int(u.rng%uint64(u.rows))
}

// Op updates two rows in one transaction, trying it again after a
// conflict: a certification failure is a deadlock error on the node that
// loses. (An autocommit statement would hide most of them: the server
// retries it itself, wsrep_retry_autocommit.)
func (u *updater) Op(ctx context.Context) (workload.Tally, error) {
	a, b := u.id(), u.id()
	var t workload.Tally
	for try := 1; ; try++ {
		err := u.txn(ctx, &t, a, b)
		if err == nil {
			t.Rows = 2
			return t, nil
		}
		t.Statements++
		_, _ = u.c.Exec(ctx, "ROLLBACK")
		if engine.ConflictOf(err) == engine.NoConflict || try == maxTries {
			return t, fmt.Errorf("%s: update rows %d and %d (try %d): %w", u.name, a, b, try, err)
		}
		t.Retries++
	}
}

// txn runs BEGIN, the two updates and COMMIT, counting the statements.
func (u *updater) txn(ctx context.Context, t *workload.Tally, a, b int) error {
	for _, q := range []struct {
		sql  string
		args []any
	}{{"BEGIN", nil}, {u.update, []any{a}}, {u.update, []any{b}}, {"COMMIT", nil}} {
		t.Statements++
		if _, err := u.c.Exec(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the connection.
func (u *updater) Close() error { return u.c.Close() }
