package preflight

import (
	"strings"
	"testing"

	_ "benchlab/internal/all"
	"benchlab/internal/spec"
)

// TestCheckCacheMemory: 64 SQLite threads with the default cache_size (64
// MiB per connection) on a 1M-row table may cache about 65 x 64 MiB = 4 GiB;
// with 1 GiB available the run is refused before anything runs, naming the
// target, the connections and the setting to lower; cache_size = -2000 or
// more memory lets it run, and a small table bounds each cache by its data.
func TestCheckCacheMemory(t *testing.T) {
	parse := func(settings string, tableSize string) spec.Spec {
		t.Helper()
		src := "[[target]]\nname = \"lite\"\nengine = \"sqlite\"\n" + settings +
			"[workload]\ntests = [\"point-query\"]\nthreads = [1, 64]\ntable_size = " + tableSize + "\n"
		s, err := spec.Parse([]byte(src), "m.toml", "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const gib = int64(1) << 30
	err := checkCacheMemory(parse("", "1000000"), gib)
	if err == nil || !strings.Contains(err.Error(), "memory: target lite (sqlite)") || !strings.Contains(err.Error(), "65 connections x 64.0 MiB") ||
		!strings.Contains(err.Error(), "cache_size") || !strings.Contains(err.Error(), "--skip-space-check") {
		t.Errorf("64 threads x 64 MiB with 1 GiB available: %v; want a refusal naming the target, 65 connections x 64 MiB, cache_size", err)
	}
	if err := checkCacheMemory(parse("[target.settings]\ncache_size = -2000\n", "1000000"), gib); err != nil {
		t.Errorf("cache_size = -2000 (2 MB each): %v", err)
	}
	if err := checkCacheMemory(parse("", "1000000"), 16*gib); err != nil {
		t.Errorf("16 GiB available: %v", err)
	}
	// 20,000 rows are a few MB: no connection caches more than the data.
	if err := checkCacheMemory(parse("", "20000"), gib); err != nil {
		t.Errorf("a 20,000-row table: %v", err)
	}
	if err := checkCacheMemory(parse("", "1000000"), 0); err != nil {
		t.Errorf("available memory unknown: %v", err)
	}
}
