// Package mysql is the MySQL-family engine, registered twice: as "mysql" and
// as "mariadb", which share this implementation. Debian 12 ships no Oracle
// MySQL server, so on this project's machines both names run MariaDB (Debian's
// mariadb-server by default); an Oracle MySQL basedir works too (initialised
// with mysqld --initialize-insecure).
//
// The family's server lifecycle is server.go's Family (MariaDB is the value
// both engines use), its releases release.go's; NewDriver lets an engine of
// its own (Percona Server, Oracle MySQL 8) reuse this package's client and
// dialect with a Family of other program names.
//
// It talks to go-sql-driver/mysql at the driver level, not through
// database/sql's pool. Statements are server-side prepared by default
// (COM_STMT_PREPARE/EXECUTE); unprepared calls (Conn.Exec/Query with
// arguments, sysbench's --db-ps-mode=disable) send text with the arguments
// inlined by the client.
package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
	"benchlab/internal/metrics"
	"benchlab/internal/server"
)

func init() {
	engine.Register(NewDriver("mysql", "MySQL-family server (Oracle MySQL basedir, or MariaDB: Debian 12 has no MySQL server) started per run, or an existing server by dsn; settings are my.cnf variables", MariaDB))
	engine.Register(NewDriver("mariadb", "MariaDB server started per run from basedir/version (default: Debian's mariadb-server) or an existing server by dsn; settings are my.cnf variables", MariaDB))
	engine.RegisterConflicts(conflictOf)
}

// conflictOf classifies MySQL's and MariaDB's deadlocks (1213), lock wait
// timeouts (1205) and MariaDB's snapshot conflicts (1020, "record has
// changed since last read").
func conflictOf(err error) engine.Conflict {
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		return engine.NoConflict
	}
	switch me.Number {
	case 1213:
		return engine.Deadlock
	case 1205:
		return engine.LockTimeout
	case 1020:
		return engine.Serialization
	}
	return engine.NoConflict
}

// Database is the benchmark database created on a managed server.
const Database = "sbtest"

// benchUser is the account workers use on a managed server: loopback only,
// with the server's password (server.Instance.Password).
const benchUser = "benchlab"

// Driver opens the targets of one engine of the MySQL protocol and dialect.
type Driver struct {
	name, summary string
	flavor        server.Flavor
}

// NewDriver returns the driver of an engine named name that speaks MySQL's
// protocol and dialect and whose managed servers follow flavor (a Family,
// or MariaDB): how the mysql and mariadb engines register, and how an
// engine reusing both (Percona Server, Oracle MySQL 8 under its own name)
// registers from a package of its own. summary is its line in `benchlab
// list`.
func NewDriver(name, summary string, flavor server.Flavor) Driver {
	return Driver{name: name, summary: summary, flavor: flavor}
}

// Name returns the engine's name ("mysql", "mariadb").
func (d Driver) Name() string { return d.name }

// Kind says the engine is an SQL engine.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (d Driver) Summary() string { return d.summary }

// Flavor returns the server family its managed servers follow.
func (d Driver) Flavor() server.Flavor { return d.flavor }

// Settings returns nil: servers check their settings when they start.
func (Driver) Settings() []engine.Setting { return nil }

// CheckTarget validates the server fields of a target before anything runs.
func (d Driver) CheckTarget(t engine.Target) error {
	if t.DSN != "" {
		if _, err := gomysql.ParseDSN(t.DSN); err != nil {
			return fmt.Errorf("dsn: %s is not a go-sql-driver/mysql DSN (user:password@tcp(host:port)/db): %s",
				server.RedactDSN(t.DSN), server.RedactDSN(err.Error()))
		}
	}
	return server.CheckTarget(d.flavor, d.name, t)
}

