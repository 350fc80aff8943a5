// Package mongodb is the mongodb engine: an existing server that speaks the
// MongoDB wire protocol, reached by its DSN (mongodb://...), through the
// official Go driver. Its DB is also the one the ferretdb engine hands out
// for the FerretDB it starts (New).
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

func init() { engine.Register(Driver{}) }

// Database is the benchmark database when a DSN names none.
const Database = "benchlab"

// Driver opens mongodb targets.
type Driver struct{}

// Name returns "mongodb".
func (Driver) Name() string { return "mongodb" }

// Kind says the engine stores documents.
func (Driver) Kind() engine.Kind { return engine.KindDoc }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "an existing MongoDB-protocol server (MongoDB, Percona Server for MongoDB, FerretDB) by dsn mongodb://..."
}

// Settings lists none: a server reached by DSN is used as configured.
func (Driver) Settings() []engine.Setting { return nil }

// CheckTarget wants a dsn that is a MongoDB connection string and nothing
// that would start or configure a server.
func (Driver) CheckTarget(t engine.Target) error {
	if t.DSN == "" {
		return errors.New("dsn: the mongodb engine reaches an existing server; give dsn = \"mongodb://host:port/db\" " +
			"(or use the ferretdb engine, which benchlab starts)")
	}
	if err := CheckDSN(t.DSN); err != nil {
		return err
	}
	if t.Basedir != "" || t.Version != "" || t.ConfigFile != "" || t.CPUs != "" || t.Memory != "" || len(t.Settings) > 0 {
		return fmt.Errorf("dsn: an existing server (dsn %s) is used as is; remove basedir, version, config, cpus, memory "+
			"and settings", server.RedactDSN(t.DSN))
	}
	return nil
}

// CheckDSN says what is wrong with a DSN that is not a MongoDB connection
// string, naming the field.
func CheckDSN(dsn string) error {
	if !strings.HasPrefix(dsn, "mongodb://") && !strings.HasPrefix(dsn, "mongodb+srv://") {
		return fmt.Errorf("dsn: %q is not a MongoDB connection string; want mongodb://host:port/database or mongodb+srv://...",
			server.RedactDSN(dsn))
	}
	if _, err := connstring.ParseAndValidate(dsn); err != nil {
		return fmt.Errorf("dsn: %s: %s", server.RedactDSN(dsn), server.RedactDSN(err.Error()))
	}
	return nil
}

// Open connects to the target's server and checks that it answers.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := CheckDSN(t.DSN); err != nil {
		return nil, fmt.Errorf("mongodb target %s: %w", t.Name, err)
	}
	cs, _ := connstring.ParseAndValidate(t.DSN)
	database := cs.Database
	if database == "" {
		database = Database
	}
	return New(ctx, Config{Target: t, URI: t.DSN, Database: database})
}

// Config is what New needs to open a DB.
type Config struct {
	Target engine.Target
	// URI reaches the server; Database is the benchmark database.
	URI, Database string
	// Auth, when set, is the credential every client authenticates with
	// (the managed FerretDB's, passed through to PostgreSQL).
	Auth *options.Credential
	// Managed holds the processes benchlab started; empty for a DSN target.
	Managed server.Managed
	// Info is added to what the server says of itself (engine name, build,
	// backend settings); Stop runs after the clients are closed.
	Info engine.Info
	Stop func() error
	// IndexIDs, when set, adds to the storage under the server the
	// indexes its finds can use (package docdb's IDIndexer: by _id, and
	// twins of the declared indexes); nil for a server that needs none.
	IndexIDs func(ctx context.Context) (int, error)
}

// DB is an opened document database.
type DB struct {
	server.Managed
	cfg    Config
	admin  *mongo.Client
	txn    bool
	closed sync.Once
}

// serverSelection bounds how long a client waits for a server that does
// not answer.
const serverSelection = 15 * time.Second

// clientOptions are every client's options: the URI, the credential, the
// application name the server's logs show, and poll monitoring (no extra
// streaming connection per client).
func (c Config) clientOptions() *options.ClientOptions {
	o := options.Client().ApplyURI(c.URI).SetAppName("benchlab").
		SetServerSelectionTimeout(serverSelection).SetServerMonitoringMode(options.ServerMonitoringModePoll)
	if c.Auth != nil {
		o.SetAuth(*c.Auth)
	}
	return o
}

