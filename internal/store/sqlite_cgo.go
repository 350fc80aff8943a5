//go:build cgo

package store

import (
	"errors"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// sqliteCode names the SQLite result codes the store reacts to.
type sqliteCode int

const (
	sqliteCorrupt sqliteCode = iota
	sqliteNotADB
	sqliteBusy
)

var sqliteCodes = map[sqliteCode]sqlite3.ErrNo{
	sqliteCorrupt: sqlite3.ErrCorrupt, sqliteNotADB: sqlite3.ErrNotADB, sqliteBusy: sqlite3.ErrBusy,
}

// sqliteIs reports whether err is SQLite's error of code c.
func sqliteIs(err error, c sqliteCode) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqliteCodes[c]
}