// Open starts a server on a fresh data dir under dir and creates the
// benchmark database and user, or connects to the target's DSN.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if t.DSN != "" {
		cfg, err := gomysql.ParseDSN(t.DSN)
		if err != nil {
			return nil, fmt.Errorf("%s target %s: dsn %s: %s", d.name, t.Name, server.RedactDSN(t.DSN), server.RedactDSN(err.Error()))
		}
		if cfg.Passwd == "" {
			// The mysql client's variable: a stored DSN has no password.
			cfg.Passwd = t.Env("MYSQL_PWD")
		}
		db := &DB{engine: d.name, target: t}
		if err := db.setConfig(cfg); err != nil {
			return nil, err
		}
		if db.admin, err = db.dial(ctx, db.cfg); err != nil {
			return nil, err
		}
		if err := db.chooseClient(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	inst, err := server.LaunchTarget(ctx, d.flavor, d.name, t, dir, probe)
	if err != nil {
		return nil, err
	}
	db, err := OpenManaged(ctx, d.name, t, server.Manage(inst), inst.Addr())
	if err != nil {
		return nil, err // not a nil *DB in a non-nil engine.DB
	}
	return db, nil
}

// OpenManaged creates the benchmark database and benchlab's user on the
// managed server m.Instance() (through root on its private socket) and
// returns its DB, whose connections go to addr: the server's own address,
// or a proxy's in front of it (the galera engine's HAProxy). The DB stops
// every process of m on Close; on an error they are stopped already.
func OpenManaged(ctx context.Context, engineName string, t engine.Target, m server.Managed, addr string) (*DB, error) {
	inst := m.Instance()
	db := &DB{engine: engineName, target: t, Managed: m}
	fail := func(err error) (*DB, error) {
		db.Close()
		return nil, err
	}
	root, err := db.dial(ctx, RootConfig(inst))
	if err != nil {
		return fail(err)
	}
	for _, q := range []string{
		"CREATE DATABASE " + Database,
		fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY '%s'", benchUser, server.Host, inst.Password()),
		fmt.Sprintf("GRANT ALL ON *.* TO '%s'@'%s'", benchUser, server.Host),
	} {
		if _, err := root.Exec(ctx, q); err != nil {
			root.Close()
			return fail(fmt.Errorf("%s target %s at %s: %s: %s", engineName, t.Name, inst.Addr(),
				server.RedactIn(q, inst.Password()), server.RedactIn(err.Error(), inst.Password())))
		}
	}
	root.Close()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = benchUser, "tcp", addr, Database
	cfg.Passwd = inst.Password()
	if err := db.setConfig(cfg); err != nil {
		return fail(err)
	}
	if db.admin, err = db.dial(ctx, db.cfg); err != nil {
		return fail(err)
	}
	if err := db.chooseClient(ctx); err != nil {
		return fail(err)
	}
	return db, nil
}

// Probe tells whether a managed server of the family accepts queries: root
// runs SELECT 1 over the private socket. It is the readiness probe of
// server.Launch.
func Probe(ctx context.Context, inst *server.Instance) error { return probe(ctx, inst) }

// ConnectAddr opens a worker connection as Connect does, to another server
// at addr (host:port) that has the same user and database: one node of a
// cluster.
func (db *DB) ConnectAddr(ctx context.Context, addr string) (engine.Conn, error) {
	cfg := db.cfg.Clone()
	cfg.Addr = addr
	c, err := db.dial(ctx, cfg)
	if err != nil {
		return nil, err // not a nil *Conn in a non-nil engine.Conn
	}
	return c, nil
}

// RootConfig is the go-sql-driver/mysql config of a managed server's root
// account (root@localhost, its password, the private socket), for the
// engines built on this family (galera's readiness checks).
func RootConfig(inst *server.Instance) *gomysql.Config {
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Passwd = "root", "unix", inst.Socket, inst.Password()
	cfg.Timeout = 5 * time.Second
	cfg.Logger = quiet
	return cfg
}

func probe(ctx context.Context, inst *server.Instance) error {
	conn, err := connector(RootConfig(inst), false)
	if err != nil {
		return err
	}
	c, err := conn.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.(driver.ExecerContext).ExecContext(ctx, "SELECT 1", nil)
	return err
}

// quiet drops the driver's own log lines ("packets.go: unexpected EOF"):
// every failure also comes back as an error, which benchlab reports.
var quiet = log.New(io.Discard, "", 0)

