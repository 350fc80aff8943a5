//go:build !cgo

// Package sqlite is the embedded SQLite engine. Its driver, mattn/go-sqlite3,
// compiles SQLite's C code into benchlab, so it needs cgo; a benchlab built
// with CGO_ENABLED=0 registers this stand-in, which names the engine and
// says at run time why it cannot open it.
package sqlite

import (
	"context"
	"errors"

	"benchlab/internal/engine"
)

func init() { engine.Register(Driver{}) }

// FileName is the database file created inside the data dir.
const FileName = "bench.db"

// errNoCgo is what every open says without cgo.
var errNoCgo = errors.New("sqlite: this benchlab was built without cgo (CGO_ENABLED=0); the sqlite engine compiles SQLite's C code and needs a cgo build")

// Driver is the SQLite engine's stand-in without cgo.
type Driver struct{}

// Name returns "sqlite".
func (Driver) Name() string { return "sqlite" }

// Kind says the engine is an SQL engine.
func (Driver) Kind() engine.Kind { return engine.KindSQL }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string { return "embedded SQLite (not in this build: it needs cgo)" }

// Settings returns nil: nothing can be opened.
func (Driver) Settings() []engine.Setting { return nil }

// Open fails: SQLite needs cgo.
func (Driver) Open(context.Context, engine.Target, string) (engine.DB, error) { return nil, errNoCgo }
