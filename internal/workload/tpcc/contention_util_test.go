package tpcc

import (
	"context"
	"io"
	"strconv"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// openServer starts a real server of engine eng with settings, its log
// kept in the test's temp dir; the caller closes it.
func openServer(ctx context.Context, t *testing.T, eng string, settings map[string]string) engine.DB {
	t.Helper()
	logs := t.TempDir()
	drv, _ := engine.Lookup(eng)
	db, err := drv.Open(ctx, engine.Target{Name: "rr", Engine: eng, Settings: settings,
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// loadAndCount runs load (a plan's first step) on db and returns a
// connection, which the caller closes, and a count of the orders the
// database holds, read on it.
func loadAndCount(ctx context.Context, t *testing.T, db engine.DB, load workload.Step) (engine.Conn, func() int64) {
	t.Helper()
	if _, err := load.Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	c, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() int64 {
		rows, err := c.Values(ctx, "SELECT count(*) FROM oorder")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(rows[0][0], 10, 64)
		return n
	}
}
