//go:build rocksdb

package rocksdb

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
)

func TestBadSettingsNameTheOption(t *testing.T) {
	for _, c := range []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"blockcache": "1"}, `unknown rocksdb setting "blockcache"`},
		{map[string]string{"cache_type": "hyper_clock_cache"}, "cache_type"},
		{map[string]string{"compression_type": "lz5"}, "compression_type"},
		{map[string]string{"max_bytes_for_level_multiplier": "x"}, "max_bytes_for_level_multiplier"},
	} {
		err := Driver{}.CheckTarget(engine.Target{Settings: c.settings})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error naming %s", c.settings, err, c.want)
		}
	}
}

func TestOpenPutGetStats(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"compression_type": "lz4", "max_bytes_for_level_multiplier": "32"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)
	for _, k := range []string{"a", "c"} {
		if err := kv.Put([]byte(k), []byte(k+k), engine.WriteOptions{DisableWAL: k == "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := kv.Get([]byte("c"), nil); err != nil || !ok || string(v) != "cc" {
		t.Fatalf("Get c = %q %v %v", v, ok, err)
	}
	if _, ok, _ := kv.Get([]byte("b"), nil); ok {
		t.Fatal("Get b found a missing key")
	}
	it, _ := kv.NewIterator()
	if !it.SeekGE([]byte("b")) || string(it.Key()) != "c" || !it.Prev() || string(it.Key()) != "a" {
		t.Fatal("SeekGE(b) then Prev should land on c, then a")
	}
	it.Close()
	if n, err := kv.MultiGet([][]byte{[]byte("a"), []byte("b"), []byte("c")}); n != 2 || err != nil {
		t.Fatalf("MultiGet found %d, %v", n, err)
	}
	if err := kv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := kv.WaitForCompactions(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := kv.Stats(ctx)
	if err != nil || st.SizeBytes <= 0 || st.L0Files != 1 {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
}

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestCloseFreesBlockCache opens, fills the block cache of, and closes the
// same database ten times: the process must not keep ten block caches.
func TestCloseFreesBlockCache(t *testing.T) {
	dir := t.TempDir()
	settings := map[string]string{"cache_size": strconv.Itoa(8 << 20), "compression_type": "none"}
	const keys = 40000
	val := []byte(strings.Repeat("v", 400))
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%010d", i)) }
	d, err := Driver{}.Open(context.Background(), engine.Target{Settings: settings}, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := d.(*DB)
	for i := 0; i < keys; i++ {
		if err := db.Put(key(i), val, engine.WriteOptions{DisableWAL: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var before int64
	for cycle := 0; cycle < 10; cycle++ {
		d, err := Driver{}.Open(context.Background(), engine.Target{Settings: settings}, dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < keys; i++ {
			if _, ok, err := d.(*DB).Lookup(key(i)); !ok || err != nil {
				t.Fatalf("key %d: found %v, %v", i, ok, err)
			}
		}
		d.Close()
		d.Close() // a second Close does nothing
		if cycle == 1 {
			before = rssBytes(t) // after the allocator has warmed up
		}
	}
	// Each cycle fills an 8 MiB cache; eight leaked caches would be 64 MiB.
	if grown := rssBytes(t) - before; grown > 24<<20 {
		t.Errorf("resident memory grew by %d MiB over 8 open/close cycles", grown>>20)
	}
}

// TestInternals reads RocksDB's gauges around a flush: before it, no L0
// file and the rows' bytes in the memtables; after it, one L0 file and
// the memtables (nearly) empty.
func TestInternals(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)
	for i := range 1000 {
		if err := kv.Put([]byte(fmt.Sprintf("key%06d", i)), []byte(strings.Repeat("v", 100)), engine.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := enginetest.AroundFlush(t, db)
	if a.Gauges["rocksdb.num-files-at-level0"] != 0 || b.Gauges["rocksdb.num-files-at-level0"] != 1 {
		t.Errorf("L0 files %v before the flush and %v after, want 0 and 1", a.Gauges["rocksdb.num-files-at-level0"],
			b.Gauges["rocksdb.num-files-at-level0"])
	}
	if a.Gauges["rocksdb.cur-size-all-mem-tables"] < 100_000 {
		t.Errorf("memtable bytes %v with 1000 rows of 100 bytes unflushed, want 100000 or more", a.Gauges["rocksdb.cur-size-all-mem-tables"])
	}
	if b.Gauges["rocksdb.cur-size-all-mem-tables"] >= a.Gauges["rocksdb.cur-size-all-mem-tables"] {
		t.Errorf("memtable bytes %v before the flush and %v after, want fewer", a.Gauges["rocksdb.cur-size-all-mem-tables"],
			b.Gauges["rocksdb.cur-size-all-mem-tables"])
	}
}
