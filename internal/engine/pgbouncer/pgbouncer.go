// Package pgbouncer is PgBouncer (Debian's package) in front of a
// PostgreSQL server, both started per run on loopback: the connect suite
// then measures what a pooler saves a client that opens a connection per
// request, against a plain postgres target. The server is the postgres
// engine's, started as a postgres target is; PgBouncer runs as postgres
// with its own pgbouncer.ini and an auth file holding the server user's
// SCRAM secret (the server's per-start password is never written in
// clear), and the DB is the postgres engine's, its workers sent to the
// pooler (postgres.DB.Behind): the runner counts the server's and the
// pooler's processes as the server's CPU, and Close stops the pooler, then
// the server. The wiring follows the galera engine's HAProxy.
//
// A target's settings are postgresql.conf variables, except benchlab's own:
// pool_mode (session, the default, or transaction) and pool_size (the
// server connections per database and user, default_pool_size; default
// 20). PgBouncer 1.18 keeps no prepared statement across the transactions
// of transaction pooling, so the spec refuses prepared = true there for
// suites that prepare (LosesPrepared). An existing pooler is a postgres target whose dsn names it.
package pgbouncer

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

// Name is the engine's name.
const Name = "pgbouncer"

// The settings that are benchlab's, not postgresql.conf's.
const (
	SettingMode     = "pool_mode"
	SettingPoolSize = "pool_size"
)

// DefaultPoolSize is PgBouncer's own default_pool_size.
const DefaultPoolSize = 20

func init() { engine.Register(Driver{}) }

// Driver starts PostgreSQL behind PgBouncer.
type Driver struct{}

// Name returns "pgbouncer".
func (Driver) Name() string { return Name }

// Kind says the engine speaks SQL.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// ChoosesClient says a target may choose its client path, as a postgres
// target does.
func (Driver) ChoosesClient() {}

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "PgBouncer (settings.pool_mode session or transaction) in front of a PostgreSQL server, both started per run on loopback; other settings are postgresql.conf variables"
}

// LosesPrepared says why a transaction-pooled target keeps no prepared
// statement: each transaction may run on another server connection, and
// PgBouncer 1.18 does not carry statements over (max_prepared_statements
// came in 1.21).
func (Driver) LosesPrepared(t engine.Target) string {
	if mode, _, err := modeOf(t); err == nil && mode == "transaction" {
		return "pools by transaction, and PgBouncer 1.18 keeps no prepared statement across transactions"
	}
	return ""
}

// Settings returns nil: the server checks its settings when it starts.
func (Driver) Settings() []engine.Setting { return nil }

// Flavor returns the server's flavor, for the install checks.
func (Driver) Flavor() server.Flavor { return postgres.Flavor }

// modeOf returns the pool mode and size target t asks for; the error names
// the setting.
func modeOf(t engine.Target) (mode string, size int, err error) {
	mode, size = "session", DefaultPoolSize
	for k, v := range t.Settings {
		switch strings.ToLower(k) {
		case SettingMode:
			mode = strings.ToLower(strings.TrimSpace(v))
			if mode != "session" && mode != "transaction" {
				return "", 0, fmt.Errorf("settings.%s: %q is not a pool mode; want session (a server connection per client session) "+
					"or transaction (one per transaction)", SettingMode, v)
			}
		case SettingPoolSize:
			if size, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || size < 1 || size > 10000 {
				return "", 0, fmt.Errorf("settings.%s: %q is not a pool size; want 1 to 10000 server connections", SettingPoolSize, v)
			}
		}
	}
	return mode, size, nil
}

// serverTarget is t as the PostgreSQL server sees it: benchlab's settings
// left out.
func serverTarget(t engine.Target) engine.Target {
	st := t
	st.Engine = "postgres"
	st.Settings = map[string]string{}
	for k, v := range t.Settings {
		switch strings.ToLower(k) {
		case SettingMode, SettingPoolSize:
		default:
			st.Settings[k] = v
		}
	}
	return st
}

// CheckTarget validates a target before anything runs: no dsn, the pool
// settings, PgBouncer's program, and the postgres engine's checks of the
// server's fields.
func (d Driver) CheckTarget(t engine.Target) error {
	if t.DSN != "" {
		return fmt.Errorf("dsn: a pgbouncer target starts its own server and pooler; an existing pooler is a postgres target whose dsn names it")
	}
	if _, _, err := modeOf(t); err != nil {
		return err
	}
	if _, err := (pooler{}).FindBinaries(""); err != nil {
		return err
	}
	return postgres.Driver{}.CheckTarget(serverTarget(t))
}

// Open starts the server (dir/server), reads its user's SCRAM secret,
// starts PgBouncer (dir/pooler) in front of it and returns the postgres
// DB whose workers connect through the pooler.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := d.CheckTarget(t); err != nil {
		return nil, fmt.Errorf("%s target %s: %w", Name, t.Name, err)
	}
	mode, size, _ := modeOf(t)
	edb, err := postgres.Driver{}.Open(ctx, serverTarget(t), filepath.Join(dir, "server"))
	if err != nil {
		return nil, err
	}
	db := edb.(*postgres.DB)
	fail := func(err error) (engine.DB, error) {
		db.Close()
		return nil, err
	}
	secret, err := scramSecret(ctx, db)
	if err != nil {
		return fail(fmt.Errorf("%s target %s: %w", Name, t.Name, err))
	}
	pg := db.Instance()
	px, err := server.Launch(ctx, server.Config{
		Flavor: pooler{backend: pg.Port, mode: mode, poolSize: size, user: db.Address().User, secret: secret},
		Env:    server.Env(t.Getenv), Engine: Name, Target: t.Name + "-pgbouncer", Dir: filepath.Join(dir, "pooler"),
		Password: pg.Password(), CPUs: t.CPUs}, dialable)
	if err != nil {
		return fail(err)
	}
	// The server first (its data dir and log are the target's), the
	// pooler last (Stop stops it first).
	if err := db.Behind(ctx, px.Port, server.Manage(pg, px)); err != nil {
		return fail(err)
	}
	return db, nil
}

// scramSecret reads the SCRAM secret of the user db's workers log in as.
func scramSecret(ctx context.Context, db *postgres.DB) (string, error) {
	c, err := db.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	rows, err := c.Values(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = current_user")
	if err != nil {
		return "", fmt.Errorf("read the server user's SCRAM secret: %w", err)
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0][0], "SCRAM-SHA-256$") {
		return "", fmt.Errorf("the server user's password is not stored as a SCRAM secret (password_encryption = scram-sha-256 is needed)")
	}
	return rows[0][0], nil
}

// dialable is the pooler's readiness probe: it accepts connections (the
// first client then proves it serves queries, postgres.DB.Behind).
func dialable(ctx context.Context, in *server.Instance) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", in.Addr())
	if err != nil {
		return err
	}
	return c.Close()
}
