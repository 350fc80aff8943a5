//go:build rocksdb

// Package rocksdb is RocksDB in-process through grocksdb (cgo) against the
// system's librocksdb (Debian's librocksdb-dev 7.8.3 with grocksdb v1.7.14).
// It is built only with the rocksdb tag; without it a stand-in driver says so.
package rocksdb

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/linxGnu/grocksdb"

	"benchlab/internal/engine"
	"benchlab/internal/engine/dbbench"
)

func init() { engine.Register(Driver{}) }

// Driver opens RocksDB databases.
type Driver struct{}

// Name returns "rocksdb".
func (Driver) Name() string { return "rocksdb" }

// Summary describes the engine for `benchlab list`.
// Kind says the engine is a key-value store.
func (Driver) Kind() engine.Kind { return engine.KindKV }

func (Driver) Summary() string {
	return "RocksDB in-process (grocksdb v1.7.14, system librocksdb); settings are db_bench option names; LRU block cache only"
}

// settings are dbbench.RocksOptions: the C API of 7.8.3 offers only the LRU
// cache in-process (compare cache types through the db_bench engine), and
// compaction styles may also be given by name.
var settings = engine.WithSetting(engine.WithSetting(dbbench.RocksOptions(),
	engine.Setting{Name: "cache_type", Doc: "block cache (only lru_cache in-process)", Default: "lru_cache", Check: engine.OneOf("lru_cache")}),
	engine.Setting{Name: "compaction_style", Doc: "0 leveled, 1 universal", Default: "0", Check: engine.OneOf("0", "1", "leveled", "universal")})

// Settings lists the options a target may set.
func (Driver) Settings() []engine.Setting { return settings }

// CheckTarget validates the settings before anything runs.
func (Driver) CheckTarget(t engine.Target) error { return engine.CheckSettings(Driver{}, t.Settings) }

// Open creates a database in dir with the target's options.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := engine.CheckSettings(Driver{}, t.Settings); err != nil {
		return nil, err
	}
	eff := map[string]string{}
	for _, s := range settings {
		eff[s.Name] = s.Default
		if v, ok := t.Settings[s.Name]; ok {
			eff[s.Name] = strings.ToLower(v)
		}
	}
	n := func(k string) int { v, _ := strconv.Atoi(eff[k]); return v }
	bb := grocksdb.NewDefaultBlockBasedTableOptions()
	cache := grocksdb.NewLRUCache(uint64(n("cache_size")))
	bb.SetBlockCache(cache)
	bb.SetBlockSize(n("block_size"))
	if bits := n("bloom_bits"); bits > 0 {
		bb.SetFilterPolicy(grocksdb.NewBloomFilterFull(float64(bits)))
	}
	o := options(eff, bb, skipList)
	free := func() { o.Destroy(); bb.Destroy(); cache.Destroy() }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		free()
		return nil, fmt.Errorf("rocksdb: data dir: %w", err)
	}
	rdb, err := grocksdb.OpenDb(o, dir)
	if err != nil {
		free()
		return nil, fmt.Errorf("rocksdb: open %s: %w", dir, err)
	}
	db := &DB{db: rdb, dir: dir, opts: o, bb: bb, cache: cache, settings: eff, memtable: skipList,
		ro: grocksdb.NewDefaultReadOptions()}
	db.wo = grocksdb.NewDefaultWriteOptions()
	db.woNoWAL = grocksdb.NewDefaultWriteOptions()
	db.woNoWAL.DisableWAL(true)
	db.woSync = grocksdb.NewDefaultWriteOptions()
	db.woSync.SetSync(true)
	db.perfLevel = n("perf_level")
	db.handles()
	return db, nil
}

// Memtable representations (db_bench --memtablerep).
const (
	skipList = "skip_list"
	vector   = "vector"
)

// options builds the database options of the effective settings eff, with
// table options bb and memtable representation rep. The vector memtable
// takes no concurrent writers (allow_concurrent_memtable_write=false, as
// db_bench's fillseq passes).
func options(eff map[string]string, bb *grocksdb.BlockBasedTableOptions, rep string) *grocksdb.Options {
	n := func(k string) int { v, _ := strconv.Atoi(eff[k]); return v }
	o := grocksdb.NewDefaultOptions()
	o.SetCreateIfMissing(true)
	o.SetWriteBufferSize(uint64(n("write_buffer_size")))
	o.SetMaxWriteBufferNumber(n("max_write_buffer_number"))
	o.SetNumLevels(n("num_levels"))
	o.SetMaxBytesForLevelBase(uint64(n("max_bytes_for_level_base")))
	o.SetMaxBytesForLevelMultiplier(float64(n("max_bytes_for_level_multiplier")))
	o.SetTargetFileSizeBase(uint64(n("target_file_size_base")))
	o.SetLevel0FileNumCompactionTrigger(n("level0_file_num_compaction_trigger"))
	o.SetLevel0SlowdownWritesTrigger(n("level0_slowdown_writes_trigger"))
	o.SetLevel0StopWritesTrigger(n("level0_stop_writes_trigger"))
	o.SetMaxBackgroundJobs(n("max_background_jobs"))
	o.SetUseDirectReads(eff["use_direct_reads"] == "true")
	o.SetUseDirectIOForFlushAndCompaction(eff["use_direct_io_for_flush_and_compaction"] == "true")
	o.SetBytesPerSync(uint64(n("bytes_per_sync")))
	o.SetLevelCompactionDynamicLevelBytes(eff["level_compaction_dynamic_level_bytes"] == "true")
	o.SetMaxOpenFiles(-1)
	if s := eff["compaction_style"]; s == "1" || s == "universal" {
		o.SetCompactionStyle(grocksdb.UniversalCompactionStyle)
	} else {
		o.SetCompactionStyle(grocksdb.LevelCompactionStyle)
	}
	o.SetCompression(map[string]grocksdb.CompressionType{"none": grocksdb.NoCompression, "snappy": grocksdb.SnappyCompression,
		"lz4": grocksdb.LZ4Compression, "zstd": grocksdb.ZSTDCompression, "zlib": grocksdb.ZLibCompression}[eff["compression_type"]])
	o.SetBlockBasedTableFactory(bb)
	if rep == vector {
		o.SetMemtableVectorRep()
		o.SetAllowConcurrentMemtableWrites(false)
	}
	return o
}

