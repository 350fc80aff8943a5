package fastpath

// MySQL's direct path for short prepared and text statements, the
// counterpart of postgres.go. go-sql-driver allocates several objects per
// execute (its rows object, the column slice, the names slice Columns
// returns, each value boxed into an interface); at 8 threads of point
// queries that was about 30% of benchlab's client CPU. Here a short
// statement is prepared and run on the connection's own socket, which the
// driver dialled through DialRecorded and which a Slot caught:
//
//   - between commands the driver has nothing buffered and restarts its
//     packet sequence at 0 for every command, so benchlab may write a whole
//     command and read its whole answer itself while the driver is idle
//     (the one assumption about the driver that is not its API; see the
//     package comment);
//   - COM_STMT_PREPARE gives the statement id and its parameter and column
//     counts; COM_STMT_EXECUTE is built in a buffer the statement reuses,
//     and the answer is read into a buffer the connection reuses: an OK
//     packet gives the affected rows, a result set (column count, column
//     definitions, an EOF unless CLIENT_DEPRECATE_EOF was negotiated,
//     binary rows starting 0x00, a closing 0xFE packet) is counted, an ERR
//     packet becomes a *mysql.MySQLError as the driver's, so conflict
//     classification holds; SERVER_MORE_RESULTS_EXISTS on the closing
//     packet reads the next result set too;
//   - whether EOF packets are deprecated is learnt once per connection by a
//     SELECT 1 whose answer shows it (ProbeMySQL); an answer of another
//     shape is an *UnknownAnswer, and the engine then uses the driver;
//   - a packet of 0xFFFFFF bytes (continued in the next) is refused with an
//     error; any socket or protocol error closes the socket and is reported
//     as driver.ErrBadConn (engine.ErrConnLost);
//   - short text statements are sent as COM_QUERY and answered by the same
//     reader (MySQLWire.Query), their rows read as text for Values;
//   - arguments of a type not encoded here, a prepared statement's Values
//     and long statements use the driver's statement;
//   - TLS or compressed connections never take this path (MySQLAllowed).
//
// A call ignores its context, as the driver's context-free calls do: the
// engine watches the context and ends a call in progress through the
// socket's deadline (engine.CallWatch on MySQLWire.Conn).

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
)

// MySQLAllowed reports whether cfg allows the direct path, and why not:
// plain sockets only (no TLS, no compression).
func MySQLAllowed(cfg *gomysql.Config) (bool, string) {
	if cfg.TLS != nil || (cfg.TLSConfig != "" && cfg.TLSConfig != "false") {
		return false, "the connection may use TLS (dsn tls=" + cfg.TLSConfig + ")"
	}
	if strings.Contains(cfg.FormatDSN(), "compress=true") {
		return false, "the connection is compressed (dsn compress=true)"
	}
	return true, ""
}

// MySQLWire is a connection's socket as the direct path uses it. Its first
// version read a result set's column definitions that MariaDB had not
// sent: the driver negotiates MariaDB's metadata caching, so an execute's
// column count is followed by a byte that says whether definitions follow
// (0: they do not), and one row per result set was taken for a
// definition, then the answers fell out of step; the mysql engine's
// TestDirectMatchesDriver compares the two paths.
type MySQLWire struct {
	nc     net.Conn
	buf    []byte // received bytes; buf[r:w] unread
	r, w   int
	broken bool
	eofs   int // 0 unknown, 1 EOF packets sent, 2 deprecated
}

// NewMySQLWire takes nc, the socket of a connection the driver opened and
// is idle on, for the direct path.
func NewMySQLWire(nc net.Conn) *MySQLWire { return &MySQLWire{nc: nc} }

// Conn is the socket, whose deadline ends a call in progress.
func (w *MySQLWire) Conn() net.Conn { return w.nc }

const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
	maxPayload     = 0xFFFFFF
	moreResults    = 0x0008
)

var errBroken = fmt.Errorf("fastpath mysql: connection closed after an earlier error: %w", driver.ErrBadConn)

// lose closes the socket after err and returns err as a lost connection.
func (w *MySQLWire) lose(err error) error {
	w.broken = true
	w.nc.Close()
	return fmt.Errorf("fastpath mysql: %w: %w", err, driver.ErrBadConn)
}

// send writes packet p, whose first 4 bytes are left for the header.
func (w *MySQLWire) send(p []byte) error {
	if w.broken {
		return errBroken
	}
	n := len(p) - 4
	if n >= maxPayload {
		return fmt.Errorf("fastpath mysql: command of %d bytes is too long", n)
	}
	p[0], p[1], p[2], p[3] = byte(n), byte(n>>8), byte(n>>16), 0
	if _, err := w.nc.Write(p); err != nil {
		return w.lose(err)
	}
	return nil
}

