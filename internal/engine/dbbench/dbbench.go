// Package dbbench is the engine "db_bench": RocksDB's own benchmark tool as
// a target. It runs each step of the kv suite by invoking a db_bench binary
// with the equivalent flags (docs/method.md 4.1, 4.2) and parses what it prints,
// so that one report compares in-process engines with db_bench builds of
// any RocksDB version. The binary is the target's `path` setting; the
// default is `db_bench` on the PATH (Debian's rocksdb-tools).
package dbbench

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"benchlab/internal/engine"
)

func init() { engine.Register(Driver{}) }

// Driver runs db_bench binaries.
type Driver struct{}

// Name returns "db_bench".
func (Driver) Name() string { return "db_bench" }

// Kind says the engine is a key-value store.
func (Driver) Kind() engine.Kind { return engine.KindKV }

// Tool says that db_bench runs every measured step itself
// (engine.StepTool).
func (Driver) Tool() string { return "db_bench" }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "RocksDB's db_bench binary (setting path; default db_bench on PATH), run once per kv step; other settings are db_bench flags"
}

// RocksOptions are the RocksDB options both RocksDB engines take (the
// ones benchmark.sh and Callaghan's presets vary), under db_bench's flag names, with benchmark.sh's leveled values
// (docs/method.md 4.2) as defaults.
func RocksOptions() []engine.Setting {
	atLeast := engine.AtLeast
	bools := engine.OneOf("true", "false")
	return []engine.Setting{
		{Name: "cache_size", Doc: "block cache bytes", Default: strconv.Itoa(64 << 20), Check: atLeast(0)},
		{Name: "cache_type", Doc: "block cache implementation", Default: "lru_cache",
			Check: engine.OneOf("lru_cache", "hyper_clock_cache", "auto_hyper_clock_cache", "clock_cache")},
		{Name: "compaction_style", Doc: "0 leveled, 1 universal", Default: "0", Check: engine.OneOf("0", "1")},
		{Name: "num_levels", Doc: "LSM levels", Default: "8", Check: atLeast(1)},
		{Name: "max_bytes_for_level_multiplier", Doc: "per-level fanout", Default: "8", Check: atLeast(2)},
		{Name: "max_bytes_for_level_base", Doc: "bytes of L1", Default: strconv.Itoa(64 << 20), Check: atLeast(1)},
		{Name: "target_file_size_base", Doc: "sorted-file bytes at L1", Default: strconv.Itoa(16 << 20), Check: atLeast(1)},
		{Name: "write_buffer_size", Doc: "memtable bytes", Default: strconv.Itoa(16 << 20), Check: atLeast(1)},
		{Name: "max_write_buffer_number", Doc: "memtables", Default: "8", Check: atLeast(1)},
		{Name: "level0_file_num_compaction_trigger", Doc: "L0 files that trigger compaction", Default: "4", Check: atLeast(1)},
		{Name: "level0_slowdown_writes_trigger", Doc: "L0 files that slow writes", Default: "20", Check: atLeast(1)},
		{Name: "level0_stop_writes_trigger", Doc: "L0 files that stop writes", Default: "30", Check: atLeast(1)},
		{Name: "compression_type", Doc: "block compression", Default: "none", Check: engine.OneOf("none", "snappy", "lz4", "zstd", "zlib")},
		{Name: "bloom_bits", Doc: "bloom filter bits per key (0: none)", Default: "10", Check: atLeast(0)},
		{Name: "block_size", Doc: "data block bytes", Default: "8192", Check: atLeast(256)},
		{Name: "max_background_jobs", Doc: "flush and compaction threads", Default: "2", Check: atLeast(1)},
		{Name: "use_direct_reads", Doc: "O_DIRECT reads", Default: "false", Check: bools},
		{Name: "use_direct_io_for_flush_and_compaction", Doc: "O_DIRECT flush and compaction", Default: "false", Check: bools},
		{Name: "bytes_per_sync", Doc: "sync files every this many bytes", Default: strconv.Itoa(1 << 20), Check: atLeast(0)},
		{Name: "level_compaction_dynamic_level_bytes", Doc: "dynamic level sizes", Default: "true", Check: bools},
		{Name: "perf_level", Doc: "per-thread perf context: 1 off (db_bench's default), 2 counts, 3-5 counts and timings",
			Default: "1", Check: engine.OneOf("1", "2", "3", "4", "5")},
	}
}

