package report

import (
	"math"

	"benchlab/internal/store"
)

// lsmFact is the stored fact of a MyRocks status counter (the MariaDB
// engine's "status.Rocksdb_*" names, engine.StatsReader).
func lsmFact(r store.Result, counter string) (float64, bool) {
	v, ok := r.Facts[store.EngineStatFact("status.Rocksdb_"+counter)]
	return v, ok
}

// hasLSM reports whether some result of the keys' cells read MyRocks'
// counters.
func hasLSM(keys []cellKey, s samples) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if _, ok := lsmFact(r, "bytes_written"); ok {
					return true
				}
			}
		}
	}
	return false
}

// lsmRatio is a/b of two MyRocks counters of r: not measured where r has
// none (another engine), missing where b did not grow.
func lsmRatio(r store.Result, scale float64, a []string, b ...string) float64 {
	sum := func(names []string) (float64, bool) {
		t := 0.0
		for _, n := range names {
			v, ok := lsmFact(r, n)
			if !ok {
				return 0, false
			}
			t += v
		}
		return t, true
	}
	num, ok1 := sum(a)
	den, ok2 := sum(b)
	switch {
	case !ok1 || !ok2:
		return store.NotMeasured
	case den == 0:
		return math.NaN()
	}
	return scale * num / den
}

// lsmPerOp is the sum of MyRocks counters per operation, times scale.
func lsmPerOp(r store.Result, scale float64, names ...string) float64 {
	t := 0.0
	for _, n := range names {
		v, ok := lsmFact(r, n)
		if !ok {
			return store.NotMeasured
		}
		t += v
	}
	return perOp(r, t, scale)
}

// lsmTotal is the sum of MyRocks counters over the measured part, times scale.
func lsmTotal(r store.Result, scale float64, names ...string) float64 {
	t := 0.0
	for _, n := range names {
		v, ok := lsmFact(r, n)
		if !ok {
			return store.NotMeasured
		}
		t += v
	}
	return t * scale
}

// lsmTables are MyRocks' LSM figures per step, made from its status
// counters: what flushes and compactions wrote and read per operation,
// the write amplification, the block cache's hit rate and the write
// stalls, so that a slower MyRocks step shows whether compaction debt or
// stalls explain it. Only when some step read MyRocks' counters; other
// engines' rows are n/a, and there is no relative table when the base is
// another engine.
func lsmTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options) []Table {
	if !hasLSM(keys, s) {
		return nil
	}
	metrics := []effMetric{
		{column: "write-amp", relative: true, value: func(r store.Result) float64 {
			return lsmRatio(r, 1, []string{"flush_write_bytes", "compact_write_bytes"}, "flush_write_bytes")
		}},
		{column: "flush KB/op", value: func(r store.Result) float64 { return lsmPerOp(r, 1.0/1024, "flush_write_bytes") }},
		{column: "compaction KB written/op", relative: true, value: func(r store.Result) float64 {
			return lsmPerOp(r, 1.0/1024, "compact_write_bytes")
		}},
		{column: "compaction KB read/op", relative: true, value: func(r store.Result) float64 {
			return lsmPerOp(r, 1.0/1024, "compact_read_bytes")
		}},
		{column: "WAL KB/op", value: func(r store.Result) float64 { return lsmPerOp(r, 1.0/1024, "wal_bytes") }},
		{column: "block cache hit %", value: func(r store.Result) float64 {
			return lsmRatio(r, 100, []string{"block_cache_hit"}, "block_cache_hit", "block_cache_miss")
		}},
		{column: "L0 hits/op", value: func(r store.Result) float64 { return lsmPerOp(r, 1, "get_hit_l0") }},
		{column: "stalls", relative: true, value: func(r store.Result) float64 {
			return lsmTotal(r, 1, "stall_total_stops", "stall_total_slowdowns")
		}},
		{column: "stall ms", relative: true, value: func(r store.Result) float64 { return lsmTotal(r, 1e-3, "stall_micros") }},
	}
	tables := costTables(d, keys, s, label, opt, metrics, "MyRocks LSM per operation",
		"from MyRocks' status counters over the measured part (SHOW GLOBAL STATUS Rocksdb_*); op = statement; "+
			"write-amp = (memtable flush + compaction bytes written) / flush bytes written, as RocksDB's compaction "+
			"stats count it (n/a where nothing was flushed); block cache hit % = hits / (hits + misses); stalls = "+
			"write stops and slowdowns in the step, stall ms their total time; median over repeats; n/a = another engine",
		"Relative MyRocks LSM: figure(target) / figure(base)")
	if targets := d.targets(); len(tables) > 1 && !hasLSM(keys, samples{targets[0]: s[targets[0]]}) {
		return tables[:1] // a base of another engine has nothing to compare with
	}
	return tables
}