// New opens a DB on a running server: one admin client, which answers a
// ping and hello before New returns.
func New(ctx context.Context, c Config) (*DB, error) {
	db := &DB{Managed: c.Managed, cfg: c}
	admin, err := mongo.Connect(c.clientOptions())
	if err != nil {
		db.Close()
		return nil, db.errf("connect: %w", err)
	}
	db.admin = admin
	pctx, cancel := context.WithTimeout(ctx, serverSelection+5*time.Second)
	defer cancel()
	var hello bson.M
	if err := admin.Database("admin").RunCommand(pctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		db.Close()
		return nil, db.errf("hello: %w", err)
	}
	var build bson.M
	admin.Database("admin").RunCommand(pctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build)
	_, ferret := build["ferretdbVersion"]
	setName, _ := hello["setName"].(string)
	msg, _ := hello["msg"].(string)
	db.txn = !ferret && (setName != "" || msg == "isdbgrid")
	return db, nil
}

// errf wraps err with the target's name, the server's death when it died,
// and no password.
func (db *DB) errf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	msg := server.RedactDSN(err.Error())
	if db.cfg.Auth != nil && db.cfg.Auth.Password != "" {
		msg = server.RedactIn(msg, db.cfg.Auth.Password)
	}
	return db.Wrap(fmt.Errorf("%s target %s: %s", db.engineName(), db.cfg.Target.Name, msg))
}

func (db *DB) engineName() string {
	if db.cfg.Info.Engine != "" {
		return db.cfg.Info.Engine
	}
	return "mongodb"
}

// Connect opens a worker's client, of one connection. When a managed
// server process has ended, its ping gives up at once, naming the death,
// rather than after the driver's server selection timeout: every step left
// in a cell whose server died would otherwise wait that long for nothing.
func (db *DB) Connect(ctx context.Context) (*mongo.Client, error) {
	if db.Died() != nil {
		return nil, db.errf("connect: the server is not running")
	}
	c, err := mongo.Connect(db.cfg.clientOptions().SetMaxPoolSize(1))
	if err != nil {
		return nil, db.errf("connect: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, in := range db.Instances() {
		go func() {
			select {
			case <-in.Exited():
				cancel()
			case <-pctx.Done():
			}
		}()
	}
	if err := c.Ping(pctx, nil); err != nil {
		c.Disconnect(context.WithoutCancel(ctx))
		return nil, db.errf("ping: %w", err)
	}
	return c, nil
}

// Database names the benchmark database.
func (db *DB) Database() string { return db.cfg.Database }

// IndexIDs runs the server's Config.IndexIDs: how many indexes it added
// to the storage under the server (0 when it has none to add).
func (db *DB) IndexIDs(ctx context.Context) (int, error) {
	if db.cfg.IndexIDs == nil {
		return 0, nil
	}
	return db.cfg.IndexIDs(ctx)
}

// Transactions reports whether the server runs multi-document
// transactions: a replica set or a sharded cluster that is not FerretDB.
func (db *DB) Transactions() bool { return db.txn }

// Remote returns true: workers reach the server over a socket.
func (db *DB) Remote() bool { return true }

// Info says what the server reports of itself (buildInfo's version, or
// FerretDB's own), with the opener's additions.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	info := db.cfg.Info
	if info.Engine == "" {
		info.Engine = "mongodb"
	}
	settings := map[string]string{}
	for k, v := range info.Settings {
		settings[k] = v
	}
	var build bson.M
	if err := db.admin.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err != nil {
		return info, db.errf("buildInfo: %w", err)
	}
	version, _ := build["version"].(string)
	if fv, ok := build["ferretdbVersion"].(string); ok {
		settings["mongodb_compatible_version"] = version
		version = strings.TrimPrefix(fv, "v")
	}
	if info.Version == "" {
		info.Version = version
	}
	if info.Build == "" {
		info.Build = "MongoDB-protocol server at " + server.RedactDSN(db.cfg.URI)
	}
	settings["transactions"] = fmt.Sprint(db.txn)
	info.Settings = settings
	return info, nil
}

// Close disconnects and stops what benchlab started.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		if db.admin != nil {
			db.admin.Disconnect(context.Background())
		}
		if db.cfg.Stop != nil {
			err = db.cfg.Stop()
		}
	})
	return err
}
