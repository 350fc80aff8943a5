//go:build cgo

package sqlite

import (
	"context"
	"testing"

	"benchlab/internal/engine"
)

// TestMemoryUsed reads a 4 MiB table through a connection with an 8 MiB page
// cache: SQLite's count of its own memory grows by at least the pages read,
// shows under the engine's name in engine.InProcessMemory, and falls back
// when the connection closes and frees its cache.
func TestMemoryUsed(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"cache_size": "-8192"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sql := db.(*DB)
	w, err := sql.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4096) INSERT INTO t SELECT i, randomblob(1000) FROM n",
	} {
		if _, err := w.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r, err := sql.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := MemoryUsed()
	if n, err := r.Query(ctx, "SELECT id, v FROM t"); err != nil || n != 4096 {
		t.Fatalf("read the table: %d rows, %v", n, err)
	}
	after := MemoryUsed()
	if after-before < 4<<20 {
		t.Errorf("reading 4 MiB into a connection's page cache raised SQLite's memory by %d bytes (%d to %d); want at least 4 MiB",
			after-before, before, after)
	}
	by, sum := engine.InProcessMemory()
	if by["sqlite"] < after-(1<<20) || sum < by["sqlite"] || engine.InProcessMemoryTotal() < by["sqlite"] {
		t.Errorf("engine.InProcessMemory = %v (sum %d); want sqlite's %d bytes", by, sum, after)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if closed := MemoryUsed(); after-closed < 4<<20 {
		t.Errorf("closing the connection freed %d bytes of SQLite's memory (%d to %d); want its 4 MiB cache back", after-closed, after, closed)
	}
}

// TestConnectionCache: cache_size is KiB when negative, pages of page_size
// when positive; unset settings take the engine's defaults (-65536: 64 MiB).
func TestConnectionCache(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want int64
	}{
		{nil, 64 << 20},
		{map[string]string{"cache_size": "-2000"}, 2000 << 10},
		{map[string]string{"cache_size": "100"}, 100 * 4096},
		{map[string]string{"cache_size": "100", "page_size": "8192"}, 100 * 8192},
	} {
		if got := (Driver{}).ConnectionCache(c.set); got != c.want {
			t.Errorf("ConnectionCache(%v) = %d, want %d", c.set, got, c.want)
		}
	}
}