// connector makes the driver's connections; fast ones wait for the server
// with blocking reads, as the C clients do, on a socket a
// fastpath.Slot catches (package fastpath).
func connector(cfg *gomysql.Config, fast bool) (driver.Connector, error) {
	if fast {
		cfg = cfg.Clone()
		cfg.DialFunc = fastpath.DialRecorded
	}
	return gomysql.NewConnector(cfg)
}

// DB is an opened MySQL-family database, on a managed server or a DSN's.
type DB struct {
	engine         string
	target         engine.Target
	server.Managed // the server benchlab started; empty for a DSN target
	cfg            *gomysql.Config
	admin          *Conn
	closed         sync.Once
	// statsMu guards what ReadStats keeps between reads: whether the
	// server is MariaDB (read once) and how many reads it made.
	statsMu      sync.Mutex
	statsMariaDB *bool
	statsReads   int
	// fast says workers take the fast path (client.go); notes say why
	// not, when the target left it to the default or asked for it.
	fast  bool
	notes []string
}

// setConfig completes the worker connection config: statements are
// prepared on the server when the workload prepares them; the text path
// (Conn.Exec with arguments) interpolates on the client, which is what
// interpolateParams does in this driver and what sysbench does with
// --db-ps-mode=disable.
func (db *DB) setConfig(cfg *gomysql.Config) error {
	cfg.InterpolateParams = true
	cfg.Logger = quiet
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	db.cfg = cfg
	return nil
}

// dial opens a connection; errors name the target and never the password.
func (db *DB) dial(ctx context.Context, cfg *gomysql.Config) (*Conn, error) {
	conn, err := connector(cfg, db.fast)
	if err == nil {
		var c driver.Conn
		sctx, slot := fastpath.WithSlot(ctx)
		if c, err = conn.Connect(sctx); err == nil {
			cn := &Conn{c: c, db: db}
			if db.fast && slot.Conn() != nil {
				cn.w = fastpath.NewMySQLWire(slot.Conn())
			}
			return cn, nil
		}
	}
	return nil, db.Wrap(fmt.Errorf("%s target %s at %s: connect: %s", db.engine, db.target.Name, cfg.Addr,
		server.RedactIn(err.Error(), cfg.Passwd)))
}

// Dialect returns engine.MySQL.
func (db *DB) Dialect() engine.Dialect { return engine.MySQL }

// Remote returns true: workers reach the server over a socket.
func (db *DB) Remote() bool { return true }

// Connect opens a worker connection.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) { return db.dial(ctx, db.cfg) }

// flushVars are the InnoDB variables the postwrite cleanup turns down to
// flush dirty pages (docs/method.md 1.9, iq.sh vac_my), with their cleanup values.
var flushVars = []struct{ name, value string }{
	{"innodb_max_dirty_pages_pct_lwm", "1"},
	{"innodb_max_dirty_pages_pct", "1"},
	{"innodb_idle_flush_pct", "100"}, // MySQL 8.0.18+; MariaDB 10.11 lacks it
}

// Maintain is the postwrite cleanup of docs/method.md 1.9: analyze every table,
// wait for purge to work off the undo history (or stop shrinking), then lower
// InnoDB's dirty page limits so that the page cleaner flushes, wait until the
// dirty pages are down (or stop falling), and restore the old values. The
// target time beyond that is the caller's. On an existing server (dsn) whose
// user lacks PROCESS or SUPER, the purge wait or the flush is left out and
// returned as skipped.
func (db *DB) Maintain(ctx context.Context, tables []string) ([]string, error) {
	for _, t := range tables {
		if _, err := db.admin.Query(ctx, "ANALYZE TABLE "+quoteIdent(t)); err != nil {
			return nil, db.Wrap(fmt.Errorf("%s: analyze table %s: %w", db.engine, t, err))
		}
	}
	var skipped []string
	purged, err := db.waitPurged(ctx)
	if err != nil {
		return nil, err
	}
	if !purged {
		skipped = append(skipped, fmt.Sprintf("purge wait left out: user %s lacks the PROCESS privilege that SHOW ENGINE INNODB STATUS needs",
			db.user()))
	}
	old := map[string]string{}
	for _, v := range flushVars {
		cur, ok, err := db.admin.variable(ctx, v.name)
		if err != nil {
			return skipped, db.Wrap(fmt.Errorf("%s: read %s: %w", db.engine, v.name, err))
		}
		if !ok {
			continue // this server version lacks it
		}
		if _, err := db.admin.Exec(ctx, fmt.Sprintf("SET GLOBAL %s = %s", v.name, v.value)); err != nil {
			if isAccessDenied(err) && len(old) == 0 {
				// A user of an existing server (dsn) without SUPER cannot
				// make the page cleaner flush: the cleanup is then the
				// analyze and the purge wait, and the run says so.
				return append(skipped, fmt.Sprintf("dirty-page flush left out: user %s may not SET GLOBAL %s (SUPER or SYSTEM_VARIABLES_ADMIN)",
					db.user(), v.name)), nil
			}
			werr := db.Wrap(fmt.Errorf("%s: set %s: %w", db.engine, v.name, err))
			return skipped, errors.Join(werr, db.restoreFlushVars(ctx, old))
		}
		old[v.name] = cur
	}
	werr := db.waitFlushed(ctx)
	return skipped, errors.Join(werr, db.restoreFlushVars(ctx, old))
}

