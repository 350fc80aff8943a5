// Package enginetest helps tests open real engines: one call opens a target
// on a fresh temp dir and closes it when the test ends.
package enginetest

import (
	"context"
	"testing"

	"benchlab/internal/engine"
)

// Open opens target with its engine's driver (registered by the test's
// imports) on a temp dir of tb, and closes it when the test ends. A failure
// ends the test.
func Open(tb testing.TB, target engine.Target) engine.DB {
	tb.Helper()
	drv, ok := engine.Lookup(target.Engine)
	if !ok {
		tb.Fatalf("engine %q is not registered; import its package", target.Engine)
	}
	db, err := drv.Open(context.Background(), target, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Connect opens a connection to db (an engine.SQL) and closes it when the
// test ends, before db itself. A failure ends the test.
func Connect(tb testing.TB, db engine.DB) engine.Conn {
	tb.Helper()
	sqldb, ok := db.(engine.SQL)
	if !ok {
		tb.Fatalf("%T takes no SQL connections", db)
	}
	conn, err := sqldb.Connect(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// AroundFlush reads db's internals (an engine.InternalsReader and
// engine.KV), flushes its memtables and reads them again: the gauges of an
// LSM engine before and after one flush. A failure ends the test.
func AroundFlush(tb testing.TB, db engine.DB) (before, after engine.Internals) {
	tb.Helper()
	ctx := context.Background()
	read := func() engine.Internals {
		tb.Helper()
		x, err := db.(engine.InternalsReader).ReadInternals(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		return x
	}
	before = read()
	if err := db.(engine.KV).Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	return before, read()
}
