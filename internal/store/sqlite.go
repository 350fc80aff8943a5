package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver (with cgo; sqlite_nocgo.go)
)

// AppID marks a SQLite file as a benchlab results store (PRAGMA
// application_id, the header's bytes 68-71: "BnLb"), so that benchlab
// never adds its tables to another program's database.
const AppID = 0x426e4c62

// ErrNotStore is wrapped by Open's error for a file that is not a benchlab
// results store (another program's SQLite database, or not SQLite at all);
// such a file is left as it was.
var ErrNotStore = errors.New("not a benchlab results store")

// ErrCorrupt is wrapped by Open's error for a results store that fails
// SQLite's integrity check, found before anything is measured or written.
var ErrCorrupt = errors.New("the results store is corrupt")

// migrated, when set (by tests only), is called inside the migration's
// transaction after each schema statement, with the version it reaches.
var migrated func(version int)

// busyTimeout is how long a statement waits for another process's lock.
const busyTimeout = 10 * time.Second

// sqliteURI is the URI that opens the file at the absolute path abs,
// escaped so that '#', '?', '%' and spaces are part of the name and never
// a fragment, a query or an escape.
func sqliteURI(abs string) string {
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(abs); i++ {
		c := abs[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/-_.~+,=@:", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	fmt.Fprintf(&b, "?_busy_timeout=%d&_foreign_keys=1", busyTimeout.Milliseconds())
	return b.String()
}

// openSQLite opens or creates the SQLite results store at path. An
// existing file is checked before anything is written to it: it must be
// a benchlab store (AppID, or the tables of a store made before AppID)
// or empty, and pass SQLite's quick check.
func openSQLite(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store %s: %w", path, err)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", sqliteURI(abs))
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	s := &Store{db: db, path: path, id: abs}
	if err := s.prepareSQLite(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return s, nil
}

// fileState is what an open SQLite file holds before benchlab writes.
type fileState struct {
	appID, version int
	tables         []string
}

// readState reads the file's application id, schema version and tables.
func readState(ctx context.Context, q querier) (fileState, error) {
	var st fileState
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&st.appID); err != nil {
		return st, unreadable(err)
	}
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&st.version); err != nil {
		return st, unreadable(err)
	}
	rows, err := q.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		return st, unreadable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return st, unreadable(err)
		}
		st.tables = append(st.tables, name)
	}
	if err := rows.Err(); err != nil {
		return st, unreadable(err)
	}
	return st, nil
}

// unreadable is the error of a file SQLite cannot read: corrupt, or not
// a SQLite database at all.
func unreadable(err error) error {
	if sqliteIs(err, sqliteCorrupt) {
		return fmt.Errorf("%w: %v; nothing was run: restore it from a copy, or give --store another file", ErrCorrupt, err)
	}
	if sqliteIs(err, sqliteNotADB) {
		return fmt.Errorf("%w: %v", ErrNotStore, err)
	}
	return err
}

// check refuses a file that is neither empty nor a benchlab store. A
// store made before AppID is known by its schema version and tables.
func (st fileState) check() error {
	switch {
	case st.appID == AppID:
		return nil
	case st.appID == 0 && len(st.tables) == 0 && st.version == 0:
		return nil
	case st.appID == 0 && st.version > 0 && st.version <= len(schema) && hasAll(st.tables, "experiments", "runs", "results", "intervals"):
		return nil
	}
	shown := st.tables
	if len(shown) > 5 {
		shown = append(shown[:5:5], "...")
	}
	return fmt.Errorf("%w: a SQLite database of another program (application id %#x, schema version %d, tables %s); it was left as it was: give --store a new file or a benchlab results store",
		ErrNotStore, uint32(st.appID), st.version, orNothing(strings.Join(shown, ", ")))
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

func orNothing(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// prepareSQLite checks the file, switches it to WAL and brings its schema
// up to date, on one connection.
func (s *Store) prepareSQLite(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return unreadable(err)
	}
	defer conn.Close()
	st, err := readState(ctx, conn)
	if err != nil {
		return err
	}
	if err := st.check(); err != nil {
		return err
	}
	if len(st.tables) > 0 {
		// The whole file for a store of common size (a 71 MB one took
		// 0.3-0.9 s), its small tables for a larger one; a run checks all
		// of it (CheckIntegrity).
		var big []string
		if fi, err := os.Stat(s.path); err == nil && fi.Size() > fullCheckBytes {
			big = []string{"experiments", "runs"}
		}
		if err := quickCheck(ctx, conn, big...); err != nil {
			return err
		}
	}
	if st.appID != AppID || st.version != len(schema) {
		if err := migrateSQLite(ctx, conn); err != nil {
			return err
		}
	}
	return walMode(ctx, conn)
}

// walMode puts the file in WAL mode, where readers never wait for the
// writer, unless it is already (so that an up-to-date store on a
// read-only file opens). SQLite does not wait for other connections'
// locks to change the mode, so this retries for as long as the busy
// timeout.
func walMode(ctx context.Context, conn *sql.Conn) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		var mode string
		err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			err = conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		}
		if err == nil || !sqliteIs(err, sqliteBusy) || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("switch to WAL: %w", err)
			}
			continue
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fullCheckBytes is the size up to which Open checks the whole file.
var fullCheckBytes int64 = 32 << 20

