//go:build rocksdb

package rocksdb

/*
#cgo LDFLAGS: -lrocksdb
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rocksdb/c.h"

// bl_result is what a lookup returns by value, so that no Go pointer to an
// error slot is passed (it would escape to the heap on every call).
typedef struct {
	long long n; // -1: missing; else the value's length
	char* err;   // malloc'ed by RocksDB; NULL when the lookup worked
} bl_result;

// bl_get looks key up and, when buf is not 0, copies the value into buf if
// it fits, in one call from Go: grocksdb's GetPinned, Data and Destroy are
// three. The value's length may exceed cap: the caller grows buf and asks
// again. Pointers come as integers: they point into Go memory that the
// caller keeps alive, and cgo's pointer checks cost 4% of a lookup.
static bl_result bl_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, uintptr_t key, size_t klen,
                        uintptr_t buf, size_t cap) {
	bl_result r = {-1, NULL};
	rocksdb_pinnableslice_t* p = rocksdb_get_pinned(db, ro, (const char*)key, klen, &r.err);
	if (r.err != NULL || p == NULL) return r;
	size_t n;
	const char* v = rocksdb_pinnableslice_value(p, &n);
	if (buf != 0 && n <= cap) memcpy((char*)buf, v, n);
	rocksdb_pinnableslice_destroy(p);
	r.n = (long long)n;
	return r;
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
func get(db *grocksdb.DB, ro *grocksdb.ReadOptions, key, buf []byte, copy bool) (int64, error) {
	cdb, cro := (*C.rocksdb_t)(cHandle(db)), (*C.rocksdb_readoptions_t)(cHandle(ro))
	var dst C.uintptr_t
	free := buf[len(buf):cap(buf)]
	if copy {
		dst = addr(free)
	}
	r := C.bl_get(cdb, cro, addr(key), C.size_t(len(key)), dst, C.size_t(cap(free)))
	runtime.KeepAlive(key)
	runtime.KeepAlive(buf)
	if r.err != nil {
		msg := C.GoString(r.err)
		C.free(unsafe.Pointer(r.err))
		return -1, errors.New(msg)
	}
	return int64(r.n), nil
}

// fastGet appends key's value to buf with one cgo call (two when buf must
// grow).
func fastGet(db *grocksdb.DB, ro *grocksdb.ReadOptions, key, buf []byte) ([]byte, bool, error) {
	for {
		n, err := get(db, ro, key, buf, true)
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
func lookup(db *grocksdb.DB, ro *grocksdb.ReadOptions, key []byte) (int, bool, error) {
	n, err := get(db, ro, key, nil, false)
	if err != nil || n < 0 {
		return 0, false, err
	}
	return int(n), true, nil
}
