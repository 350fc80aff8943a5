//go:build rocksdb

package rocksdb

/*
#cgo LDFLAGS: -lrocksdb
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rocksdb/c.h"

// bl_result is what a lookup returns by value, so that no Go pointer to an
// error slot is passed (it would escape to the heap on every call).
typedef struct {
	long long n; // -1: missing; else the value's length
	char* err;   // malloc'ed by RocksDB; NULL when the lookup worked
} bl_result;

// bl_level sets RocksDB's perf level (perf_context counting and timing) for
// the calling thread. RocksDB keeps the level per thread and starts every
// thread at 2 (count), where db_bench sets 1 (off) in its threads; Go runs a
// goroutine on whichever thread is free, so every call that does the work of
// a measured operation sets it first. A thread-local copy makes the check a
// compare.
static inline void bl_level(int level) {
	static __thread int current;
	if (current != level) {
		rocksdb_set_perf_level(level);
		current = level;
	}
}

// bl_set_level is bl_level for Go, called before operations made of several
// calls (iterators, batches).
static void bl_set_level(int level) { bl_level(level); }

// bl_put writes one key in one call from Go, at the given perf level; it
// returns RocksDB's malloc'ed error or NULL.
static char* bl_put(uintptr_t db, uintptr_t wo, uintptr_t key, size_t klen, uintptr_t val, size_t vlen, int level) {
	char* err = NULL;
	bl_level(level);
	rocksdb_put((rocksdb_t*)db, (const rocksdb_writeoptions_t*)wo, (const char*)key, klen, (const char*)val, vlen, &err);
	return err;
}

// bl_get looks key up and, when buf is not 0, copies the value into buf if
// it fits, in one call from Go: grocksdb's GetPinned, Data and Destroy are
// three. The value's length may exceed cap: the caller grows buf and asks
// again. Pointers come as integers: they point into Go memory that the
// caller keeps alive (or into C memory, for the database and the read
// options), and cgo's pointer checks cost 4% of a lookup.
static bl_result bl_get(uintptr_t db, uintptr_t ro, uintptr_t key, size_t klen, uintptr_t buf, size_t cap,
                        int level) {
	bl_result r = {-1, NULL};
	bl_level(level);
	rocksdb_pinnableslice_t* p = rocksdb_get_pinned((rocksdb_t*)db, (const rocksdb_readoptions_t*)ro,
	                                                (const char*)key, klen, &r.err);
	if (r.err != NULL || p == NULL) return r;
	size_t n;
	const char* v = rocksdb_pinnableslice_value(p, &n);
	if (buf != 0 && n <= cap) memcpy((char*)buf, v, n);
	rocksdb_pinnableslice_destroy(p);
	r.n = (long long)n;
	return r;
}

// bl_batch is what a batch of lookups returns.
typedef struct {
	long long n, found;
	char* err; // malloc'ed by RocksDB; NULL when every lookup worked
} bl_batch;

static long long bl_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// bl_lookup_batch looks up count keys of klen bytes held back to back at
// keys, without copying values, and stores each lookup's duration in
// nanoseconds at lat: one clock read per lookup, each lasting from the end of
// the one before, as db_bench times its operations. It stops at the first
// error, counting the failed lookup in n.
static bl_batch bl_lookup_batch(uintptr_t db, uintptr_t ro, uintptr_t keys, size_t klen, size_t count, uintptr_t lat,
                                int level) {
	bl_batch r = {0, 0, NULL};
	long long* out = (long long*)lat;
	bl_level(level);
	long long prev = bl_now();
	for (size_t i = 0; i < count; i++) {
		rocksdb_pinnableslice_t* p = rocksdb_get_pinned((rocksdb_t*)db, (const rocksdb_readoptions_t*)ro,
		                                                (const char*)keys + i * klen, klen, &r.err);
		if (p != NULL) {
			r.found++;
			rocksdb_pinnableslice_destroy(p);
		}
		long long now = bl_now();
		out[i] = now - prev;
		prev = now;
		r.n++;
		if (r.err != NULL) break;
	}
	return r;
}

// bl_counted_get looks key up at the given perf level and returns how many
// key comparisons the calling thread's perf context counted for it (0 when
// the level counts nothing); for tests.
static uint64_t bl_counted_get(uintptr_t db, uintptr_t ro, uintptr_t key, size_t klen, int level) {
	rocksdb_perfcontext_t* pc = rocksdb_perfcontext_create();
	rocksdb_perfcontext_reset(pc);
	bl_result r = bl_get(db, ro, key, klen, 0, 0, level);
	if (r.err != NULL) free(r.err);
	uint64_t n = rocksdb_perfcontext_metric(pc, rocksdb_user_key_comparison_count);
	rocksdb_perfcontext_destroy(pc);
	return n;
}
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// cHandle returns the C object behind a grocksdb value whose first field is
// its C pointer (DB, ReadOptions in grocksdb v1.7.14); TestFastGet checks
// that lookups through it agree with grocksdb's own.
func cHandle[T any](v *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(v)) }

// addr is the address of b's first byte as an integer (0 when b has no
// capacity).
func addr(b []byte) C.uintptr_t {
	if cap(b) == 0 {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(b[:1]))))
}

// get is one bl_get call into buf's free capacity (none when copy is false).
func (db *DB) get(key, buf []byte, copy bool) (int64, error) {
	var dst C.uintptr_t
	free := buf[len(buf):cap(buf)]
	if copy {
		dst = addr(free)
	}
	r := C.bl_get(C.uintptr_t(db.cdb), C.uintptr_t(db.cro), addr(key), C.size_t(len(key)), dst, C.size_t(cap(free)),
		C.int(db.perfLevel))
	runtime.KeepAlive(key)
	runtime.KeepAlive(buf)
	if r.err != nil {
		return -1, takeError(r.err)
	}
	return int64(r.n), nil
}

// takeError turns an error RocksDB malloc'ed into a Go error and frees it.
func takeError(e *C.char) error {
	msg := C.GoString(e)
	C.free(unsafe.Pointer(e))
	return errors.New(msg)
}

// fastGet appends key's value to buf with one cgo call (two when buf must
// grow).
func (db *DB) fastGet(key, buf []byte) ([]byte, bool, error) {
	for {
		n, err := db.get(key, buf, true)
		if err != nil || n < 0 {
			return buf, false, err
		}
		if int(n) <= cap(buf)-len(buf) {
			return buf[:len(buf)+int(n)], true, nil
		}
		grown := make([]byte, len(buf), len(buf)+int(n))
		copy(grown, buf)
		buf = grown
	}
}

// lookup finds key and returns its value's size without copying the value
// out, as db_bench's readrandom pins it and counts its bytes.
func (db *DB) lookup(key []byte) (int, bool, error) {
	n, err := db.get(key, nil, false)
	if err != nil || n < 0 {
		return 0, false, err
	}
	return int(n), true, nil
}

// LookupBatch looks up keys (back to back, keySize bytes each) with one cgo
// call, storing each lookup's duration in lat (engine.BatchLookuper).
func (db *DB) LookupBatch(keys []byte, keySize int, lat []int64) (n, found int, err error) {
	count := min(len(lat), len(keys)/max(keySize, 1))
	if count == 0 {
		return 0, 0, nil
	}
	r := C.bl_lookup_batch(C.uintptr_t(db.cdb), C.uintptr_t(db.cro), addr(keys), C.size_t(keySize), C.size_t(count),
		C.uintptr_t(uintptr(unsafe.Pointer(&lat[0]))), C.int(db.perfLevel))
	runtime.KeepAlive(keys)
	runtime.KeepAlive(lat)
	if r.err != nil {
		err = takeError(r.err)
	}
	return int(r.n), int(r.found), err
}

// put writes one key with one cgo call through the write options wo.
func (db *DB) put(wo *grocksdb.WriteOptions, key, value []byte) error {
	e := C.bl_put(C.uintptr_t(db.cdb), C.uintptr_t(uintptr(cHandle(wo))), addr(key), C.size_t(len(key)),
		addr(value), C.size_t(len(value)), C.int(db.perfLevel))
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
	if e != nil {
		return takeError(e)
	}
	return nil
}

// setPerfLevel sets the perf level on the calling thread before an operation
// made of several calls.
func (db *DB) setPerfLevel() { C.bl_set_level(C.int(db.perfLevel)) }

// countedLookup looks key up at the database's perf level and returns the
// key comparisons RocksDB's perf context counted for it; tests use it to see
// that the perf_level setting reaches the thread that does the work.
func (db *DB) countedLookup(key []byte) uint64 {
	n := C.bl_counted_get(C.uintptr_t(db.cdb), C.uintptr_t(db.cro), addr(key), C.size_t(len(key)), C.int(db.perfLevel))
	runtime.KeepAlive(key)
	return uint64(n)
}

// handles caches the C objects behind the database and its read options.
func (db *DB) handles() {
	db.cdb, db.cro = uintptr(cHandle(db.db)), uintptr(cHandle(db.ro))
}
