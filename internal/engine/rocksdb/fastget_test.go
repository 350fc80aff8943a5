//go:build rocksdb

package rocksdb

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
)

// TestFastGet checks the one-call lookup against grocksdb's own GetPinned:
// same values for present keys (short, long, empty), none for missing ones,
// appended after what buf holds, with buf grown when the value does not fit.
func TestFastGet(t *testing.T) {
	db := openTestDB(t, nil)
	vals := map[string][]byte{"empty": {}, "short": []byte("v"), "long": bytes.Repeat([]byte("x0y1"), 5000)}
	for k, v := range vals {
		if err := db.Put([]byte(k), v, engine.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"empty", "short", "long", "missing"} {
		h, err := db.db.GetPinned(db.ro, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		want, exists := append([]byte("prefix:"), h.Data()...), h.Exists()
		h.Destroy()
		for _, capacity := range []int{7, 16, 64 << 10} {
			buf := append(make([]byte, 0, capacity), "prefix:"...)
			got, ok, err := db.Get([]byte(k), buf)
			if err != nil || ok != exists {
				t.Fatalf("%s (cap %d): found %v err %v, grocksdb says %v", k, capacity, ok, err, exists)
			}
			if ok && !bytes.Equal(got, want) {
				t.Errorf("%s (cap %d): %s, want %s", k, capacity, abbrev(got), abbrev(want))
			}
		}
		n, ok, err := db.Lookup([]byte(k))
		if err != nil || ok != exists || (ok && n != len(vals[k])) {
			t.Errorf("Lookup(%s) = %d, %v, %v; want %d bytes, found %v", k, n, ok, err, len(vals[k]), exists)
		}
	}
}

// openTestDB opens an in-process database with settings in a temp dir,
// closed when the test ends.
func openTestDB(t *testing.T, settings map[string]string) *DB {
	t.Helper()
	d, err := Driver{}.Open(context.Background(), engine.Target{Settings: settings}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d.(*DB)
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// TestLookupBatch checks the batched lookup against Lookup: every key of the
// batch is looked up (present ones found, missing ones not), and each has a
// duration of its own.
func TestLookupBatch(t *testing.T) {
	db := openTestDB(t, nil)
	const size = 6
	var keys []byte
	want := 0
	for i := 0; i < 40; i++ {
		k := []byte(fmt.Sprintf("k%05d", i))
		if i%3 != 0 {
			if err := db.Put(k, []byte("value"), engine.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			want++
		}
		keys = append(keys, k...)
	}
	lat := make([]int64, 40)
	start := time.Now()
	n, found, err := db.LookupBatch(keys, size, lat)
	call := time.Since(start)
	if err != nil || n != 40 || found != want {
		t.Fatalf("LookupBatch: %d looked up, %d found, err %v; want 40, %d", n, found, err, want)
	}
	// Each lookup's time is positive and within the call's, however long a
	// busy machine made that.
	for i, ns := range lat {
		if ns <= 0 || ns > int64(call) {
			t.Errorf("lookup %d took %d ns, the whole call %s", i, ns, call)
		}
	}
	// A short lat bounds the batch; so does a short keys.
	if n, _, _ := db.LookupBatch(keys, size, lat[:7]); n != 7 {
		t.Errorf("batch of 7 durations looked up %d keys", n)
	}
	if n, _, _ := db.LookupBatch(keys[:3*size], size, lat); n != 3 {
		t.Errorf("batch of 3 keys looked up %d", n)
	}
}

// TestPerfLevel checks that lookups run at the perf_level setting: off by
// default, as in db_bench (RocksDB's own default for a new thread counts), and
// counting when the target asks for 2; one thread switching between the two
// follows each database's setting.
func TestPerfLevel(t *testing.T) {
	open := func(settings map[string]string) *DB {
		db := openTestDB(t, settings)
		for i := 0; i < 100; i++ {
			if err := db.Put([]byte(fmt.Sprintf("key%03d", i)), []byte("v"), engine.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return db
	}
	off, counting := open(nil), open(map[string]string{"perf_level": "2"})
	for round := 0; round < 2; round++ {
		if n := off.countedLookup([]byte("key050")); n != 0 {
			t.Errorf("round %d: default perf level counted %d key comparisons, want none (level 1)", round, n)
		}
		if n := counting.countedLookup([]byte("key050")); n == 0 {
			t.Errorf("round %d: perf_level = 2 counted no key comparisons", round)
		}
	}
	if _, err := (Driver{}).Open(context.Background(), engine.Target{Settings: map[string]string{"perf_level": "0"}}, t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "perf_level") {
		t.Errorf("perf_level = 0: error %v, want one naming perf_level", err)
	}
}
