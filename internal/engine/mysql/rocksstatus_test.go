package mysql

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestRocksGauges parses MariaDB 10.11.19's SHOW ENGINE ROCKSDB STATUS
// (captured from a server whose __system__ column family had 3 L0 files
// and whose default one had 2 after two memtable flushes, no background
// work under way): L0 files summed over the column families, none being
// compacted, no compaction or flush running. A status whose level table
// lost its L0 line and header, or that has no column family, is an error.
func TestRocksGauges(t *testing.T) {
	b, err := os.ReadFile("testdata/rocksdb-status-10.11.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	g, err := rocksGauges(rows)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{GaugeL0Files: 5, GaugeL0Compacting: 0, GaugeCompactions: 0, GaugeFlushes: 0}
	for k, v := range want {
		if g[k] != v {
			t.Errorf("%s = %v, want %v", k, g[k], v)
		}
	}
	busy := append([][]string{{"BG_THREADS", "1", "\nthread_type: Low Pri\noperation_type: Compaction\n"},
		{"BG_THREADS", "2", "\nthread_type: High Pri\noperation_type: Flush\n"}}, rows...)
	if g, err := rocksGauges(busy); err != nil || g[GaugeCompactions] != 1 || g[GaugeFlushes] != 1 {
		t.Errorf("running work: %v %v, want one compaction and one flush", g, err)
	}
	var broken [][]string
	for _, r := range rows {
		if r[0] == "CF_COMPACTION" {
			r = []string{r[0], r[1], strings.NewReplacer("L0 ", "LX ", "Level ", "Lvl ").Replace(r[2])}
		}
		broken = append(broken, r)
	}
	if _, err := rocksGauges(broken); err == nil || !strings.Contains(err.Error(), "no L0 line") {
		t.Errorf("a level table without L0: %v", err)
	}
	if _, err := rocksGauges([][]string{{"STATISTICS", "rocksdb", ""}}); err == nil {
		t.Error("no column family: no error")
	}
}