// next returns the next packet's payload, valid until the next call.
func (w *MySQLWire) next() ([]byte, error) {
	if err := w.fill(4); err != nil {
		return nil, err
	}
	h := w.buf[w.r:]
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if n == maxPayload {
		return nil, w.lose(errors.New("packet of 16 MiB or more not supported"))
	}
	if err := w.fill(4 + n); err != nil {
		return nil, err
	}
	p := w.buf[w.r+4 : w.r+4+n]
	w.r += 4 + n
	return p, nil
}

// fill makes at least n unread bytes available.
func (w *MySQLWire) fill(n int) error {
	if w.w-w.r >= n {
		return nil
	}
	if w.r > 0 {
		w.w = copy(w.buf, w.buf[w.r:w.w])
		w.r = 0
	}
	if n > len(w.buf) {
		nb := make([]byte, max(n, 2*len(w.buf), 16384))
		copy(nb, w.buf[:w.w])
		w.buf = nb
	}
	for w.w < n {
		k, err := w.nc.Read(w.buf[w.w:])
		w.w += k
		if err != nil && w.w < n {
			return w.lose(err)
		}
	}
	return nil
}

// done checks that the answer left nothing unread.
func (w *MySQLWire) done() error {
	if w.r != w.w {
		return w.lose(fmt.Errorf("%d unexpected bytes after the answer", w.w-w.r))
	}
	w.r, w.w = 0, 0
	return nil
}

// serverError converts an ERR packet to the driver's error type.
func serverError(p []byte) error {
	e := &gomysql.MySQLError{}
	if len(p) >= 3 {
		e.Number = binary.LittleEndian.Uint16(p[1:3])
		p = p[3:]
		if len(p) >= 6 && p[0] == '#' {
			copy(e.SQLState[:], p[1:6])
			p = p[6:]
		}
		e.Message = string(p)
	}
	return e
}

// lenenc reads a length-encoded integer at p[i:], returning it and the
// index after it; ok is false when p is too short.
func lenenc(p []byte, i int) (v uint64, j int, ok bool) {
	if i >= len(p) {
		return 0, i, false
	}
	switch c := p[i]; {
	case c < 0xFB:
		return uint64(c), i + 1, true
	case c == 0xFC && i+3 <= len(p):
		return uint64(binary.LittleEndian.Uint16(p[i+1:])), i + 3, true
	case c == 0xFD && i+4 <= len(p):
		return uint64(p[i+1]) | uint64(p[i+2])<<8 | uint64(p[i+3])<<16, i + 4, true
	case c == 0xFE && i+9 <= len(p):
		return binary.LittleEndian.Uint64(p[i+1:]), i + 9, true
	}
	return 0, i, false
}

func isEOF(p []byte) bool { return len(p) > 0 && p[0] == 0xFE && len(p) < 9 }

// UnknownAnswer is the probe's error when the server answered a command
// in a shape the direct path does not read: the engine then uses the
// driver on the target, with a note saying why.
type UnknownAnswer struct{ What string }

func (e *UnknownAnswer) Error() string { return "unexpected answer from the server: " + e.What }

// Probe learns whether EOF packets follow column definitions, from the
// answer to SELECT 1 (column count 1, one definition, then an EOF packet
// or the row "1", then the closing packet), once per connection; an
// answer of another shape closes the socket and is an *UnknownAnswer.
func (w *MySQLWire) Probe() error {
	if w.eofs != 0 {
		return nil
	}
	q := append(make([]byte, 4, 16), comQuery)
	q = append(q, "SELECT 1"...)
	if err := w.send(q); err != nil {
		return err
	}
	var got [][]byte
	for len(got) < 4 {
		p, err := w.next()
		if err != nil {
			return err
		}
		if len(p) > 0 && p[0] == 0xFF {
			return errors.Join(serverError(p), w.done())
		}
		got = append(got, append([]byte(nil), p...))
	}
	unknown := func(what string) error {
		w.lose(errors.New(what))
		return &UnknownAnswer{What: what + " in the answer to SELECT 1"}
	}
	if len(got[0]) < 1 || got[0][0] != 1 {
		return unknown("a column count other than 1")
	}
	if len(got[1]) < 4 || string(got[1][:4]) != "\x03def" {
		return unknown("a column definition without the catalog \"def\"")
	}
	row := func(p []byte) bool { return len(p) == 2 && p[0] == 1 && p[1] == '1' }
	switch {
	case isEOF(got[2]) && row(got[3]):
		w.eofs = 1
		p, err := w.next() // the closing EOF
		if err != nil {
			return err
		}
		if !isEOF(p) {
			return unknown("no EOF packet after the row")
		}
	case row(got[2]) && len(got[3]) > 0 && got[3][0] == 0xFE:
		w.eofs = 2
	default:
		return unknown("neither an EOF packet nor the row after the column definition")
	}
	return w.done()
}

