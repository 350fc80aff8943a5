package fastpath

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// PostgreSQL's direct path: short statements are exchanged with the server on pgconn's own protocol codec, its
// pgproto3.Frontend, rather than through pgconn's ExecStatement and Exec:
// the same messages (Bind, Describe when pgconn would send one, Execute,
// Sync; or Query) and the same answers, without pgconn's per-call machinery
// around them: its result reader, its busy lock, and the 15 ms timer it arms
// and stops around every write in case the write blocks while the server
// waits for it to read (a short statement's few hundred bytes never fill
// the socket buffer). That machinery was 40% of pgx's share of the client's
// CPU on the point query (perf, PostgreSQL 15, 1 thread). The connection
// stays pgconn's: a call runs only while pgconn is idle, reads the answers
// up to ReadyForQuery as pgconn would, and closes the connection, as pgconn
// does, on a broken socket or a FATAL error. What it does not keep up to
// date is pgconn's record of the transaction status and of the server's
// parameters from the answers it reads; benchlab reads neither (its
// transactions are BEGIN and COMMIT sent as statements).

// errClosed is returned for a call on a connection already closed.
var errClosed = errors.New("fastpath postgres: connection closed")

// exchange flushes the messages queued on the connection's frontend and
// reads the answers up to ReadyForQuery: the rows returned (each row's
// values, valid until the next message, go to row when set) and the rows
// the commands changed. The first error the server reports is returned; a
// broken connection is closed.
func exchange(pgc *pgconn.PgConn, row func([][]byte)) (rows, changed int64, err error) {
	fe := pgc.Frontend()
	if ferr := fe.Flush(); ferr != nil {
		pgc.Close(context.Background())
		return 0, 0, ferr
	}
	for {
		msg, rerr := fe.Receive()
		if rerr != nil {
			pgc.Close(context.Background())
			return rows, changed, rerr
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			rows++
			if row != nil {
				row(m.Values)
			}
		case *pgproto3.CommandComplete:
			changed += rowsAffected(m.CommandTag)
		case *pgproto3.ErrorResponse:
			pe := pgconn.ErrorResponseToPgError(m)
			if err == nil {
				err = pe
			}
			if strings.EqualFold(pe.Severity, "FATAL") {
				// pgconn's default OnPgError: the server ends the session.
				pgc.Close(context.Background())
				return rows, changed, err
			}
		case *pgproto3.ReadyForQuery:
			return rows, changed, err
		}
	}
}

// rowsAffected reads the count at the end of a command tag ("UPDATE 3",
// "INSERT 0 1"), as pgconn.CommandTag.RowsAffected does; 0 if none.
func rowsAffected(tag []byte) int64 {
	i := len(tag)
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		i--
	}
	var n int64
	for _, b := range tag[i:] {
		n = n*10 + int64(b-'0')
	}
	return n
}

// PGStmt is a prepared statement's direct form, with its reused Bind
// message.
type PGStmt struct {
	sd   *pgconn.StatementDescription
	bind pgproto3.Bind
}

// NewPGStmt returns the direct form of the statement pgconn prepared as sd.
func NewPGStmt(sd *pgconn.StatementDescription) *PGStmt { return &PGStmt{sd: sd} }

// Exec runs the statement on pgc with the text parameters vals (see
// exchange).
func (s *PGStmt) Exec(pgc *pgconn.PgConn, vals [][]byte, row func([][]byte)) (rows, changed int64, err error) {
	if pgc.IsClosed() {
		return 0, 0, errClosed
	}
	fe := pgc.Frontend()
	s.bind.PreparedStatement, s.bind.Parameters = s.sd.Name, vals
	fe.SendBind(&s.bind)
	if len(s.sd.Fields) == 0 {
		// pgconn asks for the row description when the prepared one has
		// none (a statement returning no rows, or not known at prepare).
		fe.SendDescribe(&describePortal)
	}
	fe.SendExecute(&execute)
	fe.SendSync(&syncMsg)
	return exchange(pgc, row)
}

// PGText sends text statements in the simple query protocol, with a reused
// Query message.
type PGText struct{ query pgproto3.Query }

// Exec sends sql on pgc (see exchange).
func (t *PGText) Exec(pgc *pgconn.PgConn, sql string, row func([][]byte)) (rows, changed int64, err error) {
	if pgc.IsClosed() {
		return 0, 0, errClosed
	}
	t.query.String = sql
	pgc.Frontend().SendQuery(&t.query)
	return exchange(pgc, row)
}

// ProbePostgres checks that pgc's server answers the direct path as a
// PostgreSQL server does: SELECT 1 sent as a simple query must come back
// as a row description of one column, the row "1", the tag "SELECT 1" and
// ReadyForQuery. An answer of another shape (a proxy or a server that
// speaks the protocol otherwise) closes the connection and is an
// *UnknownAnswer, so that the engine uses the driver.
func ProbePostgres(pgc *pgconn.PgConn) error {
	fe := pgc.Frontend()
	fe.SendQuery(&pgproto3.Query{String: "SELECT 1"})
	if err := fe.Flush(); err != nil {
		pgc.Close(context.Background())
		return err
	}
	var shape []string
	var perr error
	for {
		msg, err := fe.Receive()
		if err != nil {
			pgc.Close(context.Background())
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			shape = append(shape, fmt.Sprintf("columns %d", len(m.Fields)))
		case *pgproto3.DataRow:
			if len(m.Values) == 1 {
				shape = append(shape, "row "+string(m.Values[0]))
			} else {
				shape = append(shape, fmt.Sprintf("row of %d", len(m.Values)))
			}
		case *pgproto3.CommandComplete:
			shape = append(shape, "tag "+string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			perr = pgconn.ErrorResponseToPgError(m) // ReadyForQuery follows
		case *pgproto3.NoticeResponse, *pgproto3.ParameterStatus:
		case *pgproto3.ReadyForQuery:
			if perr != nil {
				return perr
			}
			if got := strings.Join(shape, ", "); got != "columns 1, row 1, tag SELECT 1" {
				pgc.Close(context.Background())
				return &UnknownAnswer{What: "SELECT 1 answered with " + got}
			}
			return nil
		default:
			pgc.Close(context.Background())
			return &UnknownAnswer{What: fmt.Sprintf("a %T message in the answer to SELECT 1", msg)}
		}
	}
}

// The messages without fields of their own, which the frontend only reads.
var (
	describePortal = pgproto3.Describe{ObjectType: 'P'}
	execute        = pgproto3.Execute{}
	syncMsg        = pgproto3.Sync{}
)