// settings are db_bench flags a target may give: path names the binary,
// then RocksOptions and the flags only db_bench takes.
var settings = append(append([]engine.Setting{
	{Name: "path", Doc: "db_bench binary: a path, or a name looked up on PATH", Default: "db_bench"},
}, RocksOptions()...),
	engine.Setting{Name: "cache_numshardbits", Doc: "block cache shards (log2)", Default: "6", Check: engine.AtLeast(-1)},
	engine.Setting{Name: "min_level_to_compress", Doc: "first compressed level (-1: all)", Default: "-1", Check: engine.AtLeast(-1)},
	engine.Setting{Name: "cache_index_and_filter_blocks", Doc: "keep index and filter blocks in the block cache",
		Default: "false", Check: engine.OneOf("true", "false")},
)

// Settings lists the flags a target may set.
func (Driver) Settings() []engine.Setting { return settings }

// CheckTarget validates the flags and that the binary exists and runs, so a
// bad path is reported before anything runs.
func (Driver) CheckTarget(t engine.Target) error {
	if err := engine.CheckSettings(Driver{}, t.Settings); err != nil {
		return err
	}
	return nil
}

// Open finds the binary and asks it for its version. The data dir is where
// db_bench keeps its database.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := engine.CheckSettings(Driver{}, t.Settings); err != nil {
		return nil, err
	}
	eff := map[string]string{}
	for _, s := range settings {
		eff[s.Name] = s.Default
		if v, ok := t.Settings[s.Name]; ok {
			eff[s.Name] = v
		}
	}
	bin, err := exec.LookPath(eff["path"])
	if err != nil {
		return nil, fmt.Errorf("db_bench setting path = %q: %w", eff["path"], err)
	}
	db := &DB{bin: bin, dir: dir, settings: eff}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("db_bench %s --version: %w; output ends:\n%s", bin, err, Tail(out, 10))
	}
	if f := strings.Fields(string(out)); len(f) >= 3 && f[1] == "version" {
		db.version = f[2]
	} else {
		return nil, fmt.Errorf("db_bench %s --version printed no version; output ends:\n%s", bin, Tail(out, 10))
	}
	return db, nil
}

// DB is one db_bench binary and its database dir.
type DB struct {
	bin, dir, version string
	settings          map[string]string
	mu                sync.Mutex
	loaded            bool
	last              engine.LSMStats
}

var _ engine.StepRunner = (*DB)(nil)

// Info reports db_bench's version and the flags benchlab passes.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	s := map[string]string{}
	for k, v := range db.settings {
		s[k] = v
	}
	s["path"] = db.bin
	return engine.Info{Engine: "db_bench", Version: db.version, Build: "db_bench binary " + db.bin, Settings: s}, nil
}

// Close does nothing: each step's process has ended.
func (db *DB) Close() error { return nil }

// Stats returns the LSM facts printed after the last step.
func (db *DB) Stats(ctx context.Context) (engine.LSMStats, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.last, nil
}

// Args returns the command line of step s: the common flags of docs/method.md
// 4.2, the target's settings, then the step's own flags (later ones win in
// db_bench's flag parser). "stats" is appended to the benchmarks so that the
// compaction stats after the step are printed.
func (db *DB) Args(s engine.KVStep, useExisting bool) []string {
	args := []string{"--db=" + db.dir, "--benchmarks=" + strings.Join(append(append([]string{}, s.Benchmarks...), "stats"), ","),
		"--threads=" + strconv.Itoa(max(1, s.Threads)), "--use_existing_db=" + b01(useExisting),
		"--histogram=1", "--statistics=0", "--report_interval_seconds=0", "--stats_per_interval=1",
		"--compression_max_dict_bytes=0", "--verify_checksum=1", "--open_files=-1", "--subcompactions=1",
		"--memtablerep=skip_list", "--delete_obsolete_files_period_micros=62914560",
		"--seed=" + strconv.FormatInt(time.Now().Unix(), 10)}
	if s.Duration > 0 {
		args = append(args, "--duration="+strconv.Itoa(max(1, int(s.Duration.Round(time.Second)/time.Second))))
	}
	for _, st := range settings {
		if st.Name != "path" {
			args = append(args, "--"+st.Name+"="+db.settings[st.Name])
		}
	}
	args = append(args, derivedFlags(db.settings)...)
	for _, f := range s.Flags {
		args = append(args, "--"+f[0]+"="+f[1])
	}
	return args
}

