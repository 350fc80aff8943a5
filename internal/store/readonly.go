package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// OpenReadOnly opens an existing results database for reading only: a
// SQLite file in SQLite's read-only mode (no migration, no journal written),
// a PostgreSQL store with every transaction read-only. A reader such as
// compare or history then cannot change the store it reads, and reading a
// store on a read-only disk or as a user who may not write it works. The
// schema must be this benchlab's: an older file is migrated by a command
// that writes (benchlab runs), a newer one needs a newer benchlab.
func OpenReadOnly(path string) (*Store, error) {
	if IsPostgres(path) {
		return openPostgresReadOnly(path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", sqliteURI(abs)+"&mode=ro")
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	s := &Store{db: db, path: path, id: abs}
	st, err := readState(context.Background(), db)
	if err == nil {
		err = st.check()
	}
	if err == nil {
		err = schemaCurrent(st.version)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return s, nil
}

// schemaCurrent says why a store at schema version v cannot be read
// without migrating it, nil when it can.
func schemaCurrent(v int) error {
	switch {
	case v > len(schema):
		return fmt.Errorf("schema version %d is newer than this benchlab (%d)", v, len(schema))
	case v < len(schema):
		return fmt.Errorf("schema version %d is older than this benchlab's (%d) and a read-only open does not migrate it; "+
			"run `benchlab runs --store ...` once to bring it up to date", v, len(schema))
	}
	return nil
}

// openPostgresReadOnly connects to a shared PostgreSQL store with
// default_transaction_read_only on, so that any write fails.
func openPostgresReadOnly(dsn string) (*Store, error) {
	shown := redactURL(dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", shown, err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", shown, err)
	}
	s := &Store{db: db, path: shown, pg: true, id: shown}
	var v sql.NullInt64
	if err := db.QueryRow("SELECT max(version) FROM benchlab_schema").Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: read schema version: %s", shown, strings.ReplaceAll(err.Error(), dsn, shown))
	}
	if err := schemaCurrent(int(v.Int64)); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", shown, err)
	}
	return s, nil
}
