//go:build cgo

// Package sqlite is the embedded SQLite engine, the zero-setup default. It uses
// mattn/go-sqlite3, which compiles the real SQLite C code into the binary, and
// talks to the driver directly (not through database/sql) so that the harness
// adds as little as possible to each statement.
package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"

	"benchlab/internal/engine"
)

func init() {
	engine.Register(Driver{})
	engine.RegisterConflicts(conflictOf)
}

// conflictOf classifies SQLite's snapshot conflicts (BUSY_SNAPSHOT: a
// read transaction that tried to write after another wrote) and lock waits
// that ran out of busy_timeout (BUSY).
func conflictOf(err error) engine.Conflict {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return engine.NoConflict
	}
	switch {
	case se.ExtendedCode == sqlite3.ErrBusySnapshot:
		return engine.Serialization
	case se.Code == sqlite3.ErrBusy:
		return engine.LockTimeout
	}
	return engine.NoConflict
}

// FileName is the database file created inside the data dir.
const FileName = "bench.db"

// Driver opens SQLite databases.
type Driver struct{}

// Name returns "sqlite".
func (Driver) Name() string { return "sqlite" }

// Summary describes the engine for `benchlab list`.
// Kind says the engine is an SQL engine.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

func (Driver) Summary() string {
	return "embedded SQLite " + libVersion() + " (compiled in); settings are PRAGMAs applied on every connection"
}

// settings in the order they are applied on a new connection: page_size must
// come before journal_mode=wal fixes the page size of a new database.
var settings = []engine.Setting{
	{Name: "page_size", Doc: "database page size in bytes (power of two, 512-65536); applies to a new database", Default: "4096", Check: powerOfTwo},
	{Name: "journal_mode", Doc: "rollback journal or WAL", Default: "wal", Check: engine.OneOf("delete", "truncate", "persist", "memory", "wal", "off")},
	{Name: "synchronous", Doc: "fsync policy", Default: "normal", Check: engine.OneOf("off", "normal", "full", "extra", "0", "1", "2", "3")},
	{Name: "cache_size", Doc: "page cache per connection: pages if positive, KiB if negative", Default: "-65536", Check: integer},
	{Name: "mmap_size", Doc: "bytes of the file to memory-map (0 disables)", Default: "0", Check: nonNegative},
	{Name: "busy_timeout", Doc: "milliseconds a connection waits for a lock before SQLITE_BUSY", Default: "10000", Check: nonNegative},
	{Name: "temp_store", Doc: "where temporary tables and indexes live", Default: "default", Check: engine.OneOf("default", "file", "memory", "0", "1", "2")},
	{Name: "wal_autocheckpoint", Doc: "WAL pages before an automatic checkpoint (0 disables)", Default: "1000", Check: nonNegative},
}

// Settings lists the PRAGMAs a target may set.
func (Driver) Settings() []engine.Setting { return settings }

// Open creates (or opens) dir/bench.db with the target's settings applied on
// every connection.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := engine.CheckSettings(Driver{}, t.Settings); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: data dir: %w", err)
	}
	var pragmas []string
	for _, s := range settings {
		v, ok := t.Settings[s.Name]
		if !ok {
			v = s.Default
		}
		pragmas = append(pragmas, fmt.Sprintf("PRAGMA %s=%s", s.Name, strings.ToLower(v)))
	}
	db := &DB{path: filepath.Join(dir, FileName), pragmas: pragmas}
	admin, err := db.connect()
	if err != nil {
		return nil, err
	}
	db.admin = admin
	return db, nil
}

// DB is an open SQLite database file.
type DB struct {
	path    string
	pragmas []string
	admin   *Conn
}

func (db *DB) connect() (*Conn, error) {
	d := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		for _, p := range db.pragmas {
			if _, err := c.Exec(p, nil); err != nil {
				return fmt.Errorf("sqlite: %s: %w", p, err)
			}
		}
		return nil
	}}
	// _txlock is irrelevant (benchlab issues BEGIN itself); cache=private keeps
	// each connection's page cache its own, as separate clients would have.
	c, err := d.Open("file:" + db.path + "?cache=private")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", db.path, err)
	}
	return &Conn{c: c.(*sqlite3.SQLiteConn)}, nil
}

// Dialect returns engine.SQLite.
func (db *DB) Dialect() engine.Dialect { return engine.SQLite }

// CallsC returns true: operations are cgo calls.
func (db *DB) CallsC() bool { return true }

// Connect opens a new connection with the target's PRAGMAs applied.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) { return db.connect() }