// user is the server user benchlab connects as.
func (db *DB) user() string { return db.cfg.User }

// restoreFlushVars sets the flush variables in old back to their values.
func (db *DB) restoreFlushVars(ctx context.Context, old map[string]string) error {
	var errs []error
	// Restore in reverse: pct before lwm, since lwm may not exceed pct.
	for i := len(flushVars) - 1; i >= 0; i-- {
		v, ok := old[flushVars[i].name]
		if !ok {
			continue
		}
		if _, err := db.admin.Exec(context.WithoutCancel(ctx), fmt.Sprintf("SET GLOBAL %s = %s", flushVars[i].name, v)); err != nil {
			errs = append(errs, db.Wrap(fmt.Errorf("%s: restore %s: %w", db.engine, flushVars[i].name, err)))
		}
	}
	return errors.Join(errs...)
}

// HistoryLength reads InnoDB's history list length (undo logs of committed
// changes that purge has yet to remove) from SHOW ENGINE INNODB STATUS.
func (db *DB) HistoryLength(ctx context.Context) (int64, error) {
	st, ok, err := db.admin.firstRow(ctx, "SHOW ENGINE INNODB STATUS")
	if err != nil {
		return 0, db.Wrap(fmt.Errorf("%s: innodb status: %w", db.engine, err))
	}
	m := historyRE.FindStringSubmatch(st)
	if !ok || m == nil {
		return 0, fmt.Errorf("%s: innodb status has no history list length", db.engine)
	}
	return strconv.ParseInt(m[1], 10, 64)
}

var historyRE = regexp.MustCompile(`History list length (\d+)`)

// purgedHistory is the history list length waitPurged accepts as worked off:
// purge keeps a few hundred entries of recent transactions at all times.
const purgedHistory = 1000

// errAccessDenied is MySQL's ER_SPECIFIC_ACCESS_DENIED_ERROR: the user
// lacks a privilege (PROCESS, for the InnoDB status).
const errAccessDenied = 1227

// isAccessDenied reports whether err is the server refusing for want of a
// privilege.
func isAccessDenied(err error) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && me.Number == errAccessDenied
}

