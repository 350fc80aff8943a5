// Package pebble is the cgo-free key-value engine: CockroachDB's Pebble, an
// LSM tree in Go that reads and writes RocksDB-style sorted files. It gives
// the kv suite (db_bench's steps, docs/method.md 4.1) a peer to RocksDB in the
// default build.
package pebble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"

	"benchlab/internal/engine"
)

func init() { engine.Register(Driver{}) }

// module is the Go module whose version Info reports.
const module = "github.com/cockroachdb/pebble/v2"

// Driver opens Pebble databases.
type Driver struct{}

// Name returns "pebble".
func (Driver) Name() string { return "pebble" }

// Summary describes the engine for `benchlab list`.
// Kind says the engine is a key-value store.
func (Driver) Kind() engine.Kind { return engine.KindKV }

func (Driver) Summary() string {
	return "embedded Pebble " + version() + " (pure Go LSM, RocksDB's peer); settings follow db_bench's option names"
}

// settings are the RocksDB tuning options (RocksOptions) that Pebble has, named as
// db_bench names them so one spec can vary both engines alike. Defaults are
// benchmark.sh's (docs/method.md 4.2) where Pebble has the option.
var settings = []engine.Setting{
	{Name: "cache_size", Doc: "block cache bytes", Default: strconv.Itoa(64 << 20), Check: atLeast(0)},
	{Name: "write_buffer_size", Doc: "memtable bytes (Pebble MemTableSize)", Default: strconv.Itoa(16 << 20), Check: atLeast(1 << 20)},
	{Name: "max_write_buffer_number", Doc: "memtables before writes stop", Default: "8", Check: atLeast(2)},
	{Name: "level0_file_num_compaction_trigger", Doc: "L0 read-amplification that triggers a compaction", Default: "4", Check: atLeast(1)},
	{Name: "level0_stop_writes_trigger", Doc: "L0 read-amplification that stops writes", Default: "30", Check: atLeast(1)},
	{Name: "max_bytes_for_level_base", Doc: "bytes of Lbase (Pebble LBaseMaxBytes)", Default: strconv.Itoa(64 << 20), Check: atLeast(1)},
	{Name: "max_bytes_for_level_multiplier", Doc: "per-level fanout", Default: "8", Check: atLeast(2)},
	{Name: "target_file_size_base", Doc: "target sorted-file bytes of L0/Lbase", Default: strconv.Itoa(16 << 20), Check: atLeast(1 << 10)},
	{Name: "block_size", Doc: "data block bytes", Default: "8192", Check: atLeast(256)},
	{Name: "compression_type", Doc: "block compression", Default: "none", Check: engine.OneOf("none", "snappy", "zstd", "minlz")},
	{Name: "bloom_bits", Doc: "bloom filter bits per key (0: no filter)", Default: "10", Check: atLeast(0)},
	{Name: "max_background_jobs", Doc: "maximum concurrent compactions", Default: "2", Check: atLeast(1)},
	{Name: "bytes_per_sync", Doc: "sync sorted files every this many bytes written", Default: strconv.Itoa(1 << 20), Check: atLeast(0)},
}

// Settings lists the options a target may set.
func (Driver) Settings() []engine.Setting { return settings }

var atLeast = engine.AtLeast

