package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
	"benchlab/internal/server"
)

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
	storage        storage // what the target's settings ask of the tables' engine
	admin          *Conn
	closed         sync.Once
	// statsMu guards what ReadStats keeps between reads: whether the
	// server is MariaDB (read once) and what its reads added to the
	// counters so far (readCost, summed).
	statsMu      sync.Mutex
	statsMariaDB *bool
	statsReads   int
	statsCost    map[string]float64
	// rocksStatusDenied is set once the account was refused SHOW ENGINE
	// ROCKSDB STATUS (no PROCESS): ReadInternals stops asking.
	rocksStatusDenied bool
	// client is the workers' client path (client.go).
	client engine.ClientPath
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
	conn, err := connector(cfg, db.client.Fast)
	if err == nil {
		var c driver.Conn
		sctx, slot := fastpath.WithSlot(ctx)
		if c, err = conn.Connect(sctx); err == nil {
			cn := &Conn{c: c, db: db}
			if db.client.Fast && slot.Conn() != nil {
				cn.w = fastpath.NewMySQLWire(slot.Conn())
			}
			return cn, nil
		}
	}
	return nil, db.Wrap(fmt.Errorf("%s target %s at %s: connect: %s", db.engine, db.target.Name, cfg.Addr,
		server.RedactIn(err.Error(), cfg.Passwd)))
}

// Dialect returns engine.MySQL, naming the storage engine the target's
// default_storage_engine asks for (ROCKSDB on a MyRocks target).
func (db *DB) Dialect() engine.Dialect { return db.storage.dialect() }

// Remote returns true: workers reach the server over a socket.
func (db *DB) Remote() bool { return true }

// Connect opens a worker connection.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) { return db.dial(ctx, db.cfg) }

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

// fail adds the server's death, if it died, to err, and marks an error that
// closed the connection as engine.ErrConnLost.
func (db *DB) fail(err error) error {
	if err != nil && (errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn)) {
		err = fmt.Errorf("%w: %w", engine.ErrConnLost, err)
	}
	return db.Wrap(err)
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