// Maintain checkpoints the WAL into the database file and refreshes the
// planner statistics: SQLite's equivalent of the postwrite cleanup.
func (db *DB) Maintain(ctx context.Context, tables []string) ([]string, error) {
	if _, err := db.admin.Query(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return nil, fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	if _, err := db.admin.Exec(ctx, "ANALYZE"); err != nil {
		return nil, fmt.Errorf("sqlite: analyze: %w", err)
	}
	return nil, nil
}

// DBSize is the database file's pages times the page size.
func (db *DB) DBSize(ctx context.Context) (int64, error) {
	var n [2]int64
	for i, q := range []string{"PRAGMA page_count", "PRAGMA page_size"} {
		v, err := db.admin.scalar(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("sqlite: %s: %w", q, err)
		}
		if n[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, fmt.Errorf("sqlite: %s: %q is not a number", q, v)
		}
	}
	return n[0] * n[1], nil
}

// Info reads the effective PRAGMA values and the library version back.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{
		Engine:   "sqlite",
		Version:  libVersion(),
		Build:    "mattn/go-sqlite3 amalgamation compiled into benchlab",
		Settings: map[string]string{},
	}
	for _, s := range settings {
		v, err := db.admin.scalar(ctx, "PRAGMA "+s.Name)
		if err != nil {
			return info, fmt.Errorf("sqlite: read back %s: %w", s.Name, err)
		}
		info.Settings[s.Name] = v
	}
	return info, nil
}

// Close closes the administrative connection. Workers close their own.
func (db *DB) Close() error { return db.admin.Close() }

func libVersion() string {
	v, _, _ := sqlite3.Version()
	return v
}

// Conn is one SQLite connection.
type Conn struct {
	c *sqlite3.SQLiteConn
}

// Exec runs sql unprepared and returns the rows changed.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	r, err := c.c.ExecContext(ctx, sql, named(nil, args))
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// Query runs sql unprepared and counts the rows it returns.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (int64, error) {
	rows, err := c.c.QueryContext(ctx, sql, named(nil, args))
	if err != nil {
		return 0, err
	}
	return engine.DrainRows(rows, nil)
}

// Values runs sql unprepared and returns its rows as text.
func (c *Conn) Values(ctx context.Context, sql string, args ...any) ([][]string, error) {
	rows, err := c.c.QueryContext(ctx, sql, named(nil, args))
	if err != nil {
		return nil, err
	}
	return engine.ReadValues(rows)
}

func (c *Conn) scalar(ctx context.Context, sql string) (string, error) {
	rows, err := c.c.QueryContext(ctx, sql, nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		return "", err
	}
	switch v := dest[0].(type) {
	case []byte:
		return string(v), nil
	case nil:
		return "", nil
	default:
		return fmt.Sprint(v), nil
	}
}

// Prepare compiles sql once for repeated use on this connection.
func (c *Conn) Prepare(ctx context.Context, sql string, cost engine.Cost) (engine.Stmt, error) {
	s, err := c.c.Prepare(sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, err)
	}
	st := s.(*sqlite3.SQLiteStmt)
	return &Stmt{s: st, long: cost == engine.Long}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Stmt is a prepared statement. It reuses its argument and row buffers, so it
// allocates almost nothing per execution.
type Stmt struct {
	s    *sqlite3.SQLiteStmt
	long bool
	args []driver.NamedValue
	dest []driver.Value
}

// ctx returns the context a call should run under: short statements skip the
// driver's cancellation machinery, which costs more than a cached point query.
func (s *Stmt) ctx(ctx context.Context) context.Context {
	if s.long {
		return ctx
	}
	return context.Background()
}

// Exec runs the statement and returns the rows changed.
func (s *Stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	s.args = named(s.args[:0], args)
	r, err := s.s.ExecContext(s.ctx(ctx), s.args)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// Query runs the statement and counts the rows it returns.
func (s *Stmt) Query(ctx context.Context, args ...any) (int64, error) {
	s.args = named(s.args[:0], args)
	rows, err := s.s.QueryContext(s.ctx(ctx), s.args)
	if err != nil {
		return 0, err
	}
	n, err := engine.DrainRows(rows, &s.dest)
	return n, err
}

// Values runs the statement and returns its rows as text.
func (s *Stmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	s.args = named(s.args[:0], args)
	rows, err := s.s.QueryContext(s.ctx(ctx), s.args)
	if err != nil {
		return nil, err
	}
	return engine.ReadValues(rows)
}

// Close finalizes the statement.
func (s *Stmt) Close() error { return s.s.Close() }

// named converts arguments to the driver's form, widening Go ints to int64,
// which is the only integer type the driver binds.
func named(dst []driver.NamedValue, args []any) []driver.NamedValue {
	for i, a := range args {
		switch v := a.(type) {
		case int:
			a = int64(v)
		case int32:
			a = int64(v)
		}
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return dst
}

func integer(v string) error {
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return errors.New("want an integer")
	}
	return nil
}

func nonNegative(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return errors.New("want an integer >= 0")
	}
	return nil
}

func powerOfTwo(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 512 || n > 65536 || n&(n-1) != 0 {
		return errors.New("want a power of two from 512 to 65536")
	}
	return nil
}

// Address is the database file (in DSN), which the sqlite3 shell opens.
func (db *DB) Address() engine.Address { return engine.Address{DSN: db.path} }