// options resolves the target's settings over the defaults.
func options(t engine.Target) (map[string]string, *pebble.Options, error) {
	if err := engine.CheckSettings(Driver{}, t.Settings); err != nil {
		return nil, nil, err
	}
	eff := map[string]string{}
	for _, s := range settings {
		eff[s.Name] = s.Default
		if v, ok := t.Settings[s.Name]; ok {
			eff[s.Name] = strings.ToLower(v)
		}
	}
	n := func(name string) int64 { v, _ := strconv.ParseInt(eff[name], 10, 64); return v }
	if n("level0_stop_writes_trigger") < n("level0_file_num_compaction_trigger") {
		return nil, nil, fmt.Errorf("pebble setting level0_stop_writes_trigger = %d: want >= level0_file_num_compaction_trigger (%d)",
			n("level0_stop_writes_trigger"), n("level0_file_num_compaction_trigger"))
	}
	o := &pebble.Options{
		MemTableSize:                uint64(n("write_buffer_size")),
		MemTableStopWritesThreshold: int(n("max_write_buffer_number")),
		L0CompactionThreshold:       int(n("level0_file_num_compaction_trigger")),
		L0StopWritesThreshold:       int(n("level0_stop_writes_trigger")),
		LBaseMaxBytes:               n("max_bytes_for_level_base"),
		BytesPerSync:                int(n("bytes_per_sync")),
		MaxOpenFiles:                -1,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      quietLogger{},
	}
	jobs := int(n("max_background_jobs"))
	o.CompactionConcurrencyRange = func() (int, int) { return 1, jobs }
	o.Experimental.LevelMultiplier = int(n("max_bytes_for_level_multiplier"))
	var comp *sstable.CompressionProfile
	switch eff["compression_type"] {
	case "none":
		comp = sstable.NoCompression
	case "snappy":
		comp = sstable.SnappyCompression
	case "zstd":
		comp = sstable.ZstdCompression
	case "minlz":
		comp = sstable.MinLZCompression
	}
	var filter pebble.FilterPolicy
	if bits := n("bloom_bits"); bits > 0 {
		filter = bloom.FilterPolicy(bits)
	}
	size := n("target_file_size_base")
	for i := range o.Levels {
		o.Levels[i].BlockSize = int(n("block_size"))
		o.Levels[i].Compression = func() *sstable.CompressionProfile { return comp }
		o.Levels[i].FilterPolicy = filter
		o.TargetFileSizes[i] = size
		if i > 0 {
			size *= 2
		}
	}
	return eff, o, nil
}

// CheckTarget validates the settings before anything runs, so a bad option
// is a usage error (exit 2) naming it.
func (Driver) CheckTarget(t engine.Target) error {
	_, _, err := options(t)
	return err
}

// Open creates (or opens) a Pebble store in dir with the target's settings.
func (Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	eff, o, err := options(t)
	if err != nil {
		return nil, err
	}
	db := &DB{settings: eff}
	cache := pebble.NewCache(mustInt(eff["cache_size"]))
	defer cache.Unref() // the DB holds its own reference
	o.Cache = cache
	o.EventListener = &pebble.EventListener{
		WriteStallBegin: func(pebble.WriteStallBeginInfo) {
			db.stallStart.Store(time.Now().UnixNano())
			db.stalls.Add(1)
		},
		WriteStallEnd: func() {
			if t0 := db.stallStart.Swap(0); t0 != 0 {
				db.stallNanos.Add(time.Now().UnixNano() - t0)
			}
		},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebble: data dir: %w", err)
	}
	if db.db, err = pebble.Open(dir, o); err != nil {
		return nil, fmt.Errorf("pebble: open %s: %w", dir, err)
	}
	return db, nil
}

func mustInt(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic("pebble: unchecked setting " + v)
	}
	return n
}

// DB is an open Pebble store.
type DB struct {
	db       *pebble.DB
	settings map[string]string
	// Write stalls reported by Pebble's event listener.
	stallStart, stallNanos, stalls atomic.Int64
	// failed holds the error after Pebble panicked (it panics when its WAL
	// cannot be written, e.g. on a full disk); the store is unusable then.
	failed atomic.Pointer[error]
}

// guard turns a Pebble panic into *err and marks the store failed, so the
// runner stops the step (Died) instead of the process crashing.
func (db *DB) guard(err *error) {
	if r := recover(); r != nil {
		e := fmt.Errorf("pebble: %v", r)
		db.failed.CompareAndSwap(nil, &e)
		*err = e
	}
}

// Died returns the error that made the store unusable, or nil.
func (db *DB) Died() error {
	if e := db.failed.Load(); e != nil {
		return *e
	}
	return nil
}

var _ engine.KV = (*DB)(nil)

// Info reports the Pebble version and the effective settings.
func (db *DB) Info(ctx context.Context) (engine.Info, error) {
	s := map[string]string{}
	for k, v := range db.settings {
		s[k] = v
	}
	// Pebble's WAL is switched for the whole store, not per write.
	s["disable_wal_per_write"] = "ignored"
	return engine.Info{Engine: "pebble", Version: version(), Build: module + " " + version() + " (pure Go)", Settings: s}, nil
}

