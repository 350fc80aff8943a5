package custom

import (
	"context"
	"fmt"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

// worker runs one custom test's operations on its own connection: the
// test's statements, or for a mix one of its tests' per operation, drawn
// by weight.
type worker struct {
	conn  engine.Conn
	parts []*part
	cum   []float64 // cumulative weights of parts, ending at 1
	r     *randgen.Rand
	id    int
	vals  []any
	buf   []byte
}

// part is one test's statements prepared on the worker's connection.
type part struct {
	t                       *test
	stmts                   []engine.Stmt
	counts                  []int  // placeholders per statement
	query                   []bool // the statement returns rows (Query, not Exec)
	begin, commit, rollback engine.Stmt
}

func newWorker(ctx context.Context, t *test, p workload.Params, db engine.DB, id int, seed uint64) (*worker, error) {
	sqldb, conn, err := workload.ConnectSQL(ctx, db, "custom "+t.Name)
	if err != nil {
		return nil, err
	}
	w := &worker{conn: conn, r: randgen.NewRand(seed), id: id}
	tests, weights := []*test{t}, []float64{1}
	if len(t.mix) > 0 {
		tests, weights = t.mix, t.weights
	}
	total, sum := 0.0, 0.0
	for _, x := range weights {
		total += x
	}
	for i, mt := range tests {
		pt := &part{t: mt}
		w.parts = append(w.parts, pt)
		if err := pt.prepare(ctx, conn, sqldb.Dialect(), p.Unprepared); err != nil {
			w.Close()
			return nil, fmt.Errorf("custom %s: %s: %w", t.Name, mt.Name, err)
		}
		sum += weights[i]
		w.cum = append(w.cum, sum/total)
	}
	return w, nil
}

func (pt *part) prepare(ctx context.Context, conn engine.Conn, d engine.Dialect, unprepared bool) error {
	cost := engine.Short
	if pt.t.Long {
		cost = engine.Long
	}
	stmt := func(sql string, c engine.Cost) (engine.Stmt, error) {
		return engine.PrepareOrText(ctx, conn, sql, c, unprepared)
	}
	var err error
	if pt.t.Transaction {
		begin := d.BeginRead
		if pt.t.Write {
			begin = d.BeginWrite
		}
		if pt.begin, err = stmt(begin, engine.Short); err != nil {
			return err
		}
		if pt.commit, err = stmt("COMMIT", engine.Short); err != nil {
			return err
		}
		if pt.rollback, err = stmt("ROLLBACK", engine.Short); err != nil {
			return err
		}
	}
	stmts, counts := pt.t.statements(d.Name)
	pt.counts = counts
	for i, q := range stmts {
		st, err := stmt(d.Bind(q), cost)
		if err != nil {
			return fmt.Errorf("statements[%d]: %w", i, err)
		}
		pt.stmts = append(pt.stmts, st)
		pt.query = append(pt.query, returnsRows(q))
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

// Op runs the test's statements once (for a mix, those of one of its tests,
// drawn by weight), in a transaction when the test says so. Rows are those
// returned by queries plus those changed by the others.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) {
	k := 0
	if len(w.parts) > 1 {
		u := w.r.Float()
		for i, c := range w.cum {
			if u < c || i == len(w.cum)-1 {
				k = i
				break
			}
		}
	}
	t, err := w.run(ctx, w.parts[k])
	t.Kind = k
	return t, err
}

// Kinds names a mix's tests, so the runner keeps each one's count and
// latency; a plain test has none.
func (w *worker) Kinds() []string {
	if len(w.parts) < 2 {
		return nil
	}
	names := make([]string, len(w.parts))
	for i, p := range w.parts {
		names[i] = p.t.Name
	}
	return names
}

func (w *worker) run(ctx context.Context, p *part) (workload.Tally, error) {
	var t workload.Tally
	if p.begin != nil {
		if _, err := p.begin.Exec(ctx); err != nil {
			return t, fmt.Errorf("begin: %w", err)
		}
		t.Statements++
	}
	next := 0
	for i, st := range p.stmts {
		args := w.vals[:0]
		for _, a := range p.t.args[next : next+p.counts[i]] {
			var v any
			v, w.buf = a.draw(w.r, w.id, w.buf)
			args = append(args, v)
		}
		w.vals = args
		next += p.counts[i]
		var n int64
		var err error
		if p.query[i] {
			n, err = st.Query(ctx, args...)
		} else {
			n, err = st.Exec(ctx, args...)
		}
		t.Statements++
		t.Rows += n
		if err != nil {
			if p.rollback != nil {
				p.rollback.Exec(context.WithoutCancel(ctx))
			}
			return t, fmt.Errorf("statements[%d]: %w", i, err)
		}
	}
	if p.commit != nil {
		if _, err := p.commit.Exec(ctx); err != nil {
			p.rollback.Exec(context.WithoutCancel(ctx))
			return t, fmt.Errorf("commit: %w", err)
		}
		t.Statements++
	}
	return t, nil
}

// Close releases the statements and the connection.
func (w *worker) Close() error {
	for _, p := range w.parts {
		for _, s := range append(p.stmts, p.begin, p.commit, p.rollback) {
			if s != nil {
				s.Close()
			}
		}
	}
	return w.conn.Close()
}