// UseMemtable flushes the memtables and reopens the database with the
// memtable representation rep, "vector" or "skip_list" (db_bench's
// --memtablerep, which each db_bench step sets when it opens the database:
// fillseq loads into a vector). The block cache is kept. Nothing may use
// the database meanwhile; if the reopen fails the database is closed.
func (db *DB) UseMemtable(ctx context.Context, rep string) error {
	if rep != vector && rep != skipList {
		return fmt.Errorf("rocksdb: memtable %q; want %s or %s", rep, vector, skipList)
	}
	if rep == db.memtable {
		return nil
	}
	if err := db.Flush(ctx); err != nil {
		return fmt.Errorf("rocksdb: flush before reopening with the %s memtable: %w", rep, err)
	}
	db.db.Close()
	db.opts.Destroy()
	db.opts = options(db.settings, db.bb, rep)
	rdb, err := grocksdb.OpenDb(db.opts, db.dir)
	if err != nil {
		db.closed.Store(true)
		db.free()
		return fmt.Errorf("rocksdb: reopen %s with the %s memtable: %w", db.dir, rep, err)
	}
	db.db, db.memtable = rdb, rep
	db.handles()
	return nil
}

// DB is an open RocksDB database.
type DB struct {
	db                  *grocksdb.DB
	dir                 string
	memtable            string // skipList or vector
	opts                *grocksdb.Options
	bb                  *grocksdb.BlockBasedTableOptions
	cache               *grocksdb.Cache
	closed              atomic.Bool
	ro                  *grocksdb.ReadOptions
	wo, woNoWAL, woSync *grocksdb.WriteOptions
	settings            map[string]string
	// cdb and cro are the C objects behind db and ro, for the one-call
	// paths of fastget.go; perfLevel is the perf_level setting.
	cdb, cro  uintptr
	perfLevel int
}

var (
	_ engine.KV              = (*DB)(nil)
	_ engine.BatchLookuper   = (*DB)(nil)
	_ engine.MemtableChooser = (*DB)(nil)
)

// CallsC returns true: operations are cgo calls.
func (db *DB) CallsC() bool { return true }

// Info reports the library version and the effective settings.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	s := map[string]string{}
	for k, v := range db.settings {
		s[k] = v
	}
	s["memtablerep"] = "skip_list; vector during the kv suite's fillseq, as db_bench's"
	return engine.Info{Engine: "rocksdb", Version: libVersion, Build: "grocksdb v1.7.14 (cgo) against the system librocksdb", Settings: s}, nil
}

// libVersion is the librocksdb the package is built against (Debian 12's).
const libVersion = "7.8.3"

// Close closes the database and frees its options, block cache and
// read/write options (grocksdb's Options.Destroy leaves the table options and
// the cache to their owner: each open used to leak its whole block cache).
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	db.db.Close()
	db.free()
	return nil
}

// free releases the options, block cache and read/write options.
func (db *DB) free() {
	db.opts.Destroy()
	db.bb.Destroy()
	db.cache.Destroy()
	db.ro.Destroy()
	db.wo.Destroy()
	db.woNoWAL.Destroy()
	db.woSync.Destroy()
}

func (db *DB) writeOpts(wo engine.WriteOptions) *grocksdb.WriteOptions {
	switch {
	case wo.Sync:
		return db.woSync
	case wo.DisableWAL:
		return db.woNoWAL
	}
	return db.wo
}

// Put writes one key.
func (db *DB) Put(key, value []byte, wo engine.WriteOptions) error {
	return db.put(db.writeOpts(wo), key, value)
}

// Get appends key's value to buf.
func (db *DB) Get(key, buf []byte) ([]byte, bool, error) {
	return db.fastGet(key, buf)
}

// Lookup finds key without copying its value out.
func (db *DB) Lookup(key []byte) (int, bool, error) {
	return db.lookup(key)
}

