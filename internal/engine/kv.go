package engine

import (
	"context"
	"errors"
	"time"
)

// KV is the view of a DB that stores ordered byte keys, as RocksDB and Pebble
// do. It offers what db_bench's benchmarks need (docs/method.md 4.1) and nothing
// more. Every method may be called from several goroutines at once.
type KV interface {
	DB
	// Put writes one key.
	Put(key, value []byte, wo WriteOptions) error
	// Get appends the value of key to buf and returns it, with found false
	// (and buf unchanged) when the key does not exist.
	Get(key, buf []byte) (value []byte, found bool, err error)
	// MultiGet looks keys up together (db_bench's multireadrandom with
	// --multiread_batched) and returns how many were found.
	MultiGet(keys [][]byte) (found int, err error)
	// NewIterator opens an iterator over the whole key space; each worker
	// keeps its own.
	NewIterator() (Iterator, error)
	// NewBatch returns an empty write batch for Write.
	NewBatch() Batch
	// Write applies a batch atomically.
	Write(b Batch, wo WriteOptions) error
	// Flush writes the memtables to sorted files and waits until it is done.
	Flush(ctx context.Context) error
	// WaitForCompactions returns once no compaction is running or pending
	// (db_bench's waitforcompaction), or when ctx ends.
	WaitForCompactions(ctx context.Context) error
	// Stats reads the engine's own LSM counters.
	Stats(ctx context.Context) (LSMStats, error)
}

// MemtableChooser is implemented by KV engines whose memtable representation
// can be chosen, as db_bench's --memtablerep: the kv suite's fillseq loads
// into a vector memtable and the steps after it use the skip list (docs/method.md
// 4.1 step 1).
type MemtableChooser interface {
	// UseMemtable flushes the memtables and reopens the database with the
	// representation rep ("vector" or "skip_list"). Nothing else may use
	// the database meanwhile.
	UseMemtable(ctx context.Context, rep string) error
}

// L0Compactor is implemented by KV engines that can compact the files of
// level 0 alone into the next level with data, as db_bench's compact0 does
// in the flush-and-wait step (docs/method.md 4.1 step 5).
type L0Compactor interface {
	// CompactL0 returns how many files it compacted and into which level
	// (0 and -1 when L0 was empty or no level below it holds data).
	CompactL0(ctx context.Context) (files, level int, err error)
}

// Lookuper is implemented by KV engines that can find a key without copying
// its value out, as db_bench's readrandom does (it pins the value and counts
// its size); the kv suite's readrandom then uses it instead of Get.
type Lookuper interface {
	// Lookup returns the size of key's value, with found false when the key
	// does not exist.
	Lookup(key []byte) (size int, found bool, err error)
}

// BatchLookuper is implemented by KV engines called through cgo that can look
// up many keys in one call, timing each lookup themselves: the crossing into
// C, which costs about as much as the rest of benchlab's work per lookup, is
// then paid once per batch (db_bench's loop makes no such crossing). The kv
// suite's readrandom uses it when the step is neither paced nor bounded.
type BatchLookuper interface {
	// LookupBatch looks up the keys held back to back in keys, keySize
	// bytes each, without copying values out, and stores the duration of
	// each lookup in lat, in nanoseconds (one clock read per lookup: each
	// lasts from the end of the one before). It returns how many keys it
	// looked up and how many it found; an error ends the batch at the
	// failed key, which n counts.
	LookupBatch(keys []byte, keySize int, lat []int64) (n, found int, err error)
}

// WriteOptions are the per-write options db_bench varies.
type WriteOptions struct {
	// DisableWAL skips the write-ahead log (db_bench --disable_wal, used by
	// fillseq). Engines whose WAL cannot be switched per write say so in
	// their Info settings and ignore it.
	DisableWAL bool
	// Sync waits for the write to reach storage (--sync).
	Sync bool
}

// Iterator walks keys in order. Key and Value are valid until the next move.
type Iterator interface {
	// SeekGE positions at the first key >= key (RocksDB's Seek, which
	// db_bench's seekrandom uses in both directions) and reports whether
	// the iterator is valid.
	SeekGE(key []byte) bool
	// First and Last position at the ends of the key space.
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Key() []byte
	Value() []byte
	Close() error
}

// Batch collects writes applied together by KV.Write.
type Batch interface {
	Put(key, value []byte)
	// Count is the number of writes in the batch.
	Count() int
	// Reset empties the batch for reuse.
	Reset()
	Close() error
}

