// Package postgres is the PostgreSQL engine. A target either names an install
// (basedir, or version, or Debian's package by default), and benchlab starts a
// server of its own per cell on a fresh data dir (package server), or a DSN of
// an existing server that benchlab uses as is. PostgreSQL's part of the
// server lifecycle (initdb, postgresql.conf, the postgres user under root) is
// server.go's Flavor, its releases release.go's; the rest is package
// server's, shared by every family.
//
// It speaks pgx's native protocol layer (pgconn), not database/sql: a prepared
// statement is one Bind/Execute round trip with text-encoded parameters held
// in reused buffers, so the client adds little CPU per query and the
// server's cost, not the client's, is what a run measures.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
	"benchlab/internal/server"
)

func init() {
	engine.Register(Driver{})
	engine.RegisterConflicts(conflictOf)
}

// conflictOf classifies PostgreSQL's serialization failures (40001) and
// deadlocks (40P01).
func conflictOf(err error) engine.Conflict {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return engine.NoConflict
	}
	switch pe.Code {
	case "40001":
		return engine.Serialization
	case "40P01":
		return engine.Deadlock
	}
	return engine.NoConflict
}

// Database is the benchmark database created on a managed server.
const Database = "sbtest"

// Driver opens PostgreSQL targets.
type Driver struct{}

// Name returns "postgres".
func (Driver) Name() string { return "postgres" }

// Kind says the engine is an SQL engine.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "PostgreSQL server started per run from basedir/version (default: Debian's package) or an existing server by dsn; settings are postgresql.conf variables"
}

// Settings returns nil: a server has hundreds of settings and checks them
// itself when it starts; a rejected one fails the cell with the log tail.
func (Driver) Settings() []engine.Setting { return nil }

// CheckTarget validates the server fields of a target before anything runs.
func (Driver) CheckTarget(t engine.Target) error {
	return server.CheckTarget(Flavor, "postgres", t)
}

// Flavor returns the PostgreSQL flavor its managed servers follow.
func (Driver) Flavor() server.Flavor { return Flavor }

// Open starts a server on a fresh data dir under dir and creates the
// benchmark database, or connects to the target's DSN.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if t.DSN != "" {
		cfg, err := pgx.ParseConfig(t.DSN)
		if err != nil {
			return nil, fmt.Errorf("postgres target %s: dsn %s: %s", t.Name, server.RedactDSN(t.DSN),
				server.RedactIn(err.Error(), passwordOf(t.DSN)))
		}
		db := &DB{target: t, cfg: cfg}
		if db.admin, err = db.dial(ctx, cfg); err != nil {
			return nil, err
		}
		if err := db.chooseClient(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	// What the environment could break (PGSERVICE) breaks before a
	// server starts, not in its readiness probe.
	if _, err := managedConfig(5432, "postgres", ""); err != nil {
		return nil, fmt.Errorf("postgres target %s: %w", t.Name, err)
	}
	inst, err := server.LaunchTarget(ctx, Flavor, "postgres", t, dir, probe)
	if err != nil {
		return nil, err
	}
	db := &DB{target: t, Managed: server.Manage(inst)}
	fail := func(err error) (engine.DB, error) {
		db.Close()
		return nil, err
	}
	cfg, err := managedConfig(inst.Port, "postgres", inst.Password())
	if err != nil {
		return fail(fmt.Errorf("postgres target %s: %w", t.Name, err))
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fail(fmt.Errorf("postgres target %s at %s: connect: %s", t.Name, inst.Addr(), server.RedactIn(err.Error(), inst.Password())))
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+Database); err != nil {
		admin.Close(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("postgres target %s at %s: create database %s: %w", t.Name, inst.Addr(), Database, err))
	}
	admin.Close(ctx)
	if db.cfg, err = managedConfig(inst.Port, Database, inst.Password()); err != nil {
		return fail(fmt.Errorf("postgres target %s: %w", t.Name, err))
	}
	if db.admin, err = db.dial(ctx, db.cfg); err != nil {
		return fail(err)
	}
	// The per-second gauges' extensions, created now rather than by the
	// first read, which falls in a measured step (the catalog rows and the
	// commit would count as the step's).
	if db.gauges, err = db.usableGauges(ctx); err != nil {
		return fail(err)
	}
	if err := db.chooseClient(ctx); err != nil {
		return fail(err)
	}
	return db, nil
}

