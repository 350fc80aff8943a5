//go:build rocksdb

package rocksdb

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"benchlab/internal/engine"
)

// TestFastGet checks the one-call lookup against grocksdb's own GetPinned:
// same values for present keys (short, long, empty), none for missing ones,
// appended after what buf holds, with buf grown when the value does not fit.
func TestFastGet(t *testing.T) {
	d, err := Driver{}.Open(context.Background(), engine.Target{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	db := d.(*DB)
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

func abbrev(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}