// derivedFlags are the flags benchmark.sh adds from other settings (docs/method.md
// 4.2): leveled compaction pins L0's index and filter blocks in the block
// cache, and caching index and filter blocks reserves half of the cache for
// them (high priority) and none for low priority blocks.
func derivedFlags(settings map[string]string) []string {
	var out []string
	if settings["compaction_style"] == "0" {
		out = append(out, "--pin_l0_filter_and_index_blocks_in_cache=1")
	}
	if settings["cache_index_and_filter_blocks"] == "true" {
		out = append(out, "--cache_high_pri_pool_ratio=0.5", "--cache_low_pri_pool_ratio=0")
	}
	return out
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// RunStep runs db_bench for one step (run.go): a step of a duration may
// run s.Overrun past it (600 s by default, as benchmark_compare.sh bounds
// it with timeout(1)), a step of a count a day. A db_bench stopped at its
// bound or by ctx's end fails the step, its operations so far (its
// progress lines) and time kept in the result.
func (db *DB) RunStep(ctx context.Context, s engine.KVStep) (engine.KVStepResult, error) {
	db.mu.Lock()
	useExisting := db.loaded
	db.mu.Unlock()
	limit := s.Duration + cmp.Or(s.Overrun, defaultOverrun)
	if s.Duration == 0 {
		limit = 24 * time.Hour
	}
	ran := runTool(ctx, db.bin, db.Args(s, useExisting), limit, killAfter)
	res := engine.KVStepResult{Output: Tail(ran.out, 20), Seconds: ran.elapsed.Seconds()}
	if ran.err != nil {
		res.Ops = progressOps(ran.out)
		return res, fmt.Errorf("db_bench %s: %w; output ends:\n%s", s.Name, ran.err, res.Output)
	}
	results, lsm, perr := Parse(string(ran.out))
	db.mu.Lock()
	db.loaded = true
	db.last = lsm
	db.mu.Unlock()
	res.LSM = lsm
	if perr != nil {
		if measuredBenchmark(s) == "" {
			return res, nil // flush and waitforcompaction print no result line
		}
		return res, fmt.Errorf("db_bench %s: %w; output ends:\n%s", s.Name, perr, res.Output)
	}
	want := measuredBenchmark(s)
	for _, r := range results {
		if r.Name == want {
			res.Ops, res.Seconds, res.OpsPerSec, res.MicrosPerOp = r.Ops, r.Seconds, r.OpsPerSec, r.MicrosPerOp
			res.P50, res.P75, res.P99, res.P999, res.P9999, res.Max = r.P50, r.P75, r.P99, r.P999, r.P9999, r.Max
			return res, nil
		}
	}
	return res, fmt.Errorf("db_bench %s: no result line for %s; output ends:\n%s", s.Name, want, res.Output)
}

// measuredBenchmark is the benchmark whose result line is the step's: the
// first one that measures operations.
func measuredBenchmark(s engine.KVStep) string {
	for _, b := range s.Benchmarks {
		switch b {
		case "flush", "waitforcompaction", "compact0", "compact", "levelstats", "stats", "memstats":
			continue
		}
		return b
	}
	return ""
}

// Tail returns the last n lines of out, with progress lines (which db_bench
// ends with carriage returns) reduced to their last state.
func Tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, l := range lines {
		if j := strings.LastIndexByte(strings.TrimRight(l, "\r "), '\r'); j >= 0 {
			lines[i] = l[j+1:]
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