// managedConfig reaches a managed server over TCP on loopback, as the
// superuser that initdb created, with its password, and as nothing else: pgx reads libpq's PG* variables (PGOPTIONS, PGTZ, PGAPPNAME,
// PGSSLMODE, PGPASSWORD, ...) and ~/.pgpass for every parameter a DSN
// leaves out, so the DSN names every one of them (managedDSN) and the
// session settings they could add are dropped: the user's shell cannot
// change a server benchlab started, nor the configuration it measures. A
// target's own dsn keeps pgx's standard behaviour (Open).
func managedConfig(port int, database, password string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf(managedDSN, server.Host, port, database, password))
	if err != nil {
		// Only PGSERVICE cannot be overridden by a DSN: pgx reads the
		// service it names before the DSN's values apply.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // not the long DSN pgx quotes
		}
		return nil, fmt.Errorf("connection to the server benchlab starts: %w; a server benchlab starts takes no PG* "+
			"variable: unset PGSERVICE (or give the target a dsn)", err)
	}
	cfg.RuntimeParams = map[string]string{}
	return cfg, nil
}

// managedDSN gives every parameter pgx would otherwise take from the
// environment its libpq default (pgconn's parseEnvSettings lists them):
// host, port, database, user and password (hex digits, the server's
// Instance.Password) as formatted, no passfile, no TLS, no connect timeout, any server, protocol 3.0,
// and empty session parameters, which managedConfig drops.
const managedDSN = "host=%s port=%d dbname=%s user=postgres password='%s' passfile='' " +
	"sslmode=disable sslcertmode=allow sslkey='' sslcert='' sslrootcert='' sslpassword='' sslsni=1 sslnegotiation=postgres " +
	"connect_timeout=0 target_session_attrs=any min_protocol_version=3.0 max_protocol_version=3.0 " +
	"channel_binding=prefer require_auth='' application_name='' options='' timezone=''"

func probe(ctx context.Context, inst *server.Instance) error {
	cfg, err := managedConfig(inst.Port, "postgres", inst.Password())
	if err != nil {
		return err
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, "SELECT 1")
	return err
}

func passwordOf(dsn string) string {
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		return cfg.Password
	}
	return ""
}

// DB is an opened PostgreSQL database, on a managed server or a DSN's.
type DB struct {
	target         engine.Target
	server.Managed // the server benchlab started; empty for a DSN target
	cfg            *pgx.ConnConfig
	admin          *pgx.Conn
	closed         sync.Once
	// statsMu guards statsViews, the statistics views this server has
	// (ReadStats, read once), and ended, the backends of the last worker
	// sessions closed (Conn.Close), whose exit ReadStats waits for.
	statsMu    sync.Mutex
	statsViews []statView
	ended      []uint32
	// gauges are the gaugeQueries this server answers (ReadInternals,
	// found once), under statsMu; ownXacts counts the statements the
	// statistics reads ran on the administrative connection, each a
	// transaction that pg_stat_database.xact_commit counts, taken off it.
	gauges   []gaugeQuery
	ownXacts float64
	// client is the workers' client path (client.go).
	client engine.ClientPath
}

// dial opens a connection, with errors that name the target and never the password.
func (db *DB) dial(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	cfg = cfg.Copy()
	if db.client.Fast {
		cfg.DialFunc = fastpath.Dial
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, db.Wrap(fmt.Errorf("postgres target %s at %s: connect: %s", db.target.Name, db.where(),
			server.RedactIn(err.Error(), cfg.Password)))
	}
	return c, nil
}

func (db *DB) where() string {
	if db.Instance() != nil {
		return db.Instance().Addr()
	}
	return fmt.Sprintf("%s:%d", db.cfg.Host, db.cfg.Port)
}

// Dialect returns engine.Postgres.
func (db *DB) Dialect() engine.Dialect { return engine.Postgres }

// Remote returns true: workers reach the server over a socket.
func (db *DB) Remote() bool { return true }

// Connect opens a worker connection.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) {
	c, err := db.dial(ctx, db.cfg)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, db: db}, nil
}

