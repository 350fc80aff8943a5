package sqlite

import (
	"context"
	"testing"

	"benchlab/internal/engine"
)

// TestInternals reads the WAL's gauges and counter around real writes: each
// committed insert of a 4 KiB row adds WAL frames; a TRUNCATE checkpoint
// copies them all back and empties the file; the next write restarts the
// log, which grows the checkpoint sequence number by one. In rollback
// journal mode there is no WAL and nothing to read.
func TestInternals(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"wal_autocheckpoint": "0"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := db.(engine.InternalsReader)
	w, err := db.(*DB).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	insert := func(n int) {
		t.Helper()
		for range n {
			if _, err := w.Exec(ctx, "INSERT INTO t (v) VALUES (randomblob(4000))"); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func() engine.Internals {
		t.Helper()
		x, err := in.ReadInternals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	insert(1)
	a := read()
	insert(10)
	b := read()
	if b.Gauges["sqlite.wal_frames"] < a.Gauges["sqlite.wal_frames"]+10 || b.Gauges["sqlite.wal_bytes"] <= a.Gauges["sqlite.wal_bytes"] {
		t.Errorf("10 inserts of 4 KB: WAL frames %v -> %v, bytes %v -> %v; want 10 frames more and a larger file",
			a.Gauges["sqlite.wal_frames"], b.Gauges["sqlite.wal_frames"], a.Gauges["sqlite.wal_bytes"], b.Gauges["sqlite.wal_bytes"])
	}
	if b.Gauges["sqlite.wal_unbackfilled"] != b.Gauges["sqlite.wal_frames"] {
		t.Errorf("no checkpoint ran: %v frames not copied back of %v", b.Gauges["sqlite.wal_unbackfilled"], b.Gauges["sqlite.wal_frames"])
	}
	if _, err := w.Exec(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	c := read()
	if c.Gauges["sqlite.wal_bytes"] != 0 || c.Gauges["sqlite.wal_unbackfilled"] != 0 {
		t.Errorf("after a TRUNCATE checkpoint: WAL %v bytes, %v frames not copied back; want 0 and 0",
			c.Gauges["sqlite.wal_bytes"], c.Gauges["sqlite.wal_unbackfilled"])
	}
	insert(1)
	d := read()
	if got := d.Counters["sqlite.wal_restarts"] - b.Counters["sqlite.wal_restarts"]; got != 1 {
		t.Errorf("WAL restarts grew by %v over a checkpoint and a write, want 1 (%v -> %v)", got,
			b.Counters["sqlite.wal_restarts"], d.Counters["sqlite.wal_restarts"])
	}

	rollback, err := Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"journal_mode": "delete"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rollback.Close()
	x, err := rollback.(engine.InternalsReader).ReadInternals(ctx)
	if err != nil || len(x.Counters) != 0 || len(x.Gauges) != 0 {
		t.Errorf("rollback journal: %+v %v; want nothing read", x, err)
	}
}
