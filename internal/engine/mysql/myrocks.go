package mysql

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// A MariaDB target runs MyRocks (MariaDB's RocksDB storage engine) when its
// settings say default_storage_engine = "rocksdb": benchlab then loads the
// plugin in the managed server's my.cnf, the suites name ENGINE=ROCKSDB in
// their CREATE TABLE, and the tables' engine is read back from
// information_schema before anything is measured. rocksdb_* settings are
// the plugin's own variables (rocksdb_block_cache_size,
// rocksdb_default_cf_options, ...) and load it too. docs/engines-and-servers.md
// describes the settings.

const (
	// RocksDBPlugin is the MyRocks plugin's library name, without .so.
	RocksDBPlugin = "ha_rocksdb"
	// RocksDBPackage is the Debian package that installs the plugin.
	RocksDBPackage = "mariadb-plugin-rocksdb"
	// FlushWaitSetting is benchlab's own setting (never written to my.cnf):
	// how long the MyRocks cleanup waits between the memtable flush and
	// the L0 compaction.
	FlushWaitSetting = "myrocks_flush_wait"
	// DefaultFlushWait is the wait the Insert Benchmark's scripts use.
	DefaultFlushWait = 20 * time.Second
	// maxMyRocksFlushWait bounds FlushWaitSetting.
	maxMyRocksFlushWait = 10 * time.Minute
)

// storage is what a target's settings ask of its tables' storage engine.
type storage struct {
	// engine is default_storage_engine as the server names it in
	// information_schema ("ROCKSDB", "InnoDB" as given); "" when unset.
	engine string
	// engineField is the setting's key as the target spells it.
	engineField string
	// plugin is true when the RocksDB plugin must be loaded; pluginField
	// is the first setting that needs it.
	plugin      bool
	pluginField string
	// flushWait is the MyRocks cleanup's wait (FlushWaitSetting).
	flushWait time.Duration
}

// rocks reports whether the tables are MyRocks tables.
func (s storage) rocks() bool { return strings.EqualFold(s.engine, "rocksdb") }

// settingKey is a my.cnf key as the server reads it: lower case, _ for -.
func settingKey(k string) string { return strings.ReplaceAll(strings.ToLower(k), "-", "_") }

// identRE is a storage engine's name.
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// storageOf reads the storage settings of a target, with errors naming
// the setting ("settings.myrocks_flush_wait: ...").
func storageOf(settings map[string]string) (storage, error) {
	s := storage{flushWait: DefaultFlushWait}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := settings[k]
		switch key := settingKey(k); {
		case key == "default_storage_engine":
			if !identRE.MatchString(v) {
				return s, fmt.Errorf("settings.%s: %q is not a storage engine's name; want e.g. \"rocksdb\" or \"InnoDB\"", k, v)
			}
			s.engine, s.engineField = v, k
			if strings.EqualFold(v, "rocksdb") {
				s.engine = "ROCKSDB"
				s.plugin, s.pluginField = true, k
			}
		case key == FlushWaitSetting:
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > maxMyRocksFlushWait {
				return s, fmt.Errorf("settings.%s: %q is not allowed; want a duration from 0s to %s (default %s)",
					k, v, maxMyRocksFlushWait, DefaultFlushWait)
			}
			s.flushWait = d
		case strings.HasPrefix(key, "rocksdb_"):
			if !s.plugin {
				s.plugin, s.pluginField = true, k
			}
		}
	}
	if _, ok := settings[FlushWaitSetting]; ok && !s.rocks() {
		return s, fmt.Errorf("settings.%s: is for MyRocks targets; want default_storage_engine = \"rocksdb\" too", FlushWaitSetting)
	}
	return s, nil
}

// MyRocksSetting names the first of settings that asks for MyRocks
// (default_storage_engine = "rocksdb", a rocksdb_* variable or
// myrocks_flush_wait), "" when none does: for engines of the family that
// cannot run it.
func MyRocksSetting(settings map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		key := settingKey(k)
		if strings.HasPrefix(key, "rocksdb_") || key == FlushWaitSetting ||
			(key == "default_storage_engine" && strings.EqualFold(settings[k], "rocksdb")) {
			return k
		}
	}
	return ""
}

// pluginDirs are where an install keeps its server plugins: Debian's
// (/usr/lib/mysql/plugin) and a tarball's (lib/plugin).
func pluginDirs(basedir, pluginDir string) []string {
	if pluginDir != "" {
		return []string{pluginDir}
	}
	if basedir == "" {
		basedir = "/usr"
	}
	return []string{filepath.Join(basedir, "lib", "mysql", "plugin"), filepath.Join(basedir, "lib", "plugin"),
		filepath.Join(basedir, "lib64", "mysql", "plugin")}
}

