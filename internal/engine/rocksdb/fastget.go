//go:build rocksdb

package rocksdb

/*
#cgo LDFLAGS: -lrocksdb
#include <stdlib.h>
#include <string.h>
#include "rocksdb/c.h"

// bl_get looks key up and copies its value into buf when it fits, in one
// call from Go: grocksdb's GetPinned, Data and Destroy are three.
// It returns -1 when the key is missing, else the value's length (which
// may exceed cap: the caller grows buf and asks again).
static long long bl_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* key, size_t klen,
                        char* buf, size_t cap, char** err) {
	rocksdb_pinnableslice_t* p = rocksdb_get_pinned(db, ro, key, klen, err);
	if (*err != NULL || p == NULL) return -1;
	size_t n;
	const char* v = rocksdb_pinnableslice_value(p, &n);
	if (n <= cap) memcpy(buf, v, n);
	rocksdb_pinnableslice_destroy(p);
	return (long long)n;
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// cHandle returns the C object behind a grocksdb value whose first field is
// its C pointer (DB, ReadOptions in grocksdb v1.7.14); TestFastGet checks
// that lookups through it agree with grocksdb's own.
func cHandle[T any](v *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(v)) }

// fastGet appends key's value to buf with one cgo call.
func fastGet(db *grocksdb.DB, ro *grocksdb.ReadOptions, key, buf []byte) ([]byte, bool, error) {
	cdb, cro := (*C.rocksdb_t)(cHandle(db)), (*C.rocksdb_readoptions_t)(cHandle(ro))
	var ckey *C.char
	if len(key) > 0 {
		ckey = (*C.char)(unsafe.Pointer(&key[0]))
	}
	for {
		free := buf[len(buf):cap(buf)]
		var dst *C.char
		if cap(free) > 0 {
			dst = (*C.char)(unsafe.Pointer(unsafe.SliceData(free[:1])))
		}
		var cerr *C.char
		n := int64(C.bl_get(cdb, cro, ckey, C.size_t(len(key)), dst, C.size_t(cap(free)), &cerr))
		if cerr != nil {
			msg := C.GoString(cerr)
			C.free(unsafe.Pointer(cerr))
			return buf, false, errors.New(msg)
		}
		if n < 0 {
			return buf, false, nil
		}
		if int(n) <= cap(free) {
			return buf[:len(buf)+int(n)], true, nil
		}
		grown := make([]byte, len(buf), len(buf)+int(n))
		copy(grown, buf)
		buf = grown
	}
}
