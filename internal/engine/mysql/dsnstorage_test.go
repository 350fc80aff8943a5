package mysql

import (
	"strings"
	"testing"

	"benchlab/internal/engine"
)

// TestDSNTargetSettings: a dsn target takes default_storage_engine and
// myrocks_flush_wait, which are benchlab's to act on, and refuses a
// server's variable, a bad engine name, a flush wait without MyRocks and
// a managed server's field, each naming the field.
func TestDSNTargetSettings(t *testing.T) {
	d := NewDriver("mariadb", "", MariaDB)
	const dsn = "u:secret@tcp(127.0.0.1:3306)/sbtest"
	for _, c := range []struct {
		settings map[string]string
		basedir  string
		want     string // "" for accepted
	}{
		{map[string]string{"default_storage_engine": "rocksdb"}, "", ""},
		{map[string]string{"default_storage_engine": "RocksDB", "myrocks_flush_wait": "2s"}, "", ""},
		{map[string]string{"default_storage_engine": "InnoDB"}, "", ""},
		{map[string]string{"default_storage_engine": "rocksdb", "rocksdb_block_cache_size": "1G"}, "",
			"settings.rocksdb_block_cache_size: a server given by dsn is used as is"},
		{map[string]string{"innodb_io_capacity": "100"}, "", "settings.innodb_io_capacity: a server given by dsn"},
		{map[string]string{"default_storage_engine": "rocks db"}, "", "settings.default_storage_engine: \"rocks db\" is not"},
		{map[string]string{"myrocks_flush_wait": "2s"}, "", "settings.myrocks_flush_wait: is for MyRocks targets"},
		{map[string]string{"default_storage_engine": "rocksdb"}, "/opt/mariadb", "dsn: an existing server"},
	} {
		err := d.CheckTarget(engine.Target{Name: "t", Engine: "mariadb", DSN: dsn, Settings: c.settings, Basedir: c.basedir})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want it accepted", c.settings, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v basedir %q: %v, want %q", c.settings, c.basedir, err, c.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%v: the error shows the password: %v", c.settings, err)
		}
	}
	s, _ := storageOf(map[string]string{"default_storage_engine": "rocksdb"})
	if d := s.dialect(); d.TableEngine != "ROCKSDB" || d.AlterAddIndex {
		t.Errorf("a dsn MyRocks target's dialect: engine %q, one ALTER for all indexes %v; want ROCKSDB, one per index",
			d.TableEngine, d.AlterAddIndex)
	}
}
