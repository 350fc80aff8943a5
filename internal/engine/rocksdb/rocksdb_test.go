//go:build rocksdb

package rocksdb

import (
	"context"
	"strings"
	"testing"

	"benchlab/internal/engine"
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
	if !it.SeekLE([]byte("b")) || string(it.Key()) != "a" {
		t.Fatal("SeekLE(b) should land on a")
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
