//go:build rocksdb

package rocksdb

/*
#cgo CXXFLAGS: -std=c++17
#cgo LDFLAGS: -lrocksdb
#include <stdlib.h>
#include "compact0.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"benchlab/internal/engine"
)

var _ engine.L0Compactor = (*DB)(nil)

// compact0Tries bounds db_bench's retry of compact0, which waits for
// compaction and tries again while CompactFiles fails (its files may be in
// a running compaction).
const compact0Tries = 10

// CompactL0 compacts the files of L0 into the first non-empty level below
// it, as db_bench's compact0 does, and returns how many files it compacted
// and into which level (0 and -1 when there was nothing to do).
func (db *DB) CompactL0(ctx context.Context) (files, level int, err error) {
	for try := 1; ; try++ {
		var n, to C.int
		cerr := C.bl_compact0(C.uintptr_t(db.cdb), &n, &to)
		if cerr == nil {
			return int(n), int(to), nil
		}
		msg := C.GoString(cerr)
		C.free(unsafe.Pointer(cerr))
		if try == compact0Tries {
			return 0, int(to), fmt.Errorf("rocksdb: compact0 into L%d: %s", int(to), msg)
		}
		if err := db.WaitForCompactions(ctx); err != nil {
			return 0, int(to), err
		}
	}
}