// MySQLStmt is a statement prepared on the socket.
type MySQLStmt struct {
	w       *MySQLWire
	id      uint32
	nparams int
	ncols   int
	cmd     []byte // COM_STMT_EXECUTE, rebuilt per call in place
}

// Prepare prepares sql with COM_STMT_PREPARE.
func (w *MySQLWire) Prepare(sql string) (*MySQLStmt, error) {
	if err := w.Probe(); err != nil {
		return nil, err
	}
	q := append(make([]byte, 4, 5+len(sql)), comStmtPrepare)
	q = append(q, sql...)
	if err := w.send(q); err != nil {
		return nil, err
	}
	p, err := w.next()
	if err != nil {
		return nil, err
	}
	if len(p) > 0 && p[0] == 0xFF {
		err := serverError(p)
		return nil, errors.Join(err, w.done())
	}
	if len(p) < 9 || p[0] != 0 {
		return nil, w.lose(errors.New("malformed COM_STMT_PREPARE answer"))
	}
	s := &MySQLStmt{w: w, id: binary.LittleEndian.Uint32(p[1:5]),
		ncols: int(binary.LittleEndian.Uint16(p[5:7])), nparams: int(binary.LittleEndian.Uint16(p[7:9]))}
	for _, n := range []int{s.nparams, s.ncols} {
		if n == 0 {
			continue
		}
		if w.eofs == 1 {
			n++
		}
		for range n {
			if _, err := w.next(); err != nil {
				return nil, err
			}
		}
	}
	return s, w.done()
}

// Encode builds COM_STMT_EXECUTE for args; ok is false for an argument
// type it does not encode.
func (s *MySQLStmt) Encode(args []any) (ok bool) {
	b := append(s.cmd[:0], 0, 0, 0, 0, comStmtExecute)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	b = append(b, 0, 1, 0, 0, 0) // no cursor, iteration count 1
	if len(args) > 0 {
		nb := len(b)
		for range (len(args) + 7) / 8 {
			b = append(b, 0)
		}
		b = append(b, 1) // types follow
		ts := len(b)
		for range args {
			b = append(b, 0, 0)
		}
		for i, a := range args {
			var t, u byte
			switch v := a.(type) {
			case nil:
				b[nb+i/8] |= 1 << (i % 8)
				t = 0x06
			case int64:
				t, b = 0x08, binary.LittleEndian.AppendUint64(b, uint64(v))
			case int:
				t, b = 0x08, binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
			case int32:
				t, b = 0x08, binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
			case uint64:
				t, u, b = 0x08, 0x80, binary.LittleEndian.AppendUint64(b, v)
			case float64:
				t, b = 0x05, binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			case bool:
				t = 0x01
				if v {
					b = append(b, 1)
				} else {
					b = append(b, 0)
				}
			case string:
				t = 0xFD
				b = appendLen(b, len(v))
				b = append(b, v...)
			case []byte:
				if v == nil {
					b[nb+i/8] |= 1 << (i % 8)
					t = 0x06
					break
				}
				t = 0xFC
				b = appendLen(b, len(v))
				b = append(b, v...)
			default:
				s.cmd = b
				return false
			}
			b[ts+2*i], b[ts+2*i+1] = t, u
		}
	}
	s.cmd = b
	return true
}

func appendLen(b []byte, n int) []byte {
	switch {
	case n < 0xFB:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xFC, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xFD, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xFE), uint64(n))
}

// Run sends the encoded command and reads the answer: the rows counted
// over every result set, and the affected rows of OK answers.
func (s *MySQLStmt) Run() (rows, affected int64, err error) {
	if err := s.w.send(s.cmd); err != nil {
		return 0, 0, err
	}
	return s.w.answer(nil)
}

// Query sends sql as COM_QUERY, in *cmd (reused), and reads its text
// answer as run reads a prepared statement's; with vals, each row's
// columns are appended to *vals as text (NULL as "", as engine.Text
// renders it), all of a row's columns sharing one string.
func (w *MySQLWire) Query(cmd *[]byte, sql string, vals *[][]string) (rows, affected int64, err error) {
	if err := w.Probe(); err != nil {
		return 0, 0, err
	}
	*cmd = append(append((*cmd)[:0], 0, 0, 0, 0, comQuery), sql...)
	if err := w.send(*cmd); err != nil {
		return 0, 0, err
	}
	return w.answer(vals)
}

