package mysql

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// A target given by dsn reaches a server benchlab neither configures nor
// starts, so it takes none of the server's variables as settings. It may
// say what benchlab itself does there: default_storage_engine names the
// engine of the tables the suites create (CREATE TABLE ... ENGINE=, and on
// MyRocks the same DDL and cleanup as a managed MyRocks target; the
// server's own default is left as it is), and myrocks_flush_wait is the
// MyRocks cleanup's wait. The server must have the engine: CheckDSN, in the
// run's preflight, and Open ask it (SHOW ENGINES).

// dsnSetting reports whether a dsn target may give setting k.
func dsnSetting(k string) bool {
	key := settingKey(k)
	return key == "default_storage_engine" || key == FlushWaitSetting
}

// checkDSNTarget validates a dsn target: its dsn parses, its settings are
// dsnSettings only and valid, and it gives no field of a managed server.
func (d Driver) checkDSNTarget(t engine.Target) error {
	if _, err := gomysql.ParseDSN(t.DSN); err != nil {
		return fmt.Errorf("dsn: %s is not a go-sql-driver/mysql DSN (user:password@tcp(host:port)/db): %s",
			server.RedactDSN(t.DSN), server.RedactDSN(err.Error()))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Settings)) {
		if !dsnSetting(k) {
			return fmt.Errorf("settings.%s: a server given by dsn is used as is, with its own variables; a dsn target "+
				"takes only default_storage_engine (the engine benchlab names in CREATE TABLE, e.g. \"rocksdb\") and %s; "+
				"set %s on the server itself, or remove dsn", k, FlushWaitSetting, k)
		}
	}
	bare := t
	bare.Settings = nil
	if err := server.CheckTarget(d.flavor, d.name, bare); err != nil {
		return err
	}
	_, err := storageOf(t.Settings)
	return err
}

// dsnConfig is the connection config of a dsn target, with the password
// from MYSQL_PWD (the mysql client's variable) when the dsn has none.
func dsnConfig(engineName string, t engine.Target) (*gomysql.Config, error) {
	cfg, err := gomysql.ParseDSN(t.DSN)
	if err != nil {
		return nil, fmt.Errorf("%s target %s: dsn %s: %s", engineName, t.Name, server.RedactDSN(t.DSN), server.RedactDSN(err.Error()))
	}
	if cfg.Passwd == "" {
		// A stored DSN has no password.
		cfg.Passwd = t.Env("MYSQL_PWD")
	}
	return cfg, nil
}

// CheckDSN checks, before a run (engine.DSNChecker), that the server of a
// dsn target whose settings name a storage engine has it. A server it
// cannot connect to passes: Open says why.
func (d Driver) CheckDSN(ctx context.Context, t engine.Target) error {
	s, err := storageOf(t.Settings)
	if err != nil || s.engine == "" {
		return err
	}
	cfg, err := dsnConfig(d.name, t)
	if err != nil {
		return nil
	}
	db := &DB{engine: d.name, target: t, storage: s}
	if err := db.setConfig(cfg); err != nil {
		return nil
	}
	c, err := db.dial(ctx, db.cfg)
	if err != nil {
		return nil
	}
	defer c.Close()
	return db.checkServerEngine(ctx, c)
}

// checkServerEngine fails, naming the setting, when the server has not
// the storage engine the target's settings name, or has it disabled.
func (db *DB) checkServerEngine(ctx context.Context, c *Conn) error {
	rows, err := c.Values(ctx, "SHOW ENGINES")
	if err != nil {
		return db.Wrap(fmt.Errorf("SHOW ENGINES: %w", err))
	}
	var usable []string
	for _, r := range rows {
		if len(r) < 2 || (!strings.EqualFold(r[1], "YES") && !strings.EqualFold(r[1], "DEFAULT")) {
			continue
		}
		if strings.EqualFold(r[0], db.storage.engine) {
			return nil
		}
		usable = append(usable, r[0])
	}
	slices.Sort(usable)
	hint := "install the engine on the server, or remove the setting"
	if db.storage.rocks() {
		hint = fmt.Sprintf("load MariaDB's RocksDB plugin there (Debian's package %s, then INSTALL SONAME '%s'), "+
			"or remove the setting", RocksDBPackage, RocksDBPlugin)
	}
	return fmt.Errorf("settings.%s: the server at %s has no %s engine it can use (SHOW ENGINES lists %s); %s",
		db.storage.engineField, db.cfg.Addr, db.storage.engine, strings.Join(usable, ", "), hint)
}
