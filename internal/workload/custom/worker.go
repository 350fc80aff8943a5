package custom

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"benchlab/internal/workload/sysbench"
)

// worker runs one custom test's operations on its own connection.
type worker struct {
	t                       *test
	conn                    engine.Conn
	stmts                   []engine.Stmt
	counts                  []int  // placeholders per statement
	query                   []bool // the statement returns rows (Query, not Exec)
	begin, commit, rollback engine.Stmt
	r                       *sysbench.Rand
	id                      int
	vals                    []any
	buf                     []byte
}

func newWorker(ctx context.Context, t *test, p workload.Params, db engine.DB, id int, seed uint64) (*worker, error) {
	sqldb, ok := db.(engine.SQL)
	if !ok {
		return nil, errors.New("custom: the engine does not speak SQL")
	}
	conn, err := sqldb.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("custom: connect: %w", err)
	}
	w := &worker{t: t, conn: conn, r: sysbench.NewRand(seed), id: id}
	if err := w.prepare(ctx, sqldb.Dialect(), p.Unprepared); err != nil {
		w.Close()
		return nil, fmt.Errorf("custom %s: %w", t.Name, err)
	}
	return w, nil
}

func (w *worker) prepare(ctx context.Context, d engine.Dialect, unprepared bool) error {
	cost := engine.Short
	if w.t.Long {
		cost = engine.Long
	}
	stmt := func(sql string, c engine.Cost) (engine.Stmt, error) {
		if unprepared {
			return engine.TextStmt{Conn: w.conn, SQL: sql, Short: c == engine.Short}, nil
		}
		return w.conn.Prepare(ctx, sql, c)
	}
	var err error
	if w.t.Transaction {
		begin := d.BeginRead
		if w.t.Write {
			begin = d.BeginWrite
		}
		if w.begin, err = stmt(begin, engine.Short); err != nil {
			return err
		}
		if w.commit, err = stmt("COMMIT", engine.Short); err != nil {
			return err
		}
		if w.rollback, err = stmt("ROLLBACK", engine.Short); err != nil {
			return err
		}
	}
	stmts, counts := w.t.statements(d.Name)
	w.counts = counts
	for i, q := range stmts {
		st, err := stmt(d.Bind(q), cost)
		if err != nil {
			return fmt.Errorf("statements[%d]: %w", i, err)
		}
		w.stmts = append(w.stmts, st)
		w.query = append(w.query, returnsRows(q))
	}
	return nil
}

// returnsRows tells whether a statement is read with Query (it returns
// rows: SELECT, WITH, VALUES, SHOW, EXPLAIN, PRAGMA, TABLE, or anything with
// RETURNING) rather than run with Exec.
func returnsRows(sql string) bool {
	f := strings.Fields(strings.ToUpper(sql))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "SELECT", "WITH", "VALUES", "SHOW", "EXPLAIN", "PRAGMA", "TABLE":
		return true
	}
	for _, x := range f {
		if x == "RETURNING" {
			return true
		}
	}
	return false
}

// Op runs the test's statements once, in a transaction when the test says
// so. Rows are those returned by queries plus those changed by the others.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) {
	var t workload.Tally
	if w.begin != nil {
		if _, err := w.begin.Exec(ctx); err != nil {
			return t, fmt.Errorf("begin: %w", err)
		}
		t.Statements++
	}
	next := 0
	for i, st := range w.stmts {
		args := w.vals[:0]
		for _, a := range w.t.args[next : next+w.counts[i]] {
			var v any
			v, w.buf = a.draw(w.r, w.id, w.buf)
			args = append(args, v)
		}
		w.vals = args
		next += w.counts[i]
		var n int64
		var err error
		if w.query[i] {
			n, err = st.Query(ctx, args...)
		} else {
			n, err = st.Exec(ctx, args...)
		}
		t.Statements++
		t.Rows += n
		if err != nil {
			if w.rollback != nil {
				w.rollback.Exec(context.WithoutCancel(ctx))
			}
			return t, fmt.Errorf("statements[%d]: %w", i, err)
		}
	}
	if w.commit != nil {
		if _, err := w.commit.Exec(ctx); err != nil {
			w.rollback.Exec(context.WithoutCancel(ctx))
			return t, fmt.Errorf("commit: %w", err)
		}
		t.Statements++
	}
	return t, nil
}

// Close releases the statements and the connection.
func (w *worker) Close() error {
	for _, s := range append(w.stmts, w.begin, w.commit, w.rollback) {
		if s != nil {
			s.Close()
		}
	}
	return w.conn.Close()
}
