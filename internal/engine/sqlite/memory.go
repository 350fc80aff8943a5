package sqlite

// SQLite's allocator counts every byte it hands out (memory statistics are
// on: SQLITE_DEFAULT_MEMSTATUS is 1 in the amalgamation mattn/go-sqlite3
// compiles); the functions are that amalgamation's, linked into benchlab.

/*
extern long long sqlite3_memory_used(void);
*/
import "C"

import (
	"strconv"

	"benchlab/internal/engine"
)

func init() { engine.RegisterMemory("sqlite", MemoryUsed) }

// MemoryUsed is the bytes SQLite holds from its allocator now, in every
// connection of the process: page caches (cache_size per connection),
// schemas, prepared statements, and the results store when it is a SQLite
// file. Malloc's own overhead and fragmentation are not included.
func MemoryUsed() int64 { return int64(C.sqlite3_memory_used()) }

// ConnectionCache is the page cache one connection may hold: cache_size
// KiB when negative, cache_size pages of page_size bytes when positive.
func (Driver) ConnectionCache(set map[string]string) int64 {
	get := func(name string) int64 {
		v, ok := set[name]
		for _, s := range settings {
			if !ok && s.Name == name {
				v = s.Default
			}
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	if c := get("cache_size"); c < 0 {
		return -c * 1024
	}
	return get("cache_size") * get("page_size")
}
