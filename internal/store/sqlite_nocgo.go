//go:build !cgo

package store

// sqliteCode names the SQLite result codes the store reacts to.
type sqliteCode int

const (
	sqliteCorrupt sqliteCode = iota
	sqliteNotADB
	sqliteBusy
)

// sqliteIs is false: without cgo, go-sqlite3's driver opens nothing (its
// Open says that it needs cgo), so no SQLite error ever comes back; the
// PostgreSQL store works as built.
func sqliteIs(error, sqliteCode) bool { return false }
