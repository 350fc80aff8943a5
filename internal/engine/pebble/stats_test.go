package pebble

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/runner"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// putter is a worker whose every operation puts a new 8-byte key with a
// 100-byte value. done, when set, counts the puts that returned.
type putter struct {
	kv   engine.KV
	n    uint64
	key  [8]byte
	val  [100]byte
	done *atomic.Int64
}

func (p *putter) Op(context.Context) (workload.Tally, error) {
	p.n++
	binary.BigEndian.PutUint64(p.key[:], p.n)
	err := p.kv.Put(p.key[:], p.val[:], engine.WriteOptions{})
	if p.done != nil {
		p.done.Add(1)
	}
	return workload.Tally{Statements: 1}, err
}

func (p *putter) Close() error { return nil }

// watchedReads is a Pebble DB whose counter reads note how many puts had
// returned just before and just after each read, so that a test knows the
// puts between two reads whenever the runner takes them.
type watchedReads struct {
	*DB
	done  *atomic.Int64
	mu    sync.Mutex
	reads [][2]int64
}

func (w *watchedReads) ReadStats(ctx context.Context) (map[string]float64, error) {
	before := w.done.Load()
	m, err := w.DB.ReadStats(ctx)
	w.mu.Lock()
	w.reads = append(w.reads, [2]int64{before, w.done.Load()})
	w.mu.Unlock()
	return m, err
}

// walBatch is the WAL's bytes per put: its key and value (108), the batch's
// 12-byte header and 3 bytes of kind and lengths.
const walBatch = 123

// TestEngineStats measures puts of 108 bytes of key and value for 300 ms:
// Pebble's counters are among the step's facts, and the bytes its WAL took
// in between the runner's two reads are one batch (123 bytes) per put
// returned between them. The runner reads the counters when its tick
// goroutine gets to it, after the measured part's start, so the test
// counts the puts around each read itself (one put in flight at a read may
// be in the WAL or not): this holds however slowly the machine runs,
// where puts per measured statement drifted with the read's delay.
func TestEngineStats(t *testing.T) {
	opened, err := Driver{}.Open(context.Background(), engine.Target{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	db := &watchedReads{DB: opened.(*DB), done: new(atomic.Int64)}
	st := workload.Step{Name: "put", Duration: 300 * time.Millisecond,
		NewWorker: func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
			return &putter{kv: db, done: db.done}, nil
		}}
	res, err := runner.Measure(context.Background(), db, st, 1, 1, runner.Options{})
	if err != nil || res.Statements == 0 || res.Eff == nil {
		t.Fatalf("put step: %d puts, efficiency %v, %v", res.Statements, res.Eff, err)
	}
	v, ok := res.Facts[store.EngineStatFact("pebble.wal_bytes_in")]
	if !ok {
		t.Fatalf("no pebble.wal_bytes_in in %v", res.Facts)
	}
	if len(db.reads) < 2 {
		t.Fatalf("%d reads of the counters, want one at each end of the measured part", len(db.reads))
	}
	first, last := db.reads[0], db.reads[len(db.reads)-1]
	// At most every put returned by the end read and not yet returned
	// before the start one (plus the one in flight), at least those
	// returned between the two.
	lo, hi := float64(walBatch*(last[0]-first[1]-1)), float64(walBatch*(last[1]-first[0]+1))
	if v < lo || v > hi || last[0]-first[1] < 1 {
		t.Errorf("%.0f WAL bytes in between the reads, want %d bytes for each of the %d-%d puts then (%.0f-%.0f)",
			v, walBatch, last[0]-first[1], last[1]-first[0], lo, hi)
	}
	if total := db.done.Load(); int64(res.Statements) > total {
		t.Errorf("%d puts measured of %d made", res.Statements, total)
	}
	t.Logf("%.0f WAL bytes in over %d-%d puts between the reads (%d measured)", v, last[0]-first[1], last[1]-first[0],
		res.Statements)
	for _, name := range []string{"pebble.flushes", "pebble.compactions", "pebble.block_cache_misses", "pebble.stalls"} {
		if _, ok := res.Facts[store.EngineStatFact(name)]; !ok {
			t.Errorf("no %s among the facts", name)
		}
	}
}

// TestInternals reads Pebble's gauges around a flush: before it, the rows
// in the memtable and no L0 file; after it, one L0 file, and no write
// stalled at either read.
func TestInternals(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)
	p := &putter{kv: kv}
	for range 1000 {
		if _, err := p.Op(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read := func() engine.Internals {
		t.Helper()
		x, err := db.(engine.InternalsReader).ReadInternals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a := read()
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b := read()
	if a.Gauges["pebble.l0_files"] != 0 || b.Gauges["pebble.l0_files"] != 1 {
		t.Errorf("L0 files %v before the flush and %v after, want 0 and 1", a.Gauges["pebble.l0_files"], b.Gauges["pebble.l0_files"])
	}
	if a.Gauges["pebble.memtable_bytes"] < 100_000 || a.Gauges["pebble.memtables"] < 1 {
		t.Errorf("memtables %v of %v bytes with 1000 puts of 108 bytes unflushed", a.Gauges["pebble.memtables"], a.Gauges["pebble.memtable_bytes"])
	}
	if a.Gauges["pebble.write_stalled"] != 0 || b.Gauges["pebble.write_stalled"] != 0 {
		t.Errorf("write stalled %v, %v; want 0", a.Gauges["pebble.write_stalled"], b.Gauges["pebble.write_stalled"])
	}
	if b.Counters["pebble.flushes"] != a.Counters["pebble.flushes"]+1 {
		t.Errorf("flushes %v then %v, want one more", a.Counters["pebble.flushes"], b.Counters["pebble.flushes"])
	}
}
