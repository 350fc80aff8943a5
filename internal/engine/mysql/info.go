package mysql

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// DBSize is the du of the benchmark schema's dir on a managed server (as
// iq.sh measures InnoDB; MyRocks: of its #rocksdb dir, which holds every
// table), or the tables' data and index lengths from
// information_schema on a DSN's.
func (db *DB) DBSize(ctx context.Context) (int64, error) {
	if db.Instance() != nil {
		if db.storage.rocks() {
			// MyRocks keeps every table in one RocksDB instance.
			return engine.DirBytes(filepath.Join(db.Instance().DataDir, "#rocksdb"))
		}
		return engine.DirBytes(filepath.Join(db.Instance().DataDir, Database))
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
	if db.storage.plugin {
		names = append(names, myRocksSettings...)
	}
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
	if db.storage.engine != "" {
		// What the tables were created with; on a dsn target the server's
		// own default_storage_engine, read back above, may differ.
		info.Settings["benchlab.table_engine"] = db.storage.engine
	}
	if err := db.myRocksInfo(ctx, info.Settings); err != nil {
		return info, err
	}
	if db.Instance() != nil {
		maps.Copy(info.Settings, db.Instance().ManagedSettings())
	}
	info.Client, info.Notes = db.client.Info()
	return info, nil
}