// waitPurged polls the history list length each second until it is at most
// purgedHistory or has not fallen for three polls, within maxFlushWait. A
// user of an existing server (dsn) without the PROCESS privilege cannot read
// it: the wait is then skipped (false), as the articles' cleanup has none.
func (db *DB) waitPurged(ctx context.Context) (bool, error) {
	deadline := time.Now().Add(maxFlushWait)
	best, still := int64(-1), 0
	for time.Now().Before(deadline) {
		n, err := db.HistoryLength(ctx)
		if isAccessDenied(err) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		if n <= purgedHistory {
			return true, nil
		}
		if best >= 0 && n >= best {
			if still++; still >= 3 {
				return true, nil
			}
		} else {
			best, still = n, 0
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	return true, nil
}

// maxFlushWait bounds waitFlushed on a server that keeps dirtying pages.
const maxFlushWait = 5 * time.Minute

// waitFlushed polls the dirty page count each second until it is at most 1%
// of the buffer pool or has not fallen for three polls.
func (db *DB) waitFlushed(ctx context.Context) error {
	deadline := time.Now().Add(maxFlushWait)
	best, still := int64(-1), 0
	for time.Now().Before(deadline) {
		dirty, err := db.admin.status(ctx, "Innodb_buffer_pool_pages_dirty")
		if err != nil {
			return db.Wrap(fmt.Errorf("%s: dirty pages: %w", db.engine, err))
		}
		total, err := db.admin.status(ctx, "Innodb_buffer_pool_pages_total")
		if err != nil {
			return db.Wrap(fmt.Errorf("%s: buffer pool pages: %w", db.engine, err))
		}
		if dirty*100 <= total {
			return nil
		}
		if best >= 0 && dirty >= best {
			if still++; still >= 3 {
				return nil
			}
		} else {
			best, still = dirty, 0
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// DBSize is the du of the benchmark schema's dir on a managed server (as
// iq.sh measures InnoDB), or the tables' data and index lengths from
// information_schema on a DSN's.
func (db *DB) DBSize(ctx context.Context) (int64, error) {
	if db.Instance() != nil {
		return metrics.DirBytes(filepath.Join(db.Instance().DataDir, Database))
	}
	v, _, err := db.admin.firstRow(ctx, "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		return 0, db.Wrap(fmt.Errorf("%s: database size: %w", db.engine, err))
	}
	return strconv.ParseInt(v, 10, 64)
}

// reportedSettings are read back for every run besides those the target sets.
var reportedSettings = []string{"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_flush_log_at_trx_commit",
	"innodb_doublewrite", "innodb_flush_method", "innodb_io_capacity", "innodb_adaptive_hash_index",
	"innodb_buffer_pool_instances", "sync_binlog", "log_bin", "max_connections", "performance_schema",
	"transaction_isolation", "tx_isolation"}

// Info reads the version, the build and the effective settings from the server.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: db.engine, Settings: map[string]string{}}
	ver, _, err := db.admin.variable(ctx, "version")
	if err != nil {
		return info, db.Wrap(fmt.Errorf("%s: version: %w", db.engine, err))
	}
	info.Version, _, _ = strings.Cut(ver, "-")
	comment, _, _ := db.admin.variable(ctx, "version_comment")
	machine, _, _ := db.admin.variable(ctx, "version_compile_machine")
	compileOS, _, _ := db.admin.variable(ctx, "version_compile_os")
	if db.Instance() != nil {
		info.Build = server.Provenance(db.Instance().Binaries())
	} else {
		info.Build = "existing server (dsn)"
	}
	info.Build += fmt.Sprintf("; %s, %s (%s %s)", ver, comment, machine, compileOS)
	names := append([]string(nil), reportedSettings...)
	for k := range db.target.Settings {
		names = append(names, strings.ReplaceAll(strings.ToLower(k), "-", "_"))
	}
	for _, n := range names {
		v, ok, err := db.admin.variable(ctx, n)
		if err != nil {
			return info, db.Wrap(fmt.Errorf("%s: read %s: %w", db.engine, n, err))
		}
		if ok {
			info.Settings[n] = v
		}
	}
	if db.Instance() != nil {
		maps.Copy(info.Settings, db.Instance().ManagedSettings())
	}
	info.Client, info.Notes = db.clientInfo()
	return info, nil
}

// Close closes the administrative connection and stops a managed server,
// keeping its log.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		if db.admin != nil {
			db.admin.Close()
		}
		err = db.Managed.Stop()
	})
	return err
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// isControl reports whether sql is a transaction control statement, which
// sysbench sends as text (con:query("BEGIN")) rather than preparing.
func isControl(sql string) bool {
	switch strings.ToUpper(strings.TrimSpace(sql)) {
	case "BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION":
		return true
	}
	return false
}

// Conn is one connection.
type Conn struct {
	c    driver.Conn
	w    *fastpath.MySQLWire // the socket for the fast path; nil if not taken
	db   *DB
	args []driver.NamedValue
	// watch lets a call's context end the connection's context-free
	// calls (enter).
	watch engine.CallWatch
}

// enter starts a call that ignores its context (the direct path's, the
// driver's context-free ones) under ctx, whose end then interrupts it on a
// connection whose socket benchlab holds: the socket's deadline is set in
// the past, which ends a blocked read or write (a hung server's) and leaves
// the connection lost (engine.CallWatch). leave ends the call.
func (c *Conn) enter(ctx context.Context) error {
	if c.w == nil {
		return c.watch.Enter(ctx, nil)
	}
	return c.watch.Enter(ctx, c.w.Conn())
}

func (c *Conn) leave() { c.watch.Leave() }

// Exec runs sql without preparing it and returns the rows changed.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.args = named(c.args[:0], args)
	r, err := c.c.(driver.ExecerContext).ExecContext(ctx, sql, c.args)
	if err != nil {
		return 0, c.db.fail(err)
	}
	return r.RowsAffected()
}

