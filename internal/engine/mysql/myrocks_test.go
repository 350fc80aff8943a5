package mysql_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/insertbench" // the insert suite, which cli does not import
)

// myRocksTargets are an InnoDB target and a MyRocks one on the same
// MariaDB build, both small; the MyRocks one sets plugin variables and a
// short flush wait so the cleanup's wait stays short in tests.
const myRocksTargets = `
[[target]]
name = "innodb"
engine = "mariadb"
[target.settings]
innodb_buffer_pool_size = "64M"
innodb_log_file_size = "32M"

[[target]]
name = "myrocks"
engine = "mariadb"
[target.settings]
default_storage_engine = "rocksdb"
rocksdb_block_cache_size = "32M"
rocksdb_default_cf_options = "write_buffer_size=64k;level0_file_num_compaction_trigger=2"
rocksdb_max_background_jobs = "2"
myrocks_flush_wait = "1s"
`

// runMyRocks runs spec through `benchlab run` and `benchlab report`,
// expecting both ok, and returns the two runs' results (InnoDB's first)
// and the text report.
func runMyRocks(t *testing.T, spec string) (runs []store.Run, results [2][]store.Result, manifests [2]store.Manifest, report string) {
	t.Helper()
	db, env, stdout, stderr := benchRun(t, spec, cli.ExitOK)
	t.Logf("benchlab run:\n%s\n%s", stdout.String(), stderr.String())
	runs, res := storedRuns(t, db)
	if len(runs) != 2 {
		t.Fatalf("runs: %v", runs)
	}
	for i, r := range runs {
		if r.Status != store.StatusOK {
			t.Fatalf("run %s: %s %s", r.Target, r.Status, r.Error)
		}
		results[i] = res[i]
		manifests[i] = store.ParseManifest(r.Manifest)
	}
	stdout.Reset()
	if code := cli.Main(env, []string{"report", "--store", db}); code != cli.ExitOK {
		t.Fatalf("benchlab report: exit %d: %s", code, stderr.String())
	}
	return runs, results, manifests, stdout.String()
}

// benchRun runs spec through `benchlab run` with a store, work dir and
// server log dir of its own, wants exit code want, and returns the
// store's path and the environment the command ran in (for more
// commands on the store).
func benchRun(t *testing.T, spec string, want int) (db string, env cli.Env, stdout, stderr *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	specFile := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "BENCHLAB_SERVER_LOGS" {
			return filepath.Join(dir, "logs")
		}
		return ""
	}
	db = filepath.Join(dir, "results.db")
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	env = cli.Env{Stdout: stdout, Stderr: stderr, Getenv: getenv}
	if code := cli.Main(env, []string{"run", specFile, "--store", db, "--workdir", filepath.Join(dir, "work")}); code != want {
		t.Fatalf("benchlab run: exit %d, want %d\n%s\n%s", code, want, stdout.String(), stderr.String())
	}
	return db, env, stdout, stderr
}