// Close closes the store. After a panic Pebble cannot be closed (Close
// blocks on its broken commit pipeline), so the store's open files stay
// open until benchlab exits; the caller still removes the data dir.
func (db *DB) Close() (err error) {
	if e := db.Died(); e != nil {
		return e
	}
	defer db.guard(&err)
	return db.db.Close()
}

func writeOpts(wo engine.WriteOptions) *pebble.WriteOptions {
	if wo.Sync {
		return pebble.Sync
	}
	return pebble.NoSync
}

// Put writes one key. Pebble cannot skip its WAL per write, so DisableWAL is
// ignored (Info says so).
func (db *DB) Put(key, value []byte, wo engine.WriteOptions) (err error) {
	if e := db.Died(); e != nil {
		return e
	}
	defer db.guard(&err)
	return db.db.Set(key, value, writeOpts(wo))
}

// Get appends key's value to buf.
func (db *DB) Get(key, buf []byte) ([]byte, bool, error) {
	v, closer, err := db.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return buf, false, nil
	}
	if err != nil {
		return buf, false, err
	}
	buf = append(buf, v...)
	return buf, true, closer.Close()
}

// Lookup finds key without copying its value out.
func (db *DB) Lookup(key []byte) (int, bool, error) {
	v, closer, err := db.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n := len(v)
	return n, true, closer.Close()
}

// MultiGet looks the keys up one after another: Pebble has no batched lookup.
func (db *DB) MultiGet(keys [][]byte) (int, error) {
	found := 0
	for _, k := range keys {
		_, closer, err := db.db.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return found, err
		}
		found++
		closer.Close()
	}
	return found, nil
}

// NewIterator opens an iterator over all keys.
func (db *DB) NewIterator() (engine.Iterator, error) {
	it, err := db.db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	return &iterator{it: it}, nil
}

type iterator struct {
	it *pebble.Iterator
}

func (i *iterator) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

func (i *iterator) First() bool   { return i.it.First() }
func (i *iterator) Last() bool    { return i.it.Last() }
func (i *iterator) Next() bool    { return i.it.Next() }
func (i *iterator) Prev() bool    { return i.it.Prev() }
func (i *iterator) Key() []byte   { return i.it.Key() }
func (i *iterator) Value() []byte { return i.it.Value() }
func (i *iterator) Close() error  { return i.it.Close() }

type batch struct{ b *pebble.Batch }

func (b batch) Put(key, value []byte) { _ = b.b.Set(key, value, nil) }
func (b batch) Count() int            { return int(b.b.Count()) }
func (b batch) Reset()                { b.b.Reset() }
func (b batch) Close() error          { return b.b.Close() }

// NewBatch returns an empty batch.
func (db *DB) NewBatch() engine.Batch { return batch{db.db.NewBatch()} }

// Write applies a batch from NewBatch.
func (db *DB) Write(b engine.Batch, wo engine.WriteOptions) (err error) {
	pb, ok := b.(batch)
	if !ok {
		return fmt.Errorf("pebble: batch of type %T", b)
	}
	if e := db.Died(); e != nil {
		return e
	}
	defer db.guard(&err)
	return db.db.Apply(pb.b, writeOpts(wo))
}

// Flush flushes the memtables and waits for it.
func (db *DB) Flush(ctx context.Context) (err error) {
	if e := db.Died(); e != nil {
		return e
	}
	defer db.guard(&err)
	return db.db.Flush()
}

