package report

import (
	"testing"

	"benchlab/internal/store"
)

// TestLSMTable builds the MyRocks LSM table from stored status counters of
// two targets of 10,000 operations each: write-amp is (flush + compaction
// writes) / flush writes, n/a where nothing was flushed; per-op figures
// are KB per operation; the block cache hit rate a percentage; stalls a
// step total. The relative table compares the two MyRocks targets.
func TestLSMTable(t *testing.T) {
	d := effData(true)
	a, b := &d.Results[1][1], &d.Results[2][1]
	stat := func(m map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range m {
			out[store.EngineStatFact("status.Rocksdb_"+k)] = v
		}
		return out
	}
	common := map[string]float64{"bytes_written": 1e6, "compact_read_bytes": 0, "wal_bytes": 2048e4,
		"block_cache_hit": 90, "block_cache_miss": 10, "get_hit_l0": 0, "stall_total_stops": 0,
		"stall_total_slowdowns": 0, "stall_micros": 0}
	a.Facts = stat(common)
	a.Facts[store.EngineStatFact("status.Rocksdb_flush_write_bytes")] = 1024e4
	a.Facts[store.EngineStatFact("status.Rocksdb_compact_write_bytes")] = 3072e4
	b.Facts = stat(common)
	b.Facts[store.EngineStatFact("status.Rocksdb_flush_write_bytes")] = 0
	b.Facts[store.EngineStatFact("status.Rocksdb_compact_write_bytes")] = 1024e4
	b.Facts[store.EngineStatFact("status.Rocksdb_stall_micros")] = 5e6
	b.Facts[store.EngineStatFact("status.Rocksdb_stall_total_stops")] = 3
	r := Build(d)
	abs := findTable(r, "MyRocks LSM per operation")
	if abs == nil {
		t.Fatalf("no LSM table among %d tables", len(r.Tables))
	}
	for _, c := range []struct {
		target, col string
		want        float64
	}{{"lite", "write-amp", 4}, {"lite", "flush KB/op", 1}, {"lite", "compaction KB written/op", 3},
		{"srv", "compaction KB written/op", 1}, {"lite", "WAL KB/op", 2}, {"lite", "block cache hit %", 90},
		{"srv", "stalls", 3}, {"srv", "stall ms", 5000}} {
		if cell := cellOf(abs, c.target, c.col); cell.Missing || cell.Kind == Text ||
			cell.Value < c.want*0.999-1e-9 || cell.Value > c.want*1.001+1e-9 {
			t.Errorf("%s %s = %+v, want %v", c.target, c.col, cell, c.want)
		}
	}
	if cell := cellOf(abs, "srv", "write-amp"); !cell.Missing {
		t.Errorf("write-amp without a flush = %+v, want n/a", cell)
	}
	if findTable(r, "Relative MyRocks LSM") == nil {
		t.Errorf("no relative LSM table between two MyRocks targets")
	}
}

// TestNoLSMTable: results without MyRocks' counters have no LSM table.
func TestNoLSMTable(t *testing.T) {
	if findTable(Build(effData(true)), "MyRocks LSM per operation") != nil {
		t.Error("an LSM table without MyRocks counters")
	}
}
