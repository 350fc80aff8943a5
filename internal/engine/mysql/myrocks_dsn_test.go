package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
)

// dsnWorkload is a short sysbench selection whose write test runs the
// postwrite cleanup; targets one after the other, since both use the
// same database of one server.
const dsnWorkload = `
[workload]
suite = "sysbench"
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1]
read_time = "1s"
write_time = "1s"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
interleave = "off"
`

// TestMyRocksDSN runs sysbench on an existing MariaDB (dsn targets) that
// has the RocksDB plugin loaded and InnoDB as its default engine, with
// default_storage_engine = "rocksdb" in the targets' settings: the tables
// are made ENGINE=ROCKSDB (information_schema.tables, read as root after
// the run), the manifest says so, and MyRocks' counters grow. Through
// benchlab's own account (PROCESS, SUPER) the cleanup flushes and compacts
// and the series have the LSM gauges; through an account with rights on
// sbtest only, the cleanup leaves both out and says so, and the series
// have the status counters but not the engine status's gauges. A dsn
// target naming the engine on a server without it, or giving a server
// variable, exits 2 naming the setting.
func TestMyRocksDSN(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	existing := enginetest.Open(t, engine.Target{Name: "existing", Engine: "mariadb", Getenv: getenv,
		Settings: map[string]string{"rocksdb_block_cache_size": "32M", "rocksdb_default_cf_options": "write_buffer_size=64k"}})
	in := existing.(interface{ Instance() *server.Instance }).Instance()
	root, err := sql.Open("mysql", mysql.RootConfig(in).FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var def string
	if err := root.QueryRowContext(ctx, "SELECT @@default_storage_engine").Scan(&def); err != nil || def != "InnoDB" {
		t.Fatalf("the existing server's default engine %q %v; want InnoDB, so that only the targets' DDL makes RocksDB tables", def, err)
	}
	for _, q := range []string{"CREATE USER 'plain'@'127.0.0.1' IDENTIFIED BY 'plainpw'", "GRANT ALL ON sbtest.* TO 'plain'@'127.0.0.1'"} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	target := func(name, user, password string, port int, settings string) string {
		return fmt.Sprintf("\n[[target]]\nname = %q\nengine = \"mariadb\"\ndsn = \"%s:%s@tcp(127.0.0.1:%d)/sbtest\"\n[target.settings]\n%s",
			name, user, password, port, settings)
	}
	rocks := "default_storage_engine = \"rocksdb\"\nmyrocks_flush_wait = \"1s\"\n"
	spec := "name = \"myrocks-dsn\"\nbase = \"benchlab\"\n" + target("benchlab", "benchlab", in.Password(), in.Port, rocks) +
		target("plain", "plain", "plainpw", in.Port, rocks) + dsnWorkload
	db, _, stdout, stderr := benchRun(t, spec, cli.ExitOK)
	out := strings.Join(strings.Fields(stdout.String()+stderr.String()), " ")
	runs, res := storedRuns(t, db)
	if len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	var engineOf string
	if err := root.QueryRowContext(ctx, "SELECT engine FROM information_schema.tables WHERE table_schema = 'sbtest' AND table_name = 'sbtest1'").
		Scan(&engineOf); err != nil || engineOf != "ROCKSDB" {
		t.Errorf("sbtest1's engine %q %v; want ROCKSDB", engineOf, err)
	}
	for i, r := range runs {
		m := store.ParseManifest(r.Manifest)
		set := m.Engine.Settings
		if r.Status != store.StatusOK || set["benchlab.table_engine"] != "ROCKSDB" || !strings.HasPrefix(set["benchlab.plugin"], "ROCKSDB ") {
			t.Errorf("run %s: %s %s, settings %v; want ok, table engine and plugin named", r.Target, r.Status, r.Error, set)
		}
		grew, lsm, status := false, false, false
		for _, x := range res[i] {
			grew = grew || (!x.Action && x.Facts[store.EngineStatFact("status.Rocksdb_rows_read")] > 0)
			for _, s := range x.Internals {
				lsm = lsm || s.Name == mysql.GaugeL0Files
				status = status || s.Name == "status.Rocksdb_rows_read"
			}
		}
		wantLSM := r.Target == "benchlab"
		if !grew || !status || lsm != wantLSM {
			t.Errorf("run %s: RocksDB rows read grew %v, series of Rocksdb_rows_read %v, of L0 files %v (want %v)",
				r.Target, grew, status, lsm, wantLSM)
		}
		notes := strings.Join(m.Notes, "\n")
		if wantLSM && !strings.Contains(notes, "postwrite: MyRocks: ANALYZE TABLE, wait for pending compaction, rocksdb_force_flush_memtable_now=1") {
			t.Errorf("run %s: notes %q lack the MyRocks cleanup", r.Target, notes)
		}
	}
	if want := "warning: postwrite: MyRocks flush and L0 compaction left out: user plain lacks the PROCESS privilege"; !strings.Contains(out, want) {
		t.Errorf("the run's log lacks %q:\n%s", want, out)
	}

	// A server without the RocksDB plugin, and server variables on a dsn
	// target: exit 2 before anything runs, naming the setting.
	innodb := enginetest.Open(t, engine.Target{Name: "innodb-only", Engine: "mariadb", Getenv: getenv})
	bare := innodb.(interface{ Instance() *server.Instance }).Instance()
	for _, c := range []struct{ target, want string }{
		{target("no-rocks", "benchlab", bare.Password(), bare.Port, rocks),
			"target[0].settings.default_storage_engine: the server at 127.0.0.1:" + fmt.Sprint(bare.Port) + " has no ROCKSDB engine"},
		{target("variable", "benchlab", in.Password(), in.Port, rocks+"rocksdb_block_cache_size = \"64M\"\n"),
			"target[0]: settings.rocksdb_block_cache_size: a server given by dsn is used as is"},
		{target("variable", "benchlab", in.Password(), in.Port, "innodb_buffer_pool_size = \"64M\"\n"),
			"target[0]: settings.innodb_buffer_pool_size: a server given by dsn is used as is"},
	} {
		_, _, stdout, stderr := benchRun(t, "name = \"bad-dsn\"\n"+c.target+dsnWorkload, cli.ExitUsage)
		flat := strings.Join(strings.Fields(stdout.String()+stderr.String()), " ")
		if !strings.Contains(flat, c.want) {
			t.Errorf("stderr %q, want %q", flat, c.want)
		}
		if strings.Contains(c.want, "no ROCKSDB") && (!strings.Contains(flat, "mariadb-plugin-rocksdb") ||
			!slices.ContainsFunc(strings.Fields(flat), func(f string) bool { return strings.Contains(f, "InnoDB") })) {
			t.Errorf("stderr %q: want the engines the server has and the plugin's package", flat)
		}
		if strings.Contains(flat, bare.Password()) || strings.Contains(flat, in.Password()) {
			t.Errorf("stderr shows a password: %q", flat)
		}
	}
}
