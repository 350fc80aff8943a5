package engine

import "context"

// TextStmt is a Stmt that sends its statement as text on every call: for
// transaction control (BEGIN, COMMIT), which sysbench never prepares, and for
// runs with prepared statements turned off (--db-ps-mode=disable).
type TextStmt struct {
	Conn Conn
	SQL  string
	// Short runs the statement without the caller's context, sparing the
	// driver a cancellation watcher per call; for statements that finish
	// at once, such as BEGIN and COMMIT.
	Short bool
}

// TextPreparer is a Conn with text statements of its own, cheaper per call
// than TextStmt: the statement is parsed once and the arguments inlined by
// benchlab into a reused buffer (the fast path's fastpath.TextSQL). A Short
// one runs without the caller's context, as TextStmt's does.
type TextPreparer interface {
	PrepareText(sql string, cost Cost) Stmt
}

// PrepareOrText prepares sql on c at the given cost or, with text (prepared
// statements turned off: sysbench's --db-ps-mode=disable), returns a
// TextStmt that sends it as text on every call; a Short one runs without the
// caller's context, as prepared Short statements do (pgx would otherwise set
// a cancellation watcher on the context every worker shares, under its lock,
// for each call). A TextPreparer makes its own text statements. Every
// workload prepares through it.
func PrepareOrText(ctx context.Context, c Conn, sql string, cost Cost, text bool) (Stmt, error) {
	if text {
		if tp, ok := c.(TextPreparer); ok {
			return tp.PrepareText(sql, cost), nil
		}
		return TextStmt{Conn: c, SQL: sql, Short: cost == Short}, nil
	}
	return c.Prepare(ctx, sql, cost)
}

func (t TextStmt) ctx(ctx context.Context) context.Context {
	if t.Short {
		return context.Background()
	}
	return ctx
}

// Exec runs the statement and returns the rows changed.
func (t TextStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return t.Conn.Exec(t.ctx(ctx), t.SQL, args...)
}

// Values runs the statement and returns its rows as text.
func (t TextStmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	return t.Conn.Values(t.ctx(ctx), t.SQL, args...)
}

// Query runs the statement and counts the rows it returns.
func (t TextStmt) Query(ctx context.Context, args ...any) (int64, error) {
	return t.Conn.Query(t.ctx(ctx), t.SQL, args...)
}

// Close does nothing: nothing was prepared.
func (t TextStmt) Close() error { return nil }
