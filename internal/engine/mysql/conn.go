package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
)

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// isControl reports whether sql is a transaction control statement, which
// sysbench sends as text (con:query("BEGIN")) rather than preparing.
func isControl(sql string) bool {
	switch strings.ToUpper(strings.TrimSpace(sql)) {
	case "BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION":
		return true
	}
	return false
}

// Conn is one connection.
type Conn struct {
	c    driver.Conn
	w    *fastpath.MySQLWire // the socket for the fast path; nil if not taken
	db   *DB
	args []driver.NamedValue
	// watch lets a call's context end the connection's context-free
	// calls (enter).
	watch engine.CallWatch
}

// enter starts a call that ignores its context (the direct path's, the
// driver's context-free ones) under ctx, whose end then interrupts it on a
// connection whose socket benchlab holds: the socket's deadline is set in
// the past, which ends a blocked read or write (a hung server's) and leaves
// the connection lost (engine.CallWatch). leave ends the call.
func (c *Conn) enter(ctx context.Context) error {
	if c.w == nil {
		return c.watch.Enter(ctx, nil)
	}
	return c.watch.Enter(ctx, c.w.Conn())
}

func (c *Conn) leave() { c.watch.Leave() }

// fail is DB.fail for a call on c. A call the driver ended for its
// context (an operation timeout, the step's end, an interrupt) has closed
// the connection under it, also over TLS, where the driver closes the
// socket beneath the TLS layer: that error is engine.ErrConnLost too, so
// the runner knows at once that the worker's connection is gone, as it
// does on the fast path, rather than at the worker's next call.
func (c *Conn) fail(err error) error {
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if v, ok := c.c.(driver.Validator); ok && !v.IsValid() && !errors.Is(err, engine.ErrConnLost) {
			err = fmt.Errorf("%w: %w", engine.ErrConnLost, err)
		}
	}
	return c.db.fail(err)
}

// Exec runs sql without preparing it and returns the rows changed.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.args = named(c.args[:0], args)
	r, err := c.c.(driver.ExecerContext).ExecContext(ctx, sql, c.args)
	if err != nil {
		return 0, c.fail(err)
	}
	return r.RowsAffected()
}

// Query runs sql without preparing it and counts the rows it returns.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (int64, error) {
	c.args = named(c.args[:0], args)
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, c.args)
	if err != nil {
		return 0, c.fail(err)
	}
	n, err := engine.DrainRows(rows, nil)
	return n, c.fail(err)
}

// Values runs sql without preparing it and returns its rows as text.
func (c *Conn) Values(ctx context.Context, sql string, args ...any) ([][]string, error) {
	c.args = named(c.args[:0], args)
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, c.args)
	if err != nil {
		return nil, c.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, c.fail(err)
}

// variable reads a global variable; ok is false when the server lacks it.
func (c *Conn) variable(ctx context.Context, name string) (string, bool, error) {
	return c.firstRow(ctx, "SHOW GLOBAL VARIABLES LIKE '"+strings.ReplaceAll(name, "'", "''")+"'")
}

// status reads a global status counter.
func (c *Conn) status(ctx context.Context, name string) (int64, error) {
	v, ok, err := c.firstRow(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'")
	if err != nil || !ok {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// firstRow returns the second column of a SHOW ... LIKE statement's row.
func (c *Conn) firstRow(ctx context.Context, sql string) (string, bool, error) {
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, nil)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return "", false, nil
		}
		return "", false, err
	}
	switch v := dest[len(dest)-1].(type) {
	case []byte:
		return string(v), true, nil
	case nil:
		return "", true, nil
	default:
		return fmt.Sprint(v), true, nil
	}
}

// Prepare prepares sql on the server (COM_STMT_PREPARE). Transaction control
// statements stay text, as sysbench sends them.
func (c *Conn) Prepare(ctx context.Context, sql string, cost engine.Cost) (engine.Stmt, error) {
	if isControl(sql) {
		return c.PrepareText(sql, engine.Short), nil
	}
	if cost != engine.Long && c.w != nil {
		d, err := c.w.Prepare(sql)
		if err != nil {
			return nil, c.fail(fmt.Errorf("prepare %q: %w", sql, err))
		}
		return &Stmt{d: d, c: c, sql: sql, db: c.db}, nil
	}
	s, err := c.c.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		return nil, c.fail(fmt.Errorf("prepare %q: %w", sql, err))
	}
	return &Stmt{s: s, c: c, sql: sql, db: c.db, long: c.db.cost(cost) == engine.Long}, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.watch.Stop()
	return c.c.Close()
}

// PrepareText returns a statement sent as text (COM_QUERY) with its
// arguments inlined from a template parsed once (engine.TextPreparer),
// rather than by the driver's interpolateParams on every call (5.3% of the
// client's CPU in TPC-C at 8 threads); a statement the template cannot
// hold, or arguments it cannot write, take the driver's own path. With the
// driver client every text statement is Long: its text is sent with the
// driver's own call under the caller's context.
func (c *Conn) PrepareText(sql string, cost engine.Cost) engine.Stmt {
	return &textStmt{c: c, TextSQL: fastpath.NewTextSQL(sql, false, c.db.cost(cost), literal)}
}