// Maintain is the postwrite cleanup of docs/method.md 1.9 (iq.sh vac_pg): vacuum
// analyze every table in parallel (with index_cleanup on from PostgreSQL
// 12), then a checkpoint (left out when the user of an existing server may
// not run one, which it returns as skipped).
func (db *DB) Maintain(ctx context.Context, tables []string) ([]string, error) {
	var num int
	if err := db.admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		return nil, db.Wrap(fmt.Errorf("postgres: server version: %w", err))
	}
	opts := "ANALYZE"
	if num >= 120000 {
		opts = "ANALYZE, INDEX_CLEANUP ON"
	}
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, tbl := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.dial(ctx, db.cfg)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close(context.WithoutCancel(ctx))
			if _, err := c.Exec(ctx, fmt.Sprintf("VACUUM (%s) %s", opts, pgx.Identifier{tbl}.Sanitize())); err != nil {
				errs[i] = db.Wrap(fmt.Errorf("postgres: vacuum %s: %w", tbl, err))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := db.admin.Exec(ctx, "CHECKPOINT"); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			// insufficient_privilege: a user of an existing server (dsn)
			// that is neither superuser nor pg_checkpoint; the cleanup is
			// then the vacuum, and the run says so.
			return []string{fmt.Sprintf("CHECKPOINT left out: user %s is neither superuser nor a member of pg_checkpoint (%s)",
				db.cfg.User, pe.Message)}, nil
		}
		return nil, db.Wrap(fmt.Errorf("postgres: checkpoint: %w", err))
	}
	return nil, nil
}

// DBSize is pg_database_size of the benchmark database.
func (db *DB) DBSize(ctx context.Context) (int64, error) {
	var n int64
	if err := db.admin.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		return 0, db.Wrap(fmt.Errorf("postgres: database size: %w", err))
	}
	return n, nil
}

// reportedSettings are read back for every run besides those the target sets.
var reportedSettings = []string{"shared_buffers", "max_wal_size", "checkpoint_timeout", "synchronous_commit",
	"fsync", "full_page_writes", "wal_compression", "work_mem", "effective_cache_size", "max_connections",
	"huge_pages", "jit", "default_transaction_isolation"}

// Info reads the version, the build and the effective settings from the server.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: "postgres", Settings: map[string]string{}}
	var full, short string
	if err := db.admin.QueryRow(ctx, "SELECT version(), current_setting('server_version')").Scan(&full, &short); err != nil {
		return info, db.Wrap(fmt.Errorf("postgres: version: %w", err))
	}
	info.Version, _, _ = strings.Cut(short, " ")
	compiler := ""
	if _, c, ok := strings.Cut(full, "compiled by "); ok {
		compiler = "compiled by " + c
	}
	if db.Instance() != nil {
		info.Build = server.Provenance(db.Instance().Binaries())
	} else {
		info.Build = "existing server (dsn)"
	}
	if compiler != "" {
		info.Build += "; " + compiler
	}
	names := append([]string(nil), reportedSettings...)
	for k := range db.target.Settings {
		names = append(names, strings.ToLower(k))
	}
	rows, err := db.admin.Query(ctx, "SELECT name, current_setting(name), coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)", names)
	if err != nil {
		return info, db.Wrap(fmt.Errorf("postgres: settings: %w", err))
	}
	for rows.Next() {
		var k, v, unit string
		if err := rows.Scan(&k, &v, &unit); err != nil {
			rows.Close()
			return info, fmt.Errorf("postgres: settings: %w", err)
		}
		info.Settings[k] = v
		if unit != "" {
			if info.SettingUnits == nil {
				info.SettingUnits = map[string]string{}
			}
			info.SettingUnits[k] = unit
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return info, db.Wrap(fmt.Errorf("postgres: settings: %w", err))
	}
	if db.Instance() != nil {
		maps.Copy(info.Settings, db.Instance().ManagedSettings())
	}
	info.Client, info.Notes = db.client.Info()
	return info, nil
}

// Close closes the administrative connection and stops a managed server,
// keeping its log. Workers close their own connections.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		if db.admin != nil {
			db.admin.Close(context.Background())
		}
		err = db.Managed.Stop()
	})
	return err
}

// isControl reports whether sql is a transaction control statement, which
// sysbench sends as plain text (con:query("BEGIN")) rather than preparing.
func isControl(sql string) bool {
	switch strings.ToUpper(strings.TrimSpace(sql)) {
	case "BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION":
		return true
	}
	return false
}

// Conn is one worker connection.
type Conn struct {
	c  *pgx.Conn
	db *DB
	// watch lets a statement's context end short statements (enter).
	watch engine.CallWatch
}