// Query runs sql without preparing it and counts the rows it returns.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (int64, error) {
	c.args = named(c.args[:0], args)
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, c.args)
	if err != nil {
		return 0, c.db.fail(err)
	}
	n, err := engine.DrainRows(rows, nil)
	return n, c.db.fail(err)
}

// Values runs sql without preparing it and returns its rows as text.
func (c *Conn) Values(ctx context.Context, sql string, args ...any) ([][]string, error) {
	c.args = named(c.args[:0], args)
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, c.args)
	if err != nil {
		return nil, c.db.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, c.db.fail(err)
}

// variable reads a global variable; ok is false when the server lacks it.
func (c *Conn) variable(ctx context.Context, name string) (string, bool, error) {
	return c.firstRow(ctx, "SHOW GLOBAL VARIABLES LIKE '"+strings.ReplaceAll(name, "'", "''")+"'")
}

// status reads a global status counter.
func (c *Conn) status(ctx context.Context, name string) (int64, error) {
	v, ok, err := c.firstRow(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'")
	if err != nil || !ok {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// firstRow returns the second column of a SHOW ... LIKE statement's row.
func (c *Conn) firstRow(ctx context.Context, sql string) (string, bool, error) {
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, sql, nil)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return "", false, nil
		}
		return "", false, err
	}
	switch v := dest[len(dest)-1].(type) {
	case []byte:
		return string(v), true, nil
	case nil:
		return "", true, nil
	default:
		return fmt.Sprint(v), true, nil
	}
}

// fail adds the server's death, if it died, to err, and marks an error that
// closed the connection as engine.ErrConnLost.
func (db *DB) fail(err error) error {
	if err != nil && (errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn)) {
		err = fmt.Errorf("%w: %w", engine.ErrConnLost, err)
	}
	return db.Wrap(err)
}

// Prepare prepares sql on the server (COM_STMT_PREPARE). Transaction control
// statements stay text, as sysbench sends them.
func (c *Conn) Prepare(ctx context.Context, sql string, cost engine.Cost) (engine.Stmt, error) {
	if isControl(sql) {
		return c.PrepareText(sql, engine.Short), nil
	}
	if cost != engine.Long && c.w != nil {
		d, err := c.w.Prepare(sql)
		if err != nil {
			return nil, c.db.fail(fmt.Errorf("prepare %q: %w", sql, err))
		}
		return &Stmt{d: d, c: c, sql: sql, db: c.db}, nil
	}
	s, err := c.c.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		return nil, c.db.fail(fmt.Errorf("prepare %q: %w", sql, err))
	}
	return &Stmt{s: s, c: c, sql: sql, db: c.db, long: c.db.cost(cost) == engine.Long}, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.watch.Stop()
	return c.c.Close()
}

// PrepareText returns a statement sent as text (COM_QUERY) with its
// arguments inlined from a template parsed once (engine.TextPreparer),
// rather than by the driver's interpolateParams on every call (5.3% of the
// client's CPU in TPC-C at 8 threads); a statement the template cannot
// hold, or arguments it cannot write, take the driver's own path.
func (c *Conn) PrepareText(sql string, cost engine.Cost) engine.Stmt {
	return &textStmt{c: c, TextSQL: engine.NewTextSQL(sql, false, c.db.cost(cost), literal)}
}