// MultiGet uses RocksDB's batched lookup.
func (db *DB) MultiGet(keys [][]byte) (int, error) {
	db.setPerfLevel()
	vals, err := db.db.MultiGet(db.ro, keys...)
	if err != nil {
		return 0, err
	}
	defer vals.Destroy()
	found := 0
	for _, v := range vals {
		if v.Exists() {
			found++
		}
	}
	return found, nil
}

// NewIterator opens an iterator over all keys.
func (db *DB) NewIterator() (engine.Iterator, error) {
	db.setPerfLevel()
	return &iterator{it: db.db.NewIterator(db.ro)}, nil
}

type iterator struct{ it *grocksdb.Iterator }

func (i *iterator) SeekGE(k []byte) bool { i.it.Seek(k); return i.it.Valid() }
func (i *iterator) First() bool          { i.it.SeekToFirst(); return i.it.Valid() }
func (i *iterator) Last() bool           { i.it.SeekToLast(); return i.it.Valid() }
func (i *iterator) Next() bool           { i.it.Next(); return i.it.Valid() }
func (i *iterator) Prev() bool           { i.it.Prev(); return i.it.Valid() }

// Key and Value point into RocksDB's buffers, valid until the next move.
func (i *iterator) Key() []byte   { return i.it.Key().Data() }
func (i *iterator) Value() []byte { return i.it.Value().Data() }
func (i *iterator) Close() error {
	err := i.it.Err()
	i.it.Close()
	return err
}

type batch struct{ b *grocksdb.WriteBatch }

func (b batch) Put(k, v []byte) { b.b.Put(k, v) }
func (b batch) Count() int      { return b.b.Count() }
func (b batch) Reset()          { b.b.Clear() }
func (b batch) Close() error    { b.b.Destroy(); return nil }

// NewBatch returns an empty write batch.
func (db *DB) NewBatch() engine.Batch { return batch{grocksdb.NewWriteBatch()} }

// Write applies a batch from NewBatch.
func (db *DB) Write(b engine.Batch, wo engine.WriteOptions) error {
	rb, ok := b.(batch)
	if !ok {
		return fmt.Errorf("rocksdb: batch of type %T", b)
	}
	db.setPerfLevel()
	return db.db.Write(db.writeOpts(wo), rb.b)
}

// Flush flushes the memtables and waits.
func (db *DB) Flush(ctx context.Context) error {
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	return db.db.Flush(fo)
}

// WaitForCompactions polls RocksDB's properties until no flush or
// compaction runs or is pending.
func (db *DB) WaitForCompactions(ctx context.Context) error {
	for {
		pending, _ := db.db.GetIntProperty("rocksdb.compaction-pending")
		running, _ := db.db.GetIntProperty("rocksdb.num-running-compactions")
		flushes, _ := db.db.GetIntProperty("rocksdb.num-running-flushes")
		memFlush, _ := db.db.GetIntProperty("rocksdb.mem-table-flush-pending")
		if pending == 0 && running == 0 && flushes == 0 && memFlush == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stats parses "rocksdb.stats" as db_bench's output is parsed, with the size
// and L0 file count from exact integer properties.
func (db *DB) Stats(ctx context.Context) (engine.LSMStats, error) {
	st := dbbench.ParseStats(db.db.GetProperty("rocksdb.stats"))
	if v, ok := db.db.GetIntProperty("rocksdb.live-sst-files-size"); ok {
		st.SizeBytes = int64(v)
	}
	if v, ok := db.db.GetIntProperty("rocksdb.num-files-at-level0"); ok {
		st.L0Files = int64(v)
	}
	return st, nil
}

// rocksdbGauges are the properties ReadInternals reads as gauges, named by
// the property without its "rocksdb." prefix: L0's files, the bytes
// compactions must still rewrite, compactions and flushes running,
// immutable memtables waiting to be flushed and all memtables' bytes, and
// whether writes are stopped (1) or slowed (a delayed rate > 0).
var rocksdbGauges = []string{"num-files-at-level0", "estimate-pending-compaction-bytes",
	"num-running-compactions", "num-running-flushes", "num-immutable-mem-table", "cur-size-all-mem-tables",
	"is-write-stopped", "actual-delayed-write-rate"}

// ReadInternals reads rocksdbGauges (engine.InternalsReader). It reads no
// counters: without a statistics object RocksDB keeps none exact (its
// "rocksdb.stats" text rounds bytes to 0.01 GB), so its flushes and
// compactions show as the step's LSM facts (Stats) instead.
func (db *DB) ReadInternals(ctx context.Context) (engine.Internals, error) {
	gauges := map[string]float64{}
	for _, p := range rocksdbGauges {
		// Some are integer properties, others (the files at a level)
		// only text ones.
		if v, ok := db.db.GetIntProperty("rocksdb." + p); ok {
			gauges["rocksdb."+p] = float64(v)
		} else if x, err := strconv.ParseFloat(strings.TrimSpace(db.db.GetProperty("rocksdb."+p)), 64); err == nil {
			gauges["rocksdb."+p] = x
		}
	}
	return engine.Internals{Gauges: gauges}, nil
}