// LSMStats are the facts about an LSM tree that the db_bench reports carry
// (docs/method.md 4.3): size, write amplification, compaction IO and stalls. A
// counter an engine does not keep is -1.
type LSMStats struct {
	// SizeBytes is the size of the live sorted files (lsm_sz).
	SizeBytes int64
	// L0Files is the number of files in level 0.
	L0Files int64
	// IngestBytes is what the user wrote (WAL bytes, or flushed bytes when
	// the WAL is off); FlushBytes what flushes wrote; CompactReadBytes and
	// CompactWriteBytes what compactions read and wrote (c_wgb).
	IngestBytes, FlushBytes, CompactReadBytes, CompactWriteBytes int64
	// WriteAmp is (flush + compaction writes) / ingest, as the newer
	// benchmark.sh computes w_amp.
	WriteAmp float64
	// StallMicros is the time writes were stalled or slowed; Stalls counts
	// stall events where the engine counts them.
	StallMicros, Stalls int64
	// Compactions is the number of compactions finished.
	Compactions int64
}

// Facts returns the stats as named numbers, with units in the names, for logs
// and stores.
func (s LSMStats) Facts() map[string]float64 {
	return map[string]float64{
		"lsm_bytes": float64(s.SizeBytes), "l0_files": float64(s.L0Files),
		"ingest_bytes": float64(s.IngestBytes), "flush_bytes": float64(s.FlushBytes),
		"compact_read_bytes": float64(s.CompactReadBytes), "compact_write_bytes": float64(s.CompactWriteBytes),
		"w_amp": s.WriteAmp, "stall_us": float64(s.StallMicros), "stalls": float64(s.Stalls),
		"compactions": float64(s.Compactions),
	}
}

// WriteAmpOf computes w_amp the way the newer benchmark.sh does: (flush +
// compaction bytes written) / bytes ingested; 0 when nothing was ingested.
func WriteAmpOf(ingest, flush, compactWrite int64) float64 {
	if ingest <= 0 {
		return 0
	}
	return float64(flush+compactWrite) / float64(ingest)
}

// StepRunner is implemented by DBs that run whole benchmark steps in their own
// process with their own threads (db_bench), so the runner's workers cannot
// drive them. A suite that knows the step's db_bench form hands it over as a
// KVStep; the result carries what the tool itself measured.
type StepRunner interface {
	DB
	RunStep(ctx context.Context, s KVStep) (KVStepResult, error)
}

// StepTool is implemented by drivers whose databases are StepRunners: every
// measured step runs in an outside program, with its own threads, rather
// than in benchlab's workers. Tool names the program, so that options only
// benchlab's workers can honour (an open-loop rate, an event limit) are
// refused for such a target before anything runs.
type StepTool interface {
	Tool() string
}

// KVStep is one db_bench invocation: a step of the kv suite in db_bench's terms.
type KVStep struct {
	// Name is the kv suite's step name ("readrandom", "fwdrangewhilewriting").
	Name string
	// Benchmarks is db_bench's --benchmarks list, in order.
	Benchmarks []string
	// Threads is --threads; Duration is --duration (0: run Num operations).
	Threads  int
	Duration time.Duration
	// Overrun is how long past Duration the tool may run before it is
	// stopped (SIGTERM, then SIGKILL, to its process group) and the step
	// fails: the runner gives its step's overrun bound, which follows the
	// operation timeout (workload.op_timeout). 0: the engine's own bound.
	// A step of no Duration (a load of so many keys) has no time to overrun
	// and keeps the engine's bound for a whole run.
	Overrun time.Duration
	// Flags are further db_bench flags without the leading dashes, in order
	// (key "num", value "1000000"). The engine adds --db and its settings.
	Flags [][2]string
}

// KVStepResult is what a StepRunner measured for one step.
type KVStepResult struct {
	// Ops and Seconds are the operations done and the measured time;
	// OpsPerSec and MicrosPerOp are the tool's own figures.
	Ops                    int64
	Seconds                float64
	OpsPerSec, MicrosPerOp float64
	// Latency percentiles and maximum of one operation.
	P50, P75, P99, P999, P9999, Max time.Duration
	// LSM holds the facts from the tool's compaction stats after the step.
	LSM LSMStats
	// Output is the tail of the tool's output, for errors and logs.
	Output string
}

// ErrNoKV is returned by KV workloads given a DB that has no KV view.
var ErrNoKV = errors.New("the engine has no key-value view")