// textStmt is a statement sent as text, with reused buffers. A short one
// whose text the template wrote goes over the direct path's socket
// (fastpath.MySQLWire.Query) when the connection has one: the driver's text
// call allocated for its result object, rows and columns, and for every
// value read as text (at a MariaDB New-Order of text statements, 608
// allocations).
type textStmt struct {
	c *Conn
	engine.TextSQL
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
	if b, ok := engine.AppendScalar(dst, arg); ok {
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
		return n, t.c.db.fail(err)
	}
	if !ok {
		return t.c.Exec(t.Ctx(ctx), t.SQL(), args...)
	}
	r, err := t.c.c.(driver.ExecerContext).ExecContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return 0, t.c.db.fail(err)
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
		return n, t.c.db.fail(err)
	}
	if !ok {
		return t.c.Query(t.Ctx(ctx), t.SQL(), args...)
	}
	rows, err := t.c.c.(driver.QueryerContext).QueryContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return 0, t.c.db.fail(err)
	}
	n, err := engine.DrainRows(rows, &t.dest)
	return n, t.c.db.fail(err)
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
		return out, t.c.db.fail(err)
	}
	if !ok {
		return t.c.Values(t.Ctx(ctx), t.SQL(), args...)
	}
	rows, err := t.c.c.(driver.QueryerContext).QueryContext(t.Ctx(ctx), sql, nil)
	if err != nil {
		return nil, t.c.db.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, t.c.db.fail(err)
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
		return n, s.db.fail(err)
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
		return 0, s.db.fail(err)
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
		return n, s.db.fail(err)
	}
	rows, err := s.rows(ctx, args)
	if err != nil {
		return 0, s.db.fail(err)
	}
	n, err := engine.DrainRows(rows, &s.dest)
	return n, s.db.fail(err)
}

// Values runs the statement and returns its rows as text.
func (s *Stmt) Values(ctx context.Context, args ...any) ([][]string, error) {
	if err := s.c.enter(ctx); err != nil {
		return nil, err
	}
	defer s.c.leave()
	rows, err := s.rows(ctx, args)
	if err != nil {
		return nil, s.db.fail(err)
	}
	out, err := engine.ReadValues(rows)
	return out, s.db.fail(err)
}

// driverStmt prepares the driver's statement if it is not yet: a direct
// statement uses it for Values and for arguments it does not encode.
func (s *Stmt) driverStmt(ctx context.Context) error {
	if s.s != nil {
		return nil
	}
	st, err := s.c.c.(driver.ConnPrepareContext).PrepareContext(ctx, s.sql)
	if err != nil {
		return s.db.fail(fmt.Errorf("prepare %q: %w", s.sql, err))
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

// Address reaches the database with the mysql client's variables
// (MYSQL_HOST and MYSQL_TCP_PORT, or MYSQL_UNIX_PORT for a DSN's socket,
// which the client reads; MYSQL_USER and MYSQL_DATABASE, for scripts; and
// MYSQL_PWD for a password); the DSN is go-sql-driver/mysql's form without
// the password.
func (db *DB) Address() engine.Address {
	a := engine.Address{User: db.cfg.User, Password: db.cfg.Passwd, Database: db.cfg.DBName}
	if db.cfg.Net == "tcp" {
		host, port, err := net.SplitHostPort(db.cfg.Addr)
		if err == nil {
			a.Host = host
			a.Port, _ = strconv.Atoi(port)
		}
	}
	cfg := db.cfg.Clone()
	cfg.Passwd = ""
	a.DSN = cfg.FormatDSN()
	if db.cfg.Net == "unix" {
		a.Env = []string{"MYSQL_UNIX_PORT=" + db.cfg.Addr}
	} else {
		a.Env = []string{"MYSQL_HOST=" + a.Host, fmt.Sprintf("MYSQL_TCP_PORT=%d", a.Port)}
	}
	a.Env = append(a.Env, "MYSQL_USER="+a.User, "MYSQL_DATABASE="+a.Database)
	if a.Password != "" {
		a.Env = append(a.Env, "MYSQL_PWD="+a.Password)
	}
	return a
}
