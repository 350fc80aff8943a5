//go:build !rocksdb

package rocksdb

import (
	"context"
	"errors"

	"benchlab/internal/engine"
)

// ErrNotBuilt says this binary was built without the rocksdb tag.
var ErrNotBuilt = errors.New("this benchlab was built without RocksDB; rebuild with `go build -tags rocksdb ./cmd/benchlab` (needs librocksdb-dev), or use engine db_bench")

func init() { engine.Register(Driver{}) }

// Driver stands in for the RocksDB engine in builds without the rocksdb tag,
// so that `benchlab list` says what is missing and specs fail with a usage
// error instead of "unknown engine".
type Driver struct{}

// Name returns "rocksdb".
func (Driver) Name() string { return "rocksdb" }

// Summary says the engine is not in this binary.
// Kind says the engine is a key-value store.
func (Driver) Kind() engine.Kind { return engine.KindKV }

func (Driver) Summary() string {
	return "NOT IN THIS BINARY: build with -tags rocksdb (librocksdb-dev) for in-process RocksDB; db_bench works without it"
}

// Settings accepts any setting; the target fails in CheckTarget anyway.
func (Driver) Settings() []engine.Setting { return nil }

// CheckTarget always fails with ErrNotBuilt.
func (Driver) CheckTarget(engine.Target) error { return ErrNotBuilt }

// Open always fails with ErrNotBuilt.
func (Driver) Open(context.Context, engine.Target, string) (engine.DB, error) {
	return nil, ErrNotBuilt
}