// answer reads the answer to a command: OK packets' affected rows, and
// result sets (column count, column definitions, an EOF unless
// deprecated, rows, a closing EOF or OK) whose rows it counts and, with
// vals, reads as text rows (COM_QUERY's). A row is any packet that does
// not start 0xFE or 0xFF: binary rows start 0x00, and a text row would
// start 0xFE only for a first column of 16 MiB or more, a packet next
// refuses.
func (w *MySQLWire) answer(vals *[][]string) (rows, affected int64, err error) {
	for {
		p, err := w.next()
		if err != nil {
			return 0, 0, err
		}
		if len(p) == 0 {
			return 0, 0, w.lose(errors.New("empty packet"))
		}
		var status uint16
		switch p[0] {
		case 0xFF:
			return 0, 0, errors.Join(serverError(p), w.done())
		case 0x00: // OK: affected rows, insert id, status
			a, i, ok1 := lenenc(p, 1)
			_, i, ok2 := lenenc(p, i)
			if !ok1 || !ok2 || i+2 > len(p) {
				return 0, 0, w.lose(errors.New("malformed OK packet"))
			}
			affected += int64(a)
			status = binary.LittleEndian.Uint16(p[i:])
		case 0xFB:
			return 0, 0, w.lose(errors.New("LOCAL INFILE request not supported"))
		default: // a result set
			nc, i, ok := lenenc(p, 0)
			if !ok {
				return 0, 0, w.lose(errors.New("malformed column count"))
			}
			ncols, defs := int(nc), nc
			// With MariaDB's metadata caching (which the driver negotiates),
			// a byte after a prepared statement's count says whether the
			// definitions follow; 0: they do not, the prepared ones stand.
			if i < len(p) && p[i] == 0 {
				defs = 0
			}
			for range defs {
				if _, err := w.next(); err != nil {
					return 0, 0, err
				}
			}
			if w.eofs == 1 {
				if p, err = w.next(); err != nil {
					return 0, 0, err
				}
				if !isEOF(p) {
					return 0, 0, w.lose(errors.New("missing EOF after column definitions"))
				}
			}
			for {
				if p, err = w.next(); err != nil {
					return 0, 0, err
				}
				if len(p) == 0 || p[0] == 0xFE || p[0] == 0xFF {
					break
				}
				rows++
				if vals != nil {
					row, ok := textRow(p, ncols)
					if !ok {
						return 0, 0, w.lose(errors.New("malformed text row"))
					}
					*vals = append(*vals, row)
				}
			}
			switch {
			case len(p) > 0 && p[0] == 0xFF:
				return 0, 0, errors.Join(serverError(p), w.done())
			case isEOF(p) && w.eofs == 1 && len(p) >= 5:
				status = binary.LittleEndian.Uint16(p[3:])
			case len(p) > 0 && p[0] == 0xFE && w.eofs == 2:
				_, i, ok1 := lenenc(p, 1)
				_, i, ok2 := lenenc(p, i)
				if !ok1 || !ok2 || i+2 > len(p) {
					return 0, 0, w.lose(errors.New("malformed closing OK packet"))
				}
				status = binary.LittleEndian.Uint16(p[i:])
			default:
				return 0, 0, w.lose(errors.New("malformed end of rows"))
			}
		}
		if status&moreResults == 0 {
			return rows, affected, w.done()
		}
	}
}

// textRow reads a text row of ncols columns (each a length-encoded string,
// or 0xFB for NULL): one string holds the row's bytes and the columns are
// slices of it, so a row costs two allocations whatever its width.
func textRow(p []byte, ncols int) ([]string, bool) {
	all := string(p)
	row := make([]string, ncols)
	i := 0
	for c := range ncols {
		if i < len(p) && p[i] == 0xFB {
			i++ // NULL: ""
			continue
		}
		n, j, ok := lenenc(p, i)
		if !ok || uint64(len(p)-j) < n {
			return nil, false
		}
		row[c] = all[j : j+int(n)]
		i = j + int(n)
	}
	return row, i == len(p)
}

// Close deallocates the statement (COM_STMT_CLOSE has no answer).
func (s *MySQLStmt) Close() error {
	if s.w.broken {
		return nil
	}
	b := append(s.cmd[:0], 0, 0, 0, 0, comStmtClose)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	s.cmd = b
	return s.w.send(b)
}
