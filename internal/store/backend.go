package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx" for database/sql

	"benchlab/internal/sqlbind"
)

// IsPostgres reports whether a --store value names a PostgreSQL database
// (a postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// redactURL hides the password of a store URL, for messages and Path.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// querier is what the store's statements run on: the database or one of its
// transactions.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// bound runs the store's statements, written for SQLite with '?'
// placeholders, on either backend: for PostgreSQL it numbers the
// placeholders and passes booleans as the integers the columns hold.
type bound struct {
	q  querier
	pg bool
}

func (b bound) sql(query string) string {
	if b.pg {
		return sqlbind.Numbered(query)
	}
	return query
}

func (b bound) args(args []any) []any {
	if !b.pg {
		return args
	}
	for i, a := range args {
		if v, ok := a.(bool); ok {
			args[i] = map[bool]int64{false: 0, true: 1}[v]
		}
	}
	return args
}

func (b bound) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return b.q.ExecContext(ctx, b.sql(query), b.args(args)...)
}

func (b bound) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return b.q.QueryContext(ctx, b.sql(query), b.args(args)...)
}

func (b bound) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return b.q.QueryRowContext(ctx, b.sql(query), b.args(args)...)
}

// prepared is a prepared statement whose boolean arguments bound converts.
type prepared struct {
	st *sql.Stmt
	b  bound
}

func (p prepared) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return p.st.ExecContext(ctx, p.b.args(args)...)
}

func (p prepared) Close() error { return p.st.Close() }

func (b bound) PrepareContext(ctx context.Context, query string) (prepared, error) {
	st, err := b.q.PrepareContext(ctx, b.sql(query))
	return prepared{st: st, b: b}, err
}

var (
	pgSerial  = regexp.MustCompile(`\bid INTEGER PRIMARY KEY\b`)
	pgInteger = regexp.MustCompile(`\bINTEGER\b`)
	pgReal    = regexp.MustCompile(`\bREAL\b`)
	pgBlob    = regexp.MustCompile(`\bBLOB\b`)
)

// pgDDL translates a schema statement to PostgreSQL's types: 64-bit
// integers and doubles (SQLite's INTEGER and REAL are both), generated ids,
// bytea.
func pgDDL(stmt string) string {
	stmt = pgSerial.ReplaceAllString(stmt, "id BIGSERIAL PRIMARY KEY")
	stmt = pgInteger.ReplaceAllString(stmt, "BIGINT")
	stmt = pgReal.ReplaceAllString(stmt, "DOUBLE PRECISION")
	return pgBlob.ReplaceAllString(stmt, "BYTEA")
}

// schemaLock is the advisory lock key that serialises benchlab processes
// migrating one shared PostgreSQL store.
const schemaLock = 0x62656e63686c6162 // "benchlab"

// openPostgres opens a shared results database on a PostgreSQL server and
// brings its schema up to date, in one transaction under an advisory lock.
func openPostgres(dsn string) (*Store, error) {
	shown := redactURL(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", shown, err)
	}
	s := &Store{db: db, path: shown, pg: true, id: shown}
	if err := s.migratePostgres(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %s", shown, strings.ReplaceAll(err.Error(), dsn, shown))
	}
	return s, nil
}

func (s *Store) migratePostgres() error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS benchlab_schema (version BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("schema version table: %w", err)
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT max(version) FROM benchlab_schema").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if int(v.Int64) > len(schema) {
		return fmt.Errorf("schema version %d is newer than this benchlab (%d)", v.Int64, len(schema))
	}
	if int(v.Int64) == len(schema) {
		return nil
	}
	for i := int(v.Int64); i < len(schema); i++ {
		if _, err := tx.ExecContext(ctx, pgDDL(schema[i])); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM benchlab_schema"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO benchlab_schema (version) VALUES ($1)", len(schema)); err != nil {
		return err
	}
	return tx.Commit()
}
