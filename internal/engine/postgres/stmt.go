package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"benchlab/internal/engine"
)

// This file is a connection's prepared statements: over the extended protocol
// (Stmt), or as text with the arguments inlined (textStmt, PrepareText).

// PrepareText returns a statement sent as text (simple query protocol) with
// its arguments inlined from a template parsed once (engine.TextPreparer);
// a statement the template cannot hold, or arguments it cannot write, take
// pgx's own text path.
func (c *Conn) PrepareText(sql string, cost engine.Cost) engine.Stmt {
	return &textStmt{c: c, TextSQL: engine.NewTextSQL(sql, true, cost, literal)}
}

// textStmt is a statement sent as text, with a reused buffer.
type textStmt struct {
	c *Conn
	engine.TextSQL
	query pgproto3.Query // the reused Query message of a short statement
}

// literal writes one argument as PostgreSQL reads it with
// standard_conforming_strings on (the default since 9.1), as pgx's simple
// protocol does.
func literal(dst []byte, arg any) ([]byte, bool) {
	if b, ok := engine.AppendScalar(dst, arg); ok {
		return b, true
	}
	switch v := arg.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return dst, false
		}
		dst = append(dst, '\'')
		for i := 0; i < len(v); i++ {
			if v[i] == '\'' {
				dst = append(dst, '\'')
			}
			dst = append(dst, v[i])
		}
		return append(dst, '\''), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, v, 'f', -1, 64), true
	case bool:
		return strconv.AppendBool(dst, v), true
	}
	return dst, false
}

// run sends the statement and reads its results, counting their rows and
// the rows their commands changed; each row's values go to row when set.
func (t *textStmt) run(ctx context.Context, sql string, row func([][]byte)) (rows, changed int64, err error) {
	if !t.Long() {
		if err := t.c.enter(ctx); err != nil {
			return 0, 0, err
		}
		rows, changed, err = t.queryDirect(sql, row)
		t.c.leave()
		return rows, changed, t.c.fail(err)
	}
	mrr := t.c.c.PgConn().Exec(ctx, sql)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
			rows++
			if row != nil {
				row(rr.Values())
			}
		}
		tag, _ := rr.Close() // its error is mrr's too
		changed += tag.RowsAffected()
	}
	return rows, changed, t.c.fail(mrr.Close())
}

// Exec runs the statement and returns the rows changed.
func (t *textStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	sql, ok := t.Text(args)
	if !ok {
		return t.c.Exec(t.Ctx(ctx), t.SQL(), args...)
	}
	_, n, err := t.run(ctx, sql, nil)
	return n, err
}

// Query runs the statement and counts the rows it returns.
func (t *textStmt) Query(ctx context.Context, args ...any) (int64, error) {
	sql, ok := t.Text(args)
	if !ok {
		return t.c.Query(t.Ctx(ctx), t.SQL(), args...)
	}
	n, _, err := t.run(ctx, sql, nil)
	return n, err
}

// Values runs the statement and returns its rows as text.
func (t *textStmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	sql, ok := t.Text(args)
	if !ok {
		return t.c.Values(t.Ctx(ctx), t.SQL(), args...)
	}
	var out [][]string
	_, _, err := t.run(ctx, sql, func(raw [][]byte) { out = append(out, textRow(raw)) })
	return out, err
}

// Close does nothing: nothing was prepared.
func (t *textStmt) Close() error { return nil }

// Stmt is a prepared statement; it reuses its parameter buffers and, short,
// its Bind message. Short statements run without the caller's context (a
// managed server is stopped when the experiment is cancelled, which ends any
// call) and on pgconn's frontend directly (direct.go).
type Stmt struct {
	c    *Conn
	sd   *pgconn.StatementDescription
	long bool
	vals [][]byte
	bufs [][]byte
	bind pgproto3.Bind // the reused Bind message of a short statement
}

// encode writes args as text parameters into reused buffers.
func (s *Stmt) encode(args []any) error {
	for len(s.bufs) < len(args) {
		s.bufs = append(s.bufs, make([]byte, 0, 32))
	}
	s.vals = s.vals[:0]
	for i, a := range args {
		b := s.bufs[i][:0]
		switch v := a.(type) {
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case int32:
			b = strconv.AppendInt(b, int64(v), 10)
		case float64:
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		case nil:
			s.vals = append(s.vals, nil)
			continue
		default:
			return fmt.Errorf("postgres: cannot bind a %T", a)
		}
		s.bufs[i] = b
		s.vals = append(s.vals, b)
	}
	return nil
}

// run executes the statement, counting the rows it returns and those it
// changed; each row's values go to row when set. A short statement is
// exchanged on pgconn's frontend directly (direct.go).
func (s *Stmt) run(ctx context.Context, args []any, row func([][]byte)) (rows, changed int64, err error) {
	if err := s.encode(args); err != nil {
		return 0, 0, err
	}
	if !s.long {
		if err := s.c.enter(ctx); err != nil {
			return 0, 0, err
		}
		rows, changed, err = s.execDirect(row)
		s.c.leave()
		return rows, changed, s.c.fail(err)
	}
	rr := s.c.c.PgConn().ExecStatement(ctx, s.sd, s.vals, nil, nil)
	for rr.NextRow() {
		rows++
		if row != nil {
			row(rr.Values())
		}
	}
	tag, err := rr.Close()
	return rows, tag.RowsAffected(), s.c.fail(err)
}

// Exec runs the statement and returns the rows changed.
func (s *Stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	_, n, err := s.run(ctx, args, nil)
	return n, err
}

// Query runs the statement and counts the rows it returns.
func (s *Stmt) Query(ctx context.Context, args ...any) (int64, error) {
	n, _, err := s.run(ctx, args, nil)
	return n, err
}

// Values runs the statement and returns its rows as text.
func (s *Stmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	var out [][]string
	_, _, err := s.run(ctx, args, func(raw [][]byte) { out = append(out, textRow(raw)) })
	return out, err
}

// Close deallocates the statement.
func (s *Stmt) Close() error {
	if s.c.c.IsClosed() {
		return nil
	}
	return s.c.c.Deallocate(context.Background(), s.sd.Name)
}
