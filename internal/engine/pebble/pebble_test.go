package pebble

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
		{map[string]string{"block_cache": "1"}, `unknown pebble setting "block_cache"`},
		{map[string]string{"cache_size": "big"}, "cache_size"},
		{map[string]string{"compression_type": "lz5"}, "compression_type"},
		{map[string]string{"max_bytes_for_level_multiplier": "1"}, "max_bytes_for_level_multiplier"},
		{map[string]string{"level0_stop_writes_trigger": "2"}, "level0_stop_writes_trigger"},
	} {
		err := Driver{}.CheckTarget(engine.Target{Engine: "pebble", Settings: c.settings})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error naming %s", c.settings, err, c.want)
		}
	}
}

func TestOpenPutGetInfo(t *testing.T) {
	ctx := context.Background()
	db, err := Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"max_bytes_for_level_multiplier": "32"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)
	b := kv.NewBatch()
	b.Put([]byte("a"), []byte("1"))
	b.Put([]byte("c"), []byte("3"))
	if err := kv.Write(b, engine.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if v, ok, err := kv.Get([]byte("c"), nil); err != nil || !ok || string(v) != "3" {
		t.Fatalf("Get c = %q %v %v", v, ok, err)
	}
	it, _ := kv.NewIterator()
	if !it.SeekGE([]byte("b")) || string(it.Key()) != "c" || !it.Prev() || string(it.Key()) != "a" {
		t.Fatalf("SeekGE(b) then Prev should land on c, then a")
	}
	it.Close()
	if n, err := kv.MultiGet([][]byte{[]byte("a"), []byte("b"), []byte("c")}); n != 2 || err != nil {
		t.Fatalf("MultiGet found %d, %v", n, err)
	}
	info, err := db.Info(ctx)
	if err != nil || info.Settings["max_bytes_for_level_multiplier"] != "32" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}