// WaitForCompactions polls Pebble's metrics until no flush or compaction runs
// and no compaction debt is left, or until the engine has stayed idle for a
// second with debt below a compaction's worth (Pebble may leave a small debt
// that no compaction will pay).
func (db *DB) WaitForCompactions(ctx context.Context) error {
	idleSince := time.Time{}
	for {
		m := db.db.Metrics()
		busy := m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
		switch {
		case busy:
			idleSince = time.Time{}
		case m.Compact.EstimatedDebt == 0:
			return nil
		case idleSince.IsZero():
			idleSince = time.Now()
		case time.Since(idleSince) > time.Second:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stats reads the LSM facts from Pebble's metrics.
func (db *DB) Stats(ctx context.Context) (engine.LSMStats, error) {
	m := db.db.Metrics()
	var s engine.LSMStats
	var flushed, compacted int64
	for i := range m.Levels {
		l := &m.Levels[i]
		s.SizeBytes += l.TablesSize
		flushed += int64(l.TableBytesFlushed)
		compacted += int64(l.TableBytesCompacted)
		s.CompactReadBytes += int64(l.TableBytesRead)
	}
	s.L0Files = m.Levels[0].TablesCount
	s.FlushBytes, s.CompactWriteBytes = flushed, compacted
	s.IngestBytes = int64(m.WAL.BytesIn)
	if s.IngestBytes == 0 {
		s.IngestBytes = flushed
	}
	s.WriteAmp = engine.WriteAmpOf(s.IngestBytes, flushed, compacted)
	s.Compactions = m.Compact.Count
	s.StallMicros, s.Stalls = db.stalled()/1000, db.stalls.Load()
	return s, nil
}

// quietLogger drops Pebble's informational lines and keeps errors on stderr.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

var versionOnce = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "unknown"
})

func version() string { return versionOnce() }

// ReadStats reads Pebble's cumulative counters (engine.StatsReader), named
// "pebble.<counter>": bytes the writes put in the WAL (wal_bytes_in) and
// the WAL's own bytes written (wal_bytes_written), flushes and compactions
// and the table bytes they wrote and read, block cache hits and misses, and
// the write stalls and their microseconds. They are read from the process's
// own Pebble, exact at the moment.
func (db *DB) ReadStats(ctx context.Context) (map[string]float64, error) {
	return db.counters(db.db.Metrics()), nil
}

// counters are ReadStats' counters from one read of Pebble's metrics.
func (db *DB) counters(m *pebble.Metrics) map[string]float64 {
	var flushed, compacted, read uint64
	for i := range m.Levels {
		l := &m.Levels[i]
		flushed += l.TableBytesFlushed
		compacted += l.TableBytesCompacted
		read += l.TableBytesRead
	}
	return map[string]float64{
		"pebble.wal_bytes_in":        float64(m.WAL.BytesIn),
		"pebble.wal_bytes_written":   float64(m.WAL.BytesWritten),
		"pebble.flushes":             float64(m.Flush.Count),
		"pebble.flush_bytes":         float64(flushed),
		"pebble.compactions":         float64(m.Compact.Count),
		"pebble.compact_write_bytes": float64(compacted),
		"pebble.compact_read_bytes":  float64(read),
		"pebble.block_cache_hits":    float64(m.BlockCache.Hits),
		"pebble.block_cache_misses":  float64(m.BlockCache.Misses),
		"pebble.stalls":              float64(db.stalls.Load()),
		"pebble.stall_us":            float64(db.stalled() / 1000),
	}
}

// stalled is the nanoseconds writes have been stalled so far, the stall
// under way included.
func (db *DB) stalled() int64 {
	stall := db.stallNanos.Load()
	if t0 := db.stallStart.Load(); t0 != 0 {
		stall += time.Now().UnixNano() - t0
	}
	return stall
}

// ReadInternals reads ReadStats' counters and Pebble's gauges
// (engine.InternalsReader), named "pebble.<gauge>": L0's files and
// sublevels (its read amplification), the compaction debt (bytes
// compactions must still rewrite to bring the levels in shape: RocksDB's
// pending compaction bytes), compactions under way, the memtables and
// their bytes, and whether writes are stalled now (1) or not (0).
func (db *DB) ReadInternals(ctx context.Context) (engine.Internals, error) {
	m := db.db.Metrics()
	counters := db.counters(m)
	stalled := 0.0
	if db.stallStart.Load() != 0 {
		stalled = 1
	}
	return engine.Internals{Counters: counters, Gauges: map[string]float64{
		"pebble.l0_files":                 float64(m.Levels[0].TablesCount),
		"pebble.l0_sublevels":             float64(m.Levels[0].Sublevels),
		"pebble.pending_compaction_bytes": float64(m.Compact.EstimatedDebt),
		"pebble.compactions_running":      float64(m.Compact.NumInProgress),
		"pebble.memtables":                float64(m.MemTable.Count),
		"pebble.memtable_bytes":           float64(m.MemTable.Size),
		"pebble.write_stalled":            stalled,
	}}, nil
}