// storedRuns reads the one experiment of the store at db: its runs and
// each run's results.
func storedRuns(t *testing.T, db string) ([]store.Run, [][]store.Result) {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	exps, err := st.Experiments(ctx)
	if err != nil || len(exps) != 1 {
		t.Fatalf("experiments: %v %v", exps, err)
	}
	runs, err := st.Runs(ctx, exps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var res [][]store.Result
	for _, r := range runs {
		rs, err := st.Results(ctx, r.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, rs)
	}
	return runs, res
}

// checkMyRocks asserts what both suites share: the MyRocks run's manifest
// names the plugin and its settings as the server read them back, the
// report says which cleanup ran on each target, and the RocksDB counters
// grew on MyRocks' measured steps and on no InnoDB step.
func checkMyRocks(t *testing.T, runs []store.Run, results [2][]store.Result, manifests [2]store.Manifest, report, cleanup string) {
	t.Helper()
	set := manifests[1].Engine.Settings
	if !strings.HasPrefix(set["benchlab.plugin"], "ROCKSDB ") || !strings.EqualFold(set["default_storage_engine"], "rocksdb") ||
		set["rocksdb_block_cache_size"] != "33554432" || !strings.Contains(set["rocksdb_default_cf_options"], "write_buffer_size=64k") ||
		set["benchlab.myrocks_flush_wait"] != "1s" {
		t.Errorf("MyRocks manifest settings: %v", set)
	}
	if _, ok := manifests[0].Engine.Settings["benchlab.plugin"]; ok {
		t.Errorf("InnoDB run loaded a plugin: %v", manifests[0].Engine.Settings)
	}
	// The report wraps its notes; the manifest keeps them whole.
	flat := strings.Join(strings.Fields(report), " ")
	for i, want := range []string{
		cleanup + ": InnoDB: ANALYZE TABLE, purge wait, dirty pages flushed",
		cleanup + ": MyRocks: ANALYZE TABLE, wait for pending compaction, rocksdb_force_flush_memtable_now=1, wait 1s, ",
	} {
		if !slices.ContainsFunc(manifests[i].Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("%s manifest notes %q lack %q", runs[i].Target, manifests[i].Notes, want)
		}
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, want := range []string{"Rocksdb_bytes_written/op", "Rocksdb_wal_bytes/op", "Rocksdb_rows_read/op",
		"MyRocks LSM per operation", "write-amp", "block cache hit %", "stall ms"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for i, rs := range results {
		grew := 0
		for _, r := range rs {
			if !r.Action && r.Facts[store.EngineStatFact("status.Rocksdb_rows_read")]+
				r.Facts[store.EngineStatFact("status.Rocksdb_rows_inserted")] > 0 {
				grew++
			}
			if r.Action && strings.HasPrefix(r.Test, cleanup) && i == 1 {
				if _, ok := r.Facts["myrocks_l0_files_after"]; !ok {
					t.Errorf("%s on MyRocks: no L0 files fact: %v", r.Test, r.Facts)
				}
			}
		}
		if i == 0 && grew > 0 {
			t.Errorf("InnoDB run: %d steps grew RocksDB's row counters", grew)
		}
		if i == 1 && grew == 0 {
			t.Errorf("MyRocks run: no measured step grew RocksDB's row counters")
		}
	}
}

// TestMyRocksInsertBenchmark runs the Insert Benchmark's load, churn and
// first query steps on InnoDB and MyRocks at a tiny size.
func TestMyRocksInsertBenchmark(t *testing.T) {
	spec := "name = \"myrocks-insert\"\nbase = \"innodb\"\n" + myRocksTargets + `
[workload]
suite = "insert"
postwrite_wait = "0s"
report_interval = "0s"
tests = ["l.i1", "l.i2", "qr100", "qp100"]

[workload.insert]
clients = 1
rows = 4000
inserts = 2000
query_time = "1s"
rates = [100]
`
	runs, results, manifests, report := runMyRocks(t, spec)
	t.Logf("report:\n%s", report)
	checkMyRocks(t, runs, results, manifests, report, "cleanup")
	// 4000 rows of about 100 bytes, three indexes and churn overflow a 64 KiB
	// memtable several times, whatever the speed: some measured step
	// flushed memtables to L0.
	flushed := 0.0
	for _, r := range results[1] {
		f := r.Facts[store.EngineStatFact("status.Rocksdb_flush_write_bytes")]
		c := r.Facts[store.EngineStatFact("status.Rocksdb_compact_write_bytes")]
		u := r.Facts[store.EngineStatFact("status.Rocksdb_bytes_written")]
		t.Logf("MyRocks %-6s flush %8.0f B, compaction %8.0f B, user %8.0f B", r.Test, f, c, u)
		flushed += f
	}
	if flushed == 0 {
		t.Errorf("no measured MyRocks step flushed a memtable (Rocksdb_flush_write_bytes)")
	}
}

// TestMyRocksSysbench runs sysbench tests with a postwrite on InnoDB and
// MyRocks at a tiny size.
func TestMyRocksSysbench(t *testing.T) {
	spec := "name = \"myrocks-sysbench\"\nbase = \"innodb\"\n" + myRocksTargets + `
[workload]
suite = "sysbench"
tests = ["point-query", "update-index", "points-covered-si", "range-covered-pk"]
table_size = 3000
threads = [1]
read_time = "1s"
write_time = "1s"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
`
	runs, results, manifests, report := runMyRocks(t, spec)
	t.Logf("report:\n%s", report)
	checkMyRocks(t, runs, results, manifests, report, "postwrite")
}

// runBad runs spec through `benchlab run`, wants exit code want, and
// returns stderr, the runs and each run's results (none on a usage error).
func runBad(t *testing.T, spec string, want int) (string, []store.Run, [][]store.Result) {
	t.Helper()
	db, _, _, stderr := benchRun(t, spec, want)
	if want == cli.ExitUsage {
		return stderr.String(), nil, nil
	}
	runs, res := storedRuns(t, db)
	return stderr.String(), runs, res
}

const badWorkload = `
[workload]
suite = "sysbench"
tests = ["point-query"]
table_size = 1000
threads = [1]
read_time = "1s"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
`

// TestMyRocksBadSettings: a MyRocks setting on an install without the
// plugin, a flush wait out of bounds or without MyRocks, and an engine
// name that is no name are refused before anything starts, with exit 2
// naming the setting (and, for the plugin, the package that has it).
func TestMyRocksBadSettings(t *testing.T) {
	// A MariaDB install without the plugin: Debian's programs, no plugin dir.
	base := t.TempDir()
	for _, p := range []string{"sbin/mariadbd", "bin/mariadb-install-db"} {
		if err := os.MkdirAll(filepath.Join(base, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("/usr", p), filepath.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ target, want string }{
		{"basedir = \"" + base + "\"\n[target.settings]\ndefault_storage_engine = \"rocksdb\"\n",
			"settings.default_storage_engine: MyRocks needs MariaDB's RocksDB plugin ha_rocksdb.so"},
		{"basedir = \"" + base + "\"\n[target.settings]\nrocksdb_block_cache_size = \"64M\"\n",
			"settings.rocksdb_block_cache_size: MyRocks needs"},
		{"[target.settings]\ndefault_storage_engine = \"rocksdb\"\nmyrocks_flush_wait = \"2h\"\n",
			"settings.myrocks_flush_wait: \"2h\" is not allowed; want a duration from 0s to 10m0s"},
		{"[target.settings]\nmyrocks_flush_wait = \"5s\"\n",
			"settings.myrocks_flush_wait: is for MyRocks targets"},
		{"[target.settings]\ndefault_storage_engine = \"rocks db\"\n",
			"settings.default_storage_engine: \"rocks db\" is not a storage engine's name"},
	} {
		spec := "name = \"bad\"\n[[target]]\nname = \"m\"\nengine = \"mariadb\"\n" + c.target + badWorkload
		stderr, _, _ := runBad(t, spec, cli.ExitUsage)
		flat := strings.Join(strings.Fields(stderr), " ")
		if !strings.Contains(flat, "target[0]") || !strings.Contains(flat, c.want) {
			t.Errorf("%q: stderr %q, want target[0] and %q", c.target, flat, c.want)
		}
		if strings.Contains(c.want, "MyRocks needs") && !strings.Contains(flat, "mariadb-plugin-rocksdb") {
			t.Errorf("%q: stderr %q does not name the package", c.target, flat)
		}
	}
}

// TestMyRocksWrongEngine: a server that makes the tables with another
// engine than asked (enforce_storage_engine substitutes InnoDB for ROCKSDB
// when sql_mode lacks NO_ENGINE_SUBSTITUTION) fails its target at the
// load, naming the tables and their engine, and keeps no measured result.
func TestMyRocksWrongEngine(t *testing.T) {
	spec := `name = "wrong-engine"
[[target]]
name = "substituted"
engine = "mariadb"
[target.settings]
default_storage_engine = "rocksdb"
enforce_storage_engine = "InnoDB"
sql_mode = ""
myrocks_flush_wait = "0s"
` + badWorkload
	_, runs, res := runBad(t, spec, cli.ExitFailure)
	if len(runs) != 1 || runs[0].Status != store.StatusFailed {
		t.Fatalf("runs %+v, want one failed", runs)
	}
	if e := runs[0].Error; !strings.Contains(e, "settings.default_storage_engine asks for ROCKSDB tables") ||
		!strings.Contains(e, "sbtest1 (ENGINE=InnoDB)") {
		t.Errorf("error %q, want the asked engine and sbtest1's", e)
	}
	for _, r := range res[0] {
		if !r.Action {
			t.Errorf("a measured result was kept under the wrong engine: %s", r.Test)
		}
	}
}
