package dbbench_test

import (
	"testing"

	"benchlab/internal/engine/dbbench"
)

// FuzzParse feeds arbitrary db_bench output to the parser: results or an
// error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add("RocksDB: version 7.8.3\nreadrandom   :       3.998 micros/op 250062 ops/sec 0.080 seconds 20000 operations; (20000 of 20000 found)\n" +
		"Microseconds per read:\nCount: 20000 Average: 3.9 StdDev: 1.2\nMin: 1 Median: 3.5 Max: 90\nPercentiles: P50: 3.50 P75: 4.50 P99: 9.00 P99.9: 20.00 P99.99: 60.00\n")
	f.Add("** Compaction Stats [default] **\nLevel Files Size\n L0 3/0 1.00 MB\n Sum 3/0 1.00 MB\nStalls(count): 0 level0_slowdown, 1 memtable_compaction\n")
	f.Add("fillseq :  1.0 micros/op 1 ops/sec;  1.0 MB/s\n")
	f.Fuzz(func(t *testing.T, out string) {
		_, _, _ = dbbench.Parse(out)
		_ = dbbench.ParseStats(out)
	})
}