// CheckIntegrity runs SQLite's quick integrity check on the whole store
// (every page and index entry, without matching indexes to their
// tables), as Open does for a store under fullCheckBytes: a run calls
// it before measuring anything. It is a no-op on PostgreSQL.
func (s *Store) CheckIntegrity(ctx context.Context) error {
	if s.pg {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	defer conn.Close()
	if err := quickCheck(ctx, conn); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	return nil
}

// quickCheck runs PRAGMA quick_check on the whole file, or only on the
// tables given.
func quickCheck(ctx context.Context, conn *sql.Conn, tables ...string) error {
	pragmas := []string{"PRAGMA quick_check(5)"}
	if len(tables) > 0 {
		pragmas = nil
		for _, t := range tables {
			pragmas = append(pragmas, "PRAGMA quick_check("+t+")")
		}
	}
	var found []string
	for _, p := range pragmas {
		lines, err := checkLines(ctx, conn, p)
		if err != nil {
			return err
		}
		found = append(found, lines...)
	}
	if len(found) > 5 {
		found = append(found[:5], "...")
	}
	if len(found) > 0 {
		return fmt.Errorf("%w (SQLite's quick_check: %s); nothing was run: restore it from a copy, or give --store another file",
			ErrCorrupt, strings.Join(found, "; "))
	}
	return nil
}

// checkLines runs one check pragma and returns what it found wrong.
func checkLines(ctx context.Context, conn *sql.Conn, pragma string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, pragma)
	if err != nil {
		return nil, unreadable(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, unreadable(err)
		}
		if line != "ok" {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, unreadable(err)
	}
	return found, nil
}

var (
	addColumn = regexp.MustCompile(`^ALTER TABLE (\w+) ADD COLUMN (\w+)`)
	create    = regexp.MustCompile(`^CREATE (?:TABLE|INDEX) (\w+)`)
)

// applied says whether the file has what a schema statement makes already:
// a benchlab before migrations ran in one transaction could be killed
// after a statement and before the version that counts it, and each
// statement is atomic, so what it made is whole.
func applied(ctx context.Context, conn *sql.Conn, stmt string) (bool, error) {
	var n int
	var err error
	if m := addColumn.FindStringSubmatch(stmt); m != nil {
		err = conn.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, m[1], m[2]).Scan(&n)
	} else if m := create.FindStringSubmatch(stmt); m != nil {
		err = conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, m[1]).Scan(&n)
	}
	return n > 0, err
}

// migrateSQLite applies the schema statements the file lacks, with the
// version and AppID, in one transaction that holds the write lock from its
// start (BEGIN IMMEDIATE): processes opening one new file at once migrate
// it once, and a process killed midway leaves the file as it was.
func migrateSQLite(ctx context.Context, conn *sql.Conn) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	defer func() {
		if err != nil {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	st, err := readState(ctx, conn)
	if err != nil {
		return err
	}
	if err := st.check(); err != nil {
		return err
	}
	if st.version > len(schema) {
		return fmt.Errorf("schema version %d is newer than this benchlab (%d)", st.version, len(schema))
	}
	if st.version == len(schema) && st.appID == AppID {
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}
	for i := st.version; i < len(schema); i++ {
		done, err := applied(ctx, conn, schema[i])
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if done {
			continue
		}
		if _, err := conn.ExecContext(ctx, schema[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if migrated != nil {
			migrated(i + 1)
		}
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(schema))); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", AppID)); err != nil {
		return fmt.Errorf("set application id: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit the schema: %w", err)
	}
	return nil
}
