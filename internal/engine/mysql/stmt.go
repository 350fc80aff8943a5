package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
)

// textStmt is a statement sent as text, with reused buffers. A short one
// whose text the template wrote goes over the direct path's socket
// (fastpath.MySQLWire.Query) when the connection has one: the driver's text
// call allocated for its result object, rows and columns, and for every
// value read as text (at a MariaDB New-Order of text statements, 608
// allocations).
type textStmt struct {
	c *Conn
	fastpath.TextSQL
	dest []driver.Value
	cmd  []byte // the direct path's COM_QUERY packet
}

// direct reports whether a call with text sql (built: ok) takes the
// direct path.
func (t *textStmt) direct(ok bool) bool { return ok && t.c.w != nil && !t.Long() }

// literal writes one argument as interpolateParams would; strings that
// would need escaping (whose escape depends on the session's
// NO_BACKSLASH_ESCAPES) are left to the driver.
func literal(dst []byte, arg any) ([]byte, bool) {
	if b, ok := fastpath.AppendScalar(dst, arg); ok {
		return b, true
	}
	switch v := arg.(type) {
	case string:
		if strings.ContainsAny(v, "\\'\"\x00\n\r\x1a") {
			return dst, false
		}
		dst = append(dst, '\'')
		dst = append(dst, v...)
		return append(dst, '\''), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, v, 'g', -1, 64), true
	case bool:
		if v {
			return append(dst, '1'), true
		}
		return append(dst, '0'), true
	}
	return dst, false
}

// Exec runs the statement and returns the rows changed.
func (t *textStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if err := t.c.enter(ctx); err != nil {
		return 0, err
	}
	defer t.c.leave()
	sql, ok := t.Text(args)
	if t.direct(ok) {
		_, n, err := t.c.w.Query(&t.cmd, sql, nil)
		return n, t.c.fail(err)
	}
	if !ok {
		return t.c.Exec(t.Ctx(ctx), t.SQL(), args...)
	}
	r, err := t.c.c.(driver.ExecerContext).ExecContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return 0, t.c.fail(err)
	}
	return r.RowsAffected()
}

// Query runs the statement and counts the rows it returns.
func (t *textStmt) Query(ctx context.Context, args ...any) (int64, error) {
	if err := t.c.enter(ctx); err != nil {
		return 0, err
	}
	defer t.c.leave()
	sql, ok := t.Text(args)
	if t.direct(ok) {
		n, _, err := t.c.w.Query(&t.cmd, sql, nil)
		return n, t.c.fail(err)
	}
	if !ok {
		return t.c.Query(t.Ctx(ctx), t.SQL(), args...)
	}
	rows, err := t.c.c.(driver.QueryerContext).QueryContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return 0, t.c.fail(err)
	}
	n, err := engine.DrainRows(rows, &t.dest)
	return n, t.c.fail(err)
}

// Values runs the statement and returns its rows as text.
func (t *textStmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	if err := t.c.enter(ctx); err != nil {
		return nil, err
	}
	defer t.c.leave()
	sql, ok := t.Text(args)
	if t.direct(ok) {
		var out [][]string
		_, _, err := t.c.w.Query(&t.cmd, sql, &out)
		return out, t.c.fail(err)
	}
	if !ok {
		return t.c.Values(t.Ctx(ctx), t.SQL(), args...)
	}
	rows, err := t.c.c.(driver.QueryerContext).QueryContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return nil, t.c.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, t.c.fail(err)
}

// Close does nothing: nothing was prepared.
func (t *textStmt) Close() error { return nil }

// Stmt is a server-side prepared statement; it reuses its argument and row
// buffers. Short statements use the driver's context-free calls, which skip
// its cancellation watcher; the context's end still interrupts them on a
// socket benchlab holds (Conn.enter), and a managed server is stopped when
// the experiment is cancelled, which ends any call.
type Stmt struct {
	s    driver.Stmt         // the driver's statement; prepared lazily beside d
	d    *fastpath.MySQLStmt // the fast path's statement, or nil
	c    *Conn
	sql  string
	db   *DB
	long bool
	vals []driver.Value
	args []driver.NamedValue
	dest []driver.Value
}

func (s *Stmt) values(args []any) []driver.Value {
	s.vals = s.vals[:0]
	for _, a := range args {
		s.vals = append(s.vals, widen(a))
	}
	return s.vals
}

// Exec runs the statement and returns the rows changed.
func (s *Stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if err := s.c.enter(ctx); err != nil {
		return 0, err
	}
	defer s.c.leave()
	if s.d != nil && s.d.Encode(args) {
		_, n, err := s.d.Run()
		return n, s.c.fail(err)
	}
	if err := s.driverStmt(ctx); err != nil {
		return 0, err
	}
	var r driver.Result
	var err error
	if s.long {
		s.args = named(s.args[:0], args)
		r, err = s.s.(driver.StmtExecContext).ExecContext(ctx, s.args)
	} else {
		r, err = s.s.Exec(s.values(args)) //nolint:staticcheck // the context-free call skips the cancel watcher
	}
	if err != nil {
		return 0, s.c.fail(err)
	}
	return r.RowsAffected()
}

// rows starts the statement's result.
func (s *Stmt) rows(ctx context.Context, args []any) (driver.Rows, error) {
	if err := s.driverStmt(ctx); err != nil {
		return nil, err
	}
	if s.long {
		s.args = named(s.args[:0], args)
		return s.s.(driver.StmtQueryContext).QueryContext(ctx, s.args)
	}
	return s.s.Query(s.values(args)) //nolint:staticcheck // as in Exec
}

// Query runs the statement and counts the rows it returns.
func (s *Stmt) Query(ctx context.Context, args ...any) (int64, error) {
	if err := s.c.enter(ctx); err != nil {
		return 0, err
	}
	defer s.c.leave()
	if s.d != nil && s.d.Encode(args) {
		n, _, err := s.d.Run()
		return n, s.c.fail(err)
	}
	rows, err := s.rows(ctx, args)
	if err != nil {
		return 0, s.c.fail(err)
	}
	n, err := engine.DrainRows(rows, &s.dest)
	return n, s.c.fail(err)
}

// Values runs the statement and returns its rows as text.
func (s *Stmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	if err := s.c.enter(ctx); err != nil {
		return nil, err
	}
	defer s.c.leave()
	rows, err := s.rows(ctx, args)
	if err != nil {
		return nil, s.c.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, s.c.fail(err)
}

// driverStmt prepares the driver's statement if it is not yet: a direct
// statement uses it for Values and for arguments it does not encode.
func (s *Stmt) driverStmt(ctx context.Context) error {
	if s.s != nil {
		return nil
	}
	st, err := s.c.c.(driver.ConnPrepareContext).PrepareContext(ctx, s.sql)
	if err != nil {
		return s.c.fail(fmt.Errorf("prepare %q: %w", s.sql, err))
	}
	s.s = st
	return nil
}

// Close deallocates the statement.
func (s *Stmt) Close() error {
	var err error
	if s.d != nil {
		err = s.d.Close()
	}
	if s.s != nil {
		err = errors.Join(err, s.s.Close())
	}
	return err
}

// widen converts Go ints to int64, the integer type the driver binds.
func widen(a any) driver.Value {
	switch v := a.(type) {
	case int:
		return int64(v)
	case int32:
		return int64(v)
	}
	return a
}

func named(dst []driver.NamedValue, args []any) []driver.NamedValue {
	for i, a := range args {
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: widen(a)})
	}
	return dst
}