// enter starts a short statement under ctx, whose end then interrupts it
// as a cancelled context interrupts pgconn's own calls: the socket's
// deadline is set in the past, which ends a blocked read or write (a hung
// server's), and the connection is then closed, lost (engine.CallWatch).
// leave ends the statement.
func (c *Conn) enter(ctx context.Context) error { return c.watch.Enter(ctx, c.c.PgConn().Conn()) }

func (c *Conn) leave() { c.watch.Leave() }

var stmtSeq atomic.Int64

// Exec runs sql without preparing it: text with the arguments inlined by the
// client (simple query protocol), as sysbench --db-ps-mode=disable does.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if len(args) == 0 {
		res, err := c.c.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			return 0, c.fail(err)
		}
		var n int64
		for _, r := range res {
			n += r.CommandTag.RowsAffected()
		}
		return n, nil
	}
	tag, err := c.c.Exec(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return 0, c.fail(err)
	}
	return tag.RowsAffected(), nil
}

// Query runs sql without preparing it and counts the rows it returns.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (int64, error) {
	rows, err := c.c.Query(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return 0, c.fail(err)
	}
	var n int64
	for rows.Next() {
		n++
	}
	rows.Close()
	return n, c.fail(rows.Err())
}

// Values runs sql without preparing it and returns its rows as text.
func (c *Conn) Values(ctx context.Context, sql string, args ...any) ([][]string, error) {
	rows, err := c.c.Query(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return nil, c.fail(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		out = append(out, textRow(rows.RawValues()))
	}
	return out, c.fail(rows.Err())
}

// textRow copies a row's raw text-format values as strings (NULL as ""):
// one string holds the row's bytes and the columns are slices of it, so a
// row costs two allocations whatever its width (a string per column made
// 253 allocations per text New-Order).
func textRow(raw [][]byte) []string {
	n := 0
	for _, b := range raw {
		n += len(b)
	}
	var all strings.Builder
	all.Grow(n)
	for _, b := range raw {
		all.Write(b)
	}
	s := all.String()
	row := make([]string, len(raw))
	at := 0
	for i, b := range raw {
		row[i] = s[at : at+len(b)]
		at += len(b)
	}
	return row
}

// fail adds the server's death, if it died, to err, and marks an error that
// closed the connection as engine.ErrConnLost.
func (c *Conn) fail(err error) error {
	if err != nil && c.c.IsClosed() {
		err = fmt.Errorf("%w: %w", engine.ErrConnLost, err)
	}
	return c.db.Wrap(err)
}

// Prepare prepares sql as a named server-side statement. Transaction control
// statements stay text, as sysbench sends them.
func (c *Conn) Prepare(ctx context.Context, sql string, cost engine.Cost) (engine.Stmt, error) {
	if isControl(sql) {
		return c.PrepareText(sql, engine.Short), nil
	}
	sd, err := c.c.Prepare(ctx, "bl"+strconv.FormatInt(stmtSeq.Add(1), 10), sql)
	if err != nil {
		return nil, c.fail(fmt.Errorf("prepare %q: %w", sql, err))
	}
	st := &Stmt{c: c, sd: sd, long: c.db.cost(cost) == engine.Long}
	if !st.long {
		st.fast = fastpath.NewPGStmt(sd)
	}
	return st, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.watch.Stop()
	c.db.ending(c.c.PgConn().PID())
	return c.c.Close(context.Background())
}

// Address reaches the database with libpq's variables (PGHOST, PGPORT,
// PGUSER, PGDATABASE, and PGPASSWORD for a DSN's password), so that psql and
// pgbench find it without options; the DSN is libpq's key=value form.
func (db *DB) Address() engine.Address {
	a := engine.Address{Host: db.cfg.Host, Port: int(db.cfg.Port), User: db.cfg.User, Password: db.cfg.Password,
		Database: db.cfg.Database}
	a.DSN = fmt.Sprintf("host=%s port=%d user=%s dbname=%s", a.Host, a.Port, a.User, a.Database)
	if db.cfg.TLSConfig == nil {
		a.DSN += " sslmode=disable"
	}
	a.Env = []string{"PGHOST=" + a.Host, fmt.Sprintf("PGPORT=%d", a.Port), "PGUSER=" + a.User, "PGDATABASE=" + a.Database}
	if db.cfg.TLSConfig == nil {
		a.Env = append(a.Env, "PGSSLMODE=disable")
	}
	if a.Password != "" {
		a.Env = append(a.Env, "PGPASSWORD="+a.Password)
	}
	return a
}
