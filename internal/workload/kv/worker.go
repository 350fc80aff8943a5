package kv

import (
	"context"
	"fmt"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// worker runs one kind of db_bench operation; it reuses its buffers, so an
// operation allocates nothing in benchlab.
type worker struct {
	kv       engine.KV
	lookup   engine.Lookuper // nil when kv cannot look up without copying
	kind     kind
	keySize  int
	valSize  int
	keys     keys
	vals     values
	key, buf []byte
	batch    [][]byte
	// next is the next key of fillseq; fillseq's single worker writes keys
	// 0, 1, 2, ... as db_bench does.
	next uint64
	// wo are the write options: fillseq skips the WAL (docs/method.md 4.1 step 1).
	wo engine.WriteOptions
}

func newWorker(kv engine.KV, k kind, p workload.Params, data []byte, keyRange int64, seed uint64) *worker {
	o := opts(p)
	w := &worker{kv: kv, kind: k, keySize: o.KeySize, valSize: o.ValueSize,
		keys: newKeys(seed, keyRange), vals: values{data: data}, key: make([]byte, o.KeySize)}
	w.lookup, _ = kv.(engine.Lookuper)
	if k == fillSeq {
		w.wo.DisableWAL = true
	}
	if k == multiRead {
		w.batch = make([][]byte, batchSize)
		for i := range w.batch {
			w.batch[i] = make([]byte, o.KeySize)
		}
	}
	return w
}

// Op runs one operation. Statements counts the keys asked for (a batch of
// multireadrandom is 10, as db_bench counts it), Rows the keys found or
// written.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) {
	switch w.kind {
	case fillSeq:
		EncodeKey(w.key, w.next)
		w.next++
		if err := w.kv.Put(w.key, w.vals.next(w.valSize), w.wo); err != nil {
			return workload.Tally{Statements: 1}, err
		}
		return workload.Tally{Statements: 1, Rows: 1}, nil
	case overwrite:
		EncodeKey(w.key, w.keys.next())
		if err := w.kv.Put(w.key, w.vals.next(w.valSize), w.wo); err != nil {
			return workload.Tally{Statements: 1}, err
		}
		return workload.Tally{Statements: 1, Rows: 1}, nil
	case readRandom:
		EncodeKey(w.key, w.keys.next())
		var found bool
		var err error
		if w.lookup != nil {
			_, found, err = w.lookup.Lookup(w.key)
		} else {
			w.buf, found, err = w.kv.Get(w.key, w.buf[:0])
		}
		if err != nil {
			return workload.Tally{Statements: 1}, err
		}
		if !found {
			return workload.Tally{Statements: 1}, nil
		}
		return workload.Tally{Statements: 1, Rows: 1}, nil
	case seekFwd, seekRev:
		return w.seek()
	case multiRead:
		for _, k := range w.batch {
			EncodeKey(k, w.keys.next())
		}
		found, err := w.kv.MultiGet(w.batch)
		return workload.Tally{Statements: len(w.batch), Rows: int64(found)}, err
	}
	panic(fmt.Sprintf("kv: unknown worker kind %d", w.kind))
}

// batchReader is readrandom's worker on an engine that looks keys up in
// batches (engine.BatchLookuper). The runner calls OpBatch where it can, and
// Op otherwise.
type batchReader struct {
	*worker
	batch  engine.BatchLookuper
	keyBuf []byte
}

// OpBatch looks up len(lat) random keys with one engine call, each timed by
// the engine.
func (r *batchReader) OpBatch(ctx context.Context, lat []int64) (int, workload.Tally, error) {
	size := r.keySize
	if need := len(lat) * size; len(r.keyBuf) != need {
		r.keyBuf = make([]byte, need)
	}
	for i := range lat {
		EncodeKey(r.keyBuf[i*size:(i+1)*size], r.keys.next())
	}
	n, found, err := r.batch.LookupBatch(r.keyBuf, size, lat)
	return n, workload.Tally{Statements: n, Rows: int64(found)}, err
}

// seek is db_bench's seekrandom at a random key.
func (w *worker) seek() (workload.Tally, error) { return w.seekAt(w.keys.next()) }

// seekAt is db_bench's seekrandom at key number k: open an iterator
// (db_bench opens one per seek unless --use_tailing_iterator, so each sees
// recent writes), Seek to the key (the first key >= it, in both directions,
// so a reverse range pays RocksDB's switch of direction as db_bench's does),
// then read a value and move, Next or Prev, seek_nexts times: 10 values.
func (w *worker) seekAt(k uint64) (workload.Tally, error) {
	it, err := w.kv.NewIterator()
	if err != nil {
		return workload.Tally{Statements: 1}, err
	}
	defer it.Close()
	EncodeKey(w.key, k)
	valid := it.SeekGE(w.key)
	var rows int64
	for j := 0; valid && j < seekNexts; j++ {
		// Touch the value as db_bench does (it copies key and value sizes).
		rows++
		_ = it.Value()
		if w.kind == seekRev {
			valid = it.Prev()
		} else {
			valid = it.Next()
		}
	}
	return workload.Tally{Statements: 1, Rows: rows}, nil
}

// Close has nothing to release: iterators live for one operation.
func (w *worker) Close() error { return nil }

// vectorLoader is fillseq's worker on an engine that loads into a vector
// memtable, as db_bench's fillseq does; when the step is over it flushes and
// goes back to the skip list that the later steps use.
type vectorLoader struct {
	*worker
	mc engine.MemtableChooser
}

// Close reopens the engine with the skip list memtable, outside the
// measured time.
func (v *vectorLoader) Close() error {
	if err := v.mc.UseMemtable(context.Background(), "skip_list"); err != nil {
		return fmt.Errorf("kv fillseq: %w", err)
	}
	return nil
}
