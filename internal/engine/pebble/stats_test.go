package pebble

import (
	"context"
	"encoding/binary"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/runner"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// putter is a worker whose every operation puts a new 8-byte key with a
// 100-byte value.
type putter struct {
	kv  engine.KV
	n   uint64
	key [8]byte
	val [100]byte
}

func (p *putter) Op(context.Context) (workload.Tally, error) {
	p.n++
	binary.BigEndian.PutUint64(p.key[:], p.n)
	return workload.Tally{Statements: 1}, p.kv.Put(p.key[:], p.val[:], engine.WriteOptions{})
}

func (p *putter) Close() error { return nil }

// walBatch is the WAL's bytes per put: its key and value (108), the batch's
// 12-byte header and 3 bytes of kind and lengths.
const walBatch = 123

// TestEngineStats measures 20,000 puts of 108 bytes of key and value, a
// step that ends by its count, not the clock: Pebble's counters are among
// the step's facts, and the bytes its WAL took in are one batch of 123
// bytes per put, exactly. (A 300 ms step measured a put count that drifted
// from the WAL's by a few percent on a loaded machine, and none at all
// when the worker got no CPU before its end.) Without a warm-up the
// runner reads the counters before the first put and after the last.
func TestEngineStats(t *testing.T) {
	db, err := Driver{}.Open(context.Background(), engine.Target{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const puts = 20_000
	st := workload.Step{Name: "put", Roles: []workload.Role{{Name: "put", Ops: puts,
		NewWorker: func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
			return &putter{kv: db.(engine.KV)}, nil
		}}}}
	res, err := runner.Measure(context.Background(), db, st, 1, 1, runner.Options{})
	if err != nil || res.Statements != puts || res.Eff == nil {
		t.Fatalf("put step: %d puts, efficiency %v, %v; want %d", res.Statements, res.Eff, err, puts)
	}
	v, ok := res.Facts[store.EngineStatFact("pebble.wal_bytes_in")]
	if !ok {
		t.Fatalf("no pebble.wal_bytes_in in %v", res.Facts)
	}
	if v != walBatch*puts {
		t.Errorf("%.0f WAL bytes in over %d puts (%.2f each); want %d each", v, res.Statements, v/puts, walBatch)
	}
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
