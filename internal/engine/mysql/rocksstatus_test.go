package mysql

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// TestRocksStatus parses MariaDB 10.11.19's SHOW ENGINE ROCKSDB STATUS
// (captured from a server whose __system__ column family had 3 L0 files
// and whose default one had 2 after two memtable flushes each, no
// background work under way): L0 files and their bytes summed over the
// column families as gauges, none being compacted, no compaction or flush
// running, writes not stopped; the four flushes and their seconds (0.01 +
// 0.03) as counters, and no compaction. A status whose level table lost
// its L0 line and header, or that has no column family, is an error.
func TestRocksStatus(t *testing.T) {
	b, err := os.ReadFile("testdata/rocksdb-status-10.11.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	st, err := parseRocksStatus(rows)
	if err != nil {
		t.Fatal(err)
	}
	wantGauges := map[string]float64{GaugeL0Files: 5, GaugeL0Compacting: 0, GaugeCompactions: 0, GaugeFlushes: 0,
		GaugeSSTBytes: 3.75*1024 + 2.42*1024, GaugeWriteStopped: 0}
	wantCounters := map[string]float64{CounterFlushes: 4, CounterFlushSeconds: 0.04, CounterCompactions: 0,
		CounterCompactionSeconds: 0}
	for what, c := range map[string]struct{ got, want map[string]float64 }{
		"gauge": {st.gauges, wantGauges}, "counter": {st.counters, wantCounters}} {
		if len(c.got) != len(c.want) {
			t.Errorf("%ss %v, want %v", what, c.got, c.want)
		}
		for k, v := range c.want {
			if got, ok := c.got[k]; !ok || math.Abs(got-v) > 1e-9 {
				t.Errorf("%s %s = %v (present %v), want %v", what, k, got, ok, v)
			}
		}
	}
	busy := append([][]string{{"BG_THREADS", "1", "\nthread_type: Low Pri\noperation_type: Compaction\n"},
		{"BG_THREADS", "2", "\nthread_type: High Pri\noperation_type: Flush\n"}}, rows...)
	if st, err := parseRocksStatus(busy); err != nil || st.gauges[GaugeCompactions] != 1 || st.gauges[GaugeFlushes] != 1 {
		t.Errorf("running work: %v %v, want one compaction and one flush", st.gauges, err)
	}
	// A level table with a deeper level: its jobs are compactions.
	var deeper [][]string
	for _, r := range rows {
		if r[0] == "CF_COMPACTION" && r[1] == "default" {
			line := "  L1      1/0    1.00 MB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0      0.1      1.50              0.00         3    0.500       0      0       0.0       0.0\n"
			sum := " Sum      3/0    1.00 MB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0      0.1      1.53              0.00         5    0.016       0      0       0.0       0.0"
			text := strings.Replace(r[2], " Sum ", line+" Sum ", 1)
			i := strings.Index(text, " Sum ")
			j := strings.Index(text[i:], "\n")
			r = []string{r[0], r[1], text[:i] + sum + text[i+j:]}
		}
		deeper = append(deeper, r)
	}
	if st, err := parseRocksStatus(deeper); err != nil || st.counters[CounterCompactions] != 3 ||
		math.Abs(st.counters[CounterCompactionSeconds]-1.5) > 1e-9 || st.counters[CounterFlushes] != 4 {
		t.Errorf("a compaction into L1: %v %v, want 3 compactions of 1.5 s and 4 flushes", st.counters, err)
	}
	var broken [][]string
	for _, r := range rows {
		if r[0] == "CF_COMPACTION" {
			r = []string{r[0], r[1], strings.NewReplacer("L0 ", "LX ", "Level ", "Lvl ").Replace(r[2])}
		}
		broken = append(broken, r)
	}
	if _, err := parseRocksStatus(broken); err == nil || !strings.Contains(err.Error(), "no level table") {
		t.Errorf("a level table without L0 and header: %v", err)
	}
	if _, err := parseRocksStatus([][]string{{"STATISTICS", "rocksdb", ""}}); err == nil {
		t.Error("no column family: no error")
	}
}
