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
	"errors"
	"fmt"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
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
// with the server's password (server.Instance.Password). It has every
// privilege on Database and, beyond it, only benchGlobalGrants.
const benchUser = "benchlab"

// benchGlobalGrants are the server-wide privileges benchUser holds: those
// the statements benchlab runs as that account need, and no more. The
// account's statements and what each needs:
//   - the suites' DDL and DML, ANALYZE TABLE, information_schema.tables of
//     Database (CheckTableEngines, DBSize): the grant on Database;
//   - SHOW GLOBAL STATUS (ReadStats, ReadInternals), SELECT @@variables
//     (Info, sweeps' read-back), information_schema.plugins and SHOW
//     ENGINES (the MyRocks checks), information_schema.rocksdb_cfstats
//     (the MyRocks cleanup's pending work): no privilege;
//   - SHOW ENGINE INNODB STATUS (the cleanup's purge wait) and SHOW ENGINE
//     ROCKSDB STATUS (MyRocks' LSM gauges, per second and in the
//     cleanup): PROCESS, which also shows every session in
//     information_schema.processlist and innodb_trx;
//   - SET GLOBAL of the cleanup's variables (innodb_max_dirty_pages_pct
//     and _lwm, rocksdb_force_flush_memtable_now, rocksdb_compact_lzero_now
//     or rocksdb_force_flush_memtable_and_lzero_now): SUPER, the one
//     privilege MariaDB 10.11 takes for them. It is broad (it still lets
//     an account kill other accounts' sessions), but since 10.11 it no
//     longer lets the account write on a read_only server: that is READ
//     ONLY ADMIN, which the account lacks.
//
// Replication (mariadbreplicas) and Galera read their nodes' state and set
// them up as root over each node's private socket, and replicas connect to
// the primary with an account of their own: none uses this one. No FILE
// (SELECT ... INTO OUTFILE, LOAD DATA INFILE), no other database, no
// access to the grant tables (mysql.*).
const benchGlobalGrants = "PROCESS, SUPER"

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
		return d.checkDSNTarget(t)
	}
	if err := server.CheckTarget(d.flavor, d.name, t); err != nil {
		return err
	}
	return checkStorage(d.flavor, d.name, t)
}

// Open starts a server on a fresh data dir under dir and creates the
// benchmark database and user, or connects to the target's DSN.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if t.DSN != "" {
		cfg, err := dsnConfig(d.name, t)
		if err != nil {
			return nil, err
		}
		db := &DB{engine: d.name, target: t}
		db.storage, _ = storageOf(t.Settings) // CheckTarget has refused bad ones
		if err := db.setConfig(cfg); err != nil {
			return nil, err
		}
		if db.admin, err = db.dial(ctx, db.cfg); err != nil {
			return nil, err
		}
		if db.storage.engine != "" {
			if err := db.checkServerEngine(ctx, db.admin); err != nil {
				db.Close()
				return nil, fmt.Errorf("%s target %s: %w", d.name, t.Name, err)
			}
		}
		if err := db.chooseClient(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	inst, err := server.LaunchTarget(ctx, d.flavor, d.name, launchTarget(t), dir, probe)
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
	db.storage, _ = storageOf(t.Settings) // CheckTarget has refused bad ones
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
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%s'", Database, benchUser, server.Host),
		fmt.Sprintf("GRANT %s ON *.* TO '%s'@'%s'", benchGlobalGrants, benchUser, server.Host),
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