// checkStorage validates the storage settings of a managed target and, when
// they need MyRocks, that its install has the plugin.
func checkStorage(f server.Flavor, engineName string, t engine.Target) error {
	s, err := storageOf(t.Settings)
	if err != nil || !s.plugin {
		return err
	}
	basedir, err := server.InstallDir(f, engineName, t)
	if err != nil {
		return fmt.Errorf("version: %w", err)
	}
	var pluginDir string
	for k, v := range t.Settings {
		if settingKey(k) == "plugin_dir" {
			pluginDir = v
		}
	}
	dirs := pluginDirs(basedir, pluginDir)
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, RocksDBPlugin+".so")); err == nil {
			return nil
		}
	}
	return fmt.Errorf("settings.%s: MyRocks needs MariaDB's RocksDB plugin %s.so, which this install lacks "+
		"(looked in %s); install Debian's package %s (scripts/install-deps.sh lists it), or give a basedir whose "+
		"build has the plugin", s.pluginField, RocksDBPlugin, strings.Join(dirs, ", "), RocksDBPackage)
}

// launchTarget is t as the server is started: benchlab's own setting
// removed, and the RocksDB plugin added to plugin_load_add when the
// settings need it.
func launchTarget(t engine.Target) engine.Target {
	s, _ := storageOf(t.Settings) // CheckTarget has refused bad ones
	if _, own := t.Settings[FlushWaitSetting]; !s.plugin && !own {
		return t
	}
	set := maps.Clone(t.Settings)
	delete(set, FlushWaitSetting)
	if s.plugin {
		key, val := "plugin_load_add", RocksDBPlugin
		for k, v := range set {
			if settingKey(k) == "plugin_load_add" {
				key, val = k, v
				if !strings.Contains(v, RocksDBPlugin) {
					val = v + ";" + RocksDBPlugin
				}
			}
		}
		set[key] = val
	}
	t.Settings = set
	return t
}

// dialect is engine.MySQL naming the target's storage engine; MyRocks
// builds each secondary index in a statement of its own (docs/method.md 1.2).
func (s storage) dialect() engine.Dialect {
	d := engine.MySQL
	d.TableEngine = s.engine
	if s.rocks() {
		d.AlterAddIndex = false
	}
	return d
}

// CheckTableEngines reads the engine of each of tables from
// information_schema.tables and fails when one is not the one the
// target's default_storage_engine asks for (or is missing). A target that
// asks for none passes.
func (db *DB) CheckTableEngines(ctx context.Context, tables []string) error {
	if db.storage.engine == "" || len(tables) == 0 {
		return nil
	}
	rows, err := db.admin.Values(ctx, "SELECT table_name, engine FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		return db.Wrap(fmt.Errorf("%s: read the tables' engines: %w", db.engine, err))
	}
	got := map[string]string{}
	for _, r := range rows {
		got[strings.ToLower(r[0])] = r[1]
	}
	var wrong []string
	for _, t := range tables {
		e, ok := got[strings.ToLower(t)]
		switch {
		case !ok:
			wrong = append(wrong, t+" (not in information_schema.tables)")
		case !strings.EqualFold(e, db.storage.engine):
			wrong = append(wrong, fmt.Sprintf("%s (ENGINE=%s)", t, e))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("%s target %s: settings.%s asks for %s tables, but the server made %s; nothing is measured "+
			"under another engine", db.engine, db.target.Name, db.storage.engineField, db.storage.engine,
			strings.Join(wrong, ", "))
	}
	return nil
}

// myRocksSettings are read back for a MyRocks target besides those it sets.
var myRocksSettings = []string{"rocksdb_block_cache_size", "rocksdb_default_cf_options", "rocksdb_max_background_jobs",
	"rocksdb_flush_log_at_trx_commit", "rocksdb_max_total_wal_size", "rocksdb_use_direct_reads",
	"rocksdb_use_direct_io_for_flush_and_compaction", "rocksdb_max_subcompactions", "rocksdb_git_hash",
	"default_storage_engine"}

// myRocksInfo adds what a MyRocks target's manifest says beyond the
// variables: the plugin as the server loaded it and the cleanup's wait.
func (db *DB) myRocksInfo(ctx context.Context, settings map[string]string) error {
	if !db.storage.plugin {
		return nil
	}
	rows, err := db.admin.Values(ctx, "SELECT plugin_version, plugin_maturity, plugin_library FROM information_schema.plugins WHERE plugin_name = 'ROCKSDB'")
	if err != nil {
		return db.Wrap(fmt.Errorf("%s: read the RocksDB plugin: %w", db.engine, err))
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s target %s: settings.%s needs the RocksDB plugin, which the server did not load",
			db.engine, db.target.Name, db.storage.pluginField)
	}
	settings["benchlab.plugin"] = fmt.Sprintf("ROCKSDB %s (%s, %s)", rows[0][0], rows[0][1], rows[0][2])
	if db.storage.rocks() {
		settings["benchlab."+FlushWaitSetting] = db.storage.flushWait.String()
	}
	return nil
}
