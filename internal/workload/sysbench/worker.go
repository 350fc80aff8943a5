package sysbench

import (
	"context"
	"fmt"

	"benchlab/internal/engine"
	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

// worker runs one test's events on its own connection, with its statements
// prepared once per table and its own random source (no shared state).
type worker struct {
	def                     *def
	p                       workload.Params
	d                       engine.Dialect
	conn                    engine.Conn
	r                       *randgen.Rand
	zipf                    *randgen.Zipf
	id                      int // worker number, 0-based (sysbench's thread id)
	stmts                   [][]engine.Stmt
	begin, commit, rollback engine.Stmt
	args                    []any
	text                    []byte
}

func newWorker(ctx context.Context, t *def, p workload.Params, db engine.DB, id int, seed uint64) (*worker, error) {
	sqldb, conn, err := workload.ConnectSQL(ctx, db, "sysbench")
	if err != nil {
		return nil, err
	}
	w := &worker{def: t, p: p, d: sqldb.Dialect(), conn: conn, r: randgen.NewRand(seed), id: id}
	if t.name == "update-zipf" {
		w.zipf = randgen.NewZipf(p.TableSize, randgen.DefaultZipfExp)
	}
	if err := w.prepare(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

func (w *worker) prepare(ctx context.Context) error {
	cost := engine.Short
	if w.def.name == "scan" || w.def.rng >= 1000 {
		cost = engine.Long
	}
	begin := w.d.BeginRead
	if w.def.write {
		begin = w.d.BeginWrite
	}
	var err error
	if w.begin, err = w.conn.Prepare(ctx, begin, engine.Short); err != nil {
		return err
	}
	if w.commit, err = w.conn.Prepare(ctx, "COMMIT", engine.Short); err != nil {
		return err
	}
	if w.rollback, err = w.conn.Prepare(ctx, "ROLLBACK", engine.Short); err != nil {
		return err
	}
	if w.def.unprepared {
		return nil
	}
	for n := 1; n <= w.p.Tables; n++ {
		var row []engine.Stmt
		for _, q := range w.def.stmts(w.d, n, w.def.rng) {
			st, err := engine.PrepareOrText(ctx, w.conn, w.d.Bind(q), cost, w.p.Unprepared)
			if err != nil {
				return fmt.Errorf("sysbench %s: %w", w.def.name, err)
			}
			row = append(row, st)
		}
		w.stmts = append(w.stmts, row)
	}
	return nil
}

// Op runs one event.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) { return w.def.event(w, ctx) }

// Close releases the statements and the connection.
func (w *worker) Close() error {
	for _, row := range w.stmts {
		for _, s := range row {
			s.Close()
		}
	}
	for _, s := range []engine.Stmt{w.begin, w.commit, w.rollback} {
		if s != nil {
			s.Close()
		}
	}
	return w.conn.Close()
}

// table draws a table number uniformly (docs/method.md 2.3, oltp_common.lua
// get_table_num) and returns its statements. Tests of one statement draw once
// per event; transactions draw once per group of statements (readBody,
// writeBody).
func (w *worker) table() []engine.Stmt {
	if len(w.stmts) == 1 {
		return w.stmts[0]
	}
	return w.stmts[w.r.Uniform(1, int64(len(w.stmts)))-1]
}

// rowID draws an id the way the test's --rand-type does.
func (w *worker) rowID() int64 {
	switch {
	case w.def.name == "update-one":
		return 1 // oltp_update_non_index with --table-size=1
	case w.zipf != nil:
		return w.zipf.Next(w.r)
	}
	return w.r.Uniform(1, w.p.TableSize)
}

// cString makes a new value for column c: 10 groups of 11 random digits.
func (w *worker) cString() string {
	w.text = w.r.DigitString(w.text[:0], 10, 11)
	return string(w.text)
}

func (w *worker) padString() string {
	w.text = w.r.DigitString(w.text[:0], 5, 11)
	return string(w.text)
}

func (w *worker) pointQuery(ctx context.Context) (workload.Tally, error) {
	// The argument list is the worker's own: a fresh variadic slice would
	// escape through the interface call and cost an allocation per query.
	w.args = append(w.args[:0], w.rowID())
	n, err := w.table()[0].Query(ctx, w.args...)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) randomPoints(ctx context.Context) (workload.Tally, error) {
	w.args = w.args[:0]
	for i := int64(0); i < w.def.rng; i++ {
		w.args = append(w.args, w.r.Uniform(1, w.p.TableSize))
	}
	n, err := w.table()[0].Query(ctx, w.args...)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) hotPoints(ctx context.Context) (workload.Tally, error) {
	if len(w.args) != int(w.def.rng) {
		w.args = w.args[:0]
		for _, id := range hotPointIDs(w.p.TableSize, w.def.rng) {
			w.args = append(w.args, id)
		}
	}
	n, err := w.table()[0].Query(ctx, w.args...)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) coveredRange(ctx context.Context) (workload.Tally, error) {
	lo := w.rangeStart()
	n, err := w.table()[0].Query(ctx, lo, lo+w.def.rng)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) countRange(ctx context.Context) (workload.Tally, error) {
	lo := w.rangeStart()
	n, err := w.table()[0].Query(ctx, lo, lo+w.def.rng-1)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) scan(ctx context.Context) (workload.Tally, error) {
	st := w.stmts[w.id%len(w.stmts)][0]
	n, err := st.Query(ctx)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) updateIndex(ctx context.Context) (workload.Tally, error) {
	n, err := w.table()[0].Exec(ctx, w.rowID())
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) updateNonIndex(ctx context.Context) (workload.Tally, error) {
	n, err := w.table()[0].Exec(ctx, w.cString(), w.rowID())
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) updateInList(ctx context.Context) (workload.Tally, error) {
	w.args = append(w.args[:0], w.cString())
	for i := 0; i < inListUpdatePoints; i++ {
		w.args = append(w.args, w.r.Uniform(1, w.p.TableSize))
	}
	n, err := w.table()[0].Exec(ctx, w.args...)
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) deleteRow(ctx context.Context) (workload.Tally, error) {
	n, err := w.table()[0].Exec(ctx, w.rowID())
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *worker) insert(ctx context.Context) (workload.Tally, error) {
	tbl := 1
	if w.p.Tables > 1 {
		tbl = int(w.r.Uniform(1, int64(w.p.Tables)))
	}
	k := w.r.Uniform(1, w.p.TableSize)
	q := insertLiteral(w.d, tbl, k, w.cString(), w.padString())
	n, err := w.conn.Exec(ctx, q)
	return workload.Tally{Statements: 1, Rows: n}, err
}

// txn runs body between BEGIN and COMMIT, rolling back on error. Statements
// counted include BEGIN and COMMIT, as sysbench's "queries" do.
func (w *worker) txn(ctx context.Context, body func(t *workload.Tally) error) (workload.Tally, error) {
	var t workload.Tally
	if _, err := w.begin.Exec(ctx); err != nil {
		return t, fmt.Errorf("begin: %w", err)
	}
	t.Statements++
	if err := body(&t); err != nil {
		w.rollback.Exec(ctx)
		return t, err
	}
	if _, err := w.commit.Exec(ctx); err != nil {
		w.rollback.Exec(ctx)
		return t, fmt.Errorf("commit: %w", err)
	}
	t.Statements++
	return t, nil
}

// readBody is oltp_read_only's transaction body: 10 point selects, then each
// enabled range query over [lo, lo+range-1]. As in oltp_common.lua, each group
// of statements (the point selects, then each range query) draws its own
// table: with several tables one transaction reads several of them. The
// statements of table n are w.stmts[n-1][off:], point select first, then
// ranges range queries.
func (w *worker) readBody(ctx context.Context, t *workload.Tally, off, ranges int) error {
	point := w.table()[off]
	for i := 0; i < pointSelects; i++ {
		n, err := point.Query(ctx, w.rowID())
		if err != nil {
			return err
		}
		t.Statements++
		t.Rows += n
	}
	for r := 1; r <= ranges; r++ {
		st := w.table()[off+r]
		lo := w.rangeStart()
		n, err := st.Query(ctx, lo, lo+w.def.rng-1)
		if err != nil {
			return err
		}
		t.Statements++
		t.Rows += n
	}
	return nil
}

// writeBody is oltp_write_only's body: an index update, a non-index update,
// and a delete followed by the insert of the same id. Each of the three draws
// its own table, as oltp_common.lua's execute_index_updates,
// execute_non_index_updates and execute_delete_inserts do; the delete and its
// insert share one. The statements of table n are w.stmts[n-1][off:off+4].
func (w *worker) writeBody(ctx context.Context, t *workload.Tally, off int) error {
	run := func(st engine.Stmt, args ...any) error {
		n, err := st.Exec(ctx, args...)
		if err != nil {
			return err
		}
		t.Statements++
		t.Rows += n
		return nil
	}
	if err := run(w.table()[off], w.rowID()); err != nil {
		return err
	}
	if err := run(w.table()[off+1], w.cString(), w.rowID()); err != nil {
		return err
	}
	tbl := w.table()
	id := w.rowID()
	if err := run(tbl[off+2], id); err != nil {
		return err
	}
	k := w.r.Uniform(1, w.p.TableSize)
	return run(tbl[off+3], id, k, w.cString(), w.padString())
}

// readStmts is the number of statements of oltp_read_only's body per table
// in a read-write test: the point select and the four range queries.
const readStmts = 5

func (w *worker) readOnly(ctx context.Context) (workload.Tally, error) {
	ranges := len(w.stmts[0]) - 1
	return w.txn(ctx, func(t *workload.Tally) error { return w.readBody(ctx, t, 0, ranges) })
}

func (w *worker) writeOnly(ctx context.Context) (workload.Tally, error) {
	return w.txn(ctx, func(t *workload.Tally) error { return w.writeBody(ctx, t, 0) })
}

func (w *worker) readWrite(ctx context.Context) (workload.Tally, error) {
	return w.txn(ctx, func(t *workload.Tally) error {
		if err := w.readBody(ctx, t, 0, readStmts-1); err != nil {
			return err
		}
		return w.writeBody(ctx, t, readStmts)
	})
}

// rangeStart draws the first id of a range as oltp_common.lua does:
// uniform over [1, table_size], not clamped, so a range near the end of the
// table returns fewer rows.
func (w *worker) rangeStart() int64 { return w.r.Uniform(1, w.p.TableSize) }

// hotPointIDs are hot-points' fixed ids: table_size/2+1 .. table_size/2+n
// (docs/method.md 2.4).
func hotPointIDs(tableSize, n int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = tableSize/2 + 1 + int64(i)
	}
	return ids
}
