package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// rocksStatusQuery is MyRocks' engine status: RocksDB's statistics, each
// column family's compaction stats (the level table) and the background
// threads at work. Unlike information_schema's RocksDB tables it adds
// nothing to the server's status counters (no temporary table, no scan),
// so reading it beside ReadStats leaves the counters the workload's own.
const rocksStatusQuery = "SHOW ENGINE ROCKSDB STATUS"

// Names of MyRocks' LSM state as read from rocksStatusQuery, in the
// "rocksdb_status" group. The gauges are levels at the read; the counters
// are totals since the server started, which the per-second series show
// as rates (engine.Internals).
const (
	// GaugeL0Files is the files in L0 over every column family.
	GaugeL0Files = "rocksdb_status.l0_files"
	// GaugeL0Compacting is those of them a compaction is working on.
	GaugeL0Compacting = "rocksdb_status.l0_files_compacting"
	// GaugeCompactions and GaugeFlushes are the background threads
	// running a compaction or a memtable flush.
	GaugeCompactions = "rocksdb_status.compactions_running"
	GaugeFlushes     = "rocksdb_status.flushes_running"
	// GaugeSSTBytes is the size of every level's files over every column
	// family (the level tables' Sum line).
	GaugeSSTBytes = "rocksdb_status.sst_bytes"
	// GaugeWriteStopped is 1 while RocksDB stops writes (too many L0
	// files or memtables, or too much pending compaction), else 0.
	GaugeWriteStopped = "rocksdb_status.write_stopped"

	// CounterFlushes and CounterFlushSeconds are the level tables' L0
	// line: the jobs that wrote L0 files (memtable flushes, and the rare
	// compaction within L0) and the seconds they took.
	CounterFlushes      = "rocksdb_status.flushes"
	CounterFlushSeconds = "rocksdb_status.flush_seconds"
	// CounterCompactions and CounterCompactionSeconds are the level
	// tables' other lines (compactions into L1 and deeper) and their
	// seconds: as a rate, the compaction threads busy on average.
	CounterCompactions       = "rocksdb_status.compactions"
	CounterCompactionSeconds = "rocksdb_status.compaction_seconds"
)

// rocksStatus is one read of rocksStatusQuery.
type rocksStatus struct {
	gauges, counters map[string]float64
}

// parseRocksStatus reads MyRocks' LSM state from the rows (Type, Name,
// Status) of rocksStatusQuery: each CF_COMPACTION row's level table
// ("  L0      3/1    3.75 KB ...": 3 files, 1 being compacted; its
// Comp(sec) and Comp(cnt) columns), the operation_type of each BG_THREADS
// row, and the STATISTICS row's rocksdb.is_write_stopped.
func parseRocksStatus(rows [][]string) (rocksStatus, error) {
	st := rocksStatus{
		gauges: map[string]float64{GaugeL0Files: 0, GaugeL0Compacting: 0, GaugeCompactions: 0, GaugeFlushes: 0,
			GaugeSSTBytes: 0},
		counters: map[string]float64{CounterFlushes: 0, CounterFlushSeconds: 0, CounterCompactions: 0,
			CounterCompactionSeconds: 0},
	}
	g, c := st.gauges, st.counters
	cfs := 0
	for _, r := range rows {
		if len(r) < 3 {
			return st, fmt.Errorf("engine status row of %d columns, want 3", len(r))
		}
		switch r[0] {
		case "CF_COMPACTION":
			lv, err := levelTable(r[2])
			if err != nil {
				return st, fmt.Errorf("column family %s: %w", r[1], err)
			}
			g[GaugeL0Files] += lv.l0.files
			g[GaugeL0Compacting] += lv.l0.compacting
			g[GaugeSSTBytes] += lv.sum.bytes
			c[CounterFlushes] += lv.l0.jobs
			c[CounterFlushSeconds] += lv.l0.seconds
			c[CounterCompactions] += max(0, lv.sum.jobs-lv.l0.jobs)
			c[CounterCompactionSeconds] += max(0, lv.sum.seconds-lv.l0.seconds)
			cfs++
		case "BG_THREADS":
			for _, line := range strings.Split(r[2], "\n") {
				op, ok := strings.CutPrefix(strings.TrimSpace(line), "operation_type:")
				if !ok {
					continue
				}
				switch strings.TrimSpace(op) {
				case "Compaction":
					g[GaugeCompactions]++
				case "Flush":
					g[GaugeFlushes]++
				}
			}
		case "STATISTICS":
			if v, ok := statisticsCount(r[2], "rocksdb.is_write_stopped"); ok {
				g[GaugeWriteStopped] = v
			}
		}
	}
	if cfs == 0 {
		return st, fmt.Errorf("no column family's compaction stats in the engine status")
	}
	return st, nil
}

// levelLine is one line of a level table: files, those being compacted,
// their bytes, and the jobs that wrote the level and their seconds.
type levelLine struct {
	files, compacting, bytes, jobs, seconds float64
}

// levels is what parseRocksStatus takes of one column family's level
// table: its L0 line (zero when the table has none) and its Sum line.
type levels struct{ l0, sum levelLine }

// levelTable parses one column family's compaction stats. Its columns
// are found by the header's names; a data line's Size is two fields
// ("3.75 KB"), so the columns after it sit one field further. A column
// family without L0 files has no L0 line in some RocksDB versions: then
// the header and the Sum line are there and L0 holds nothing.
func levelTable(stats string) (levels, error) {
	var lv levels
	var col map[string]int
	haveSum := false
	for _, line := range strings.Split(stats, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "Level" && f[1] == "Files" {
			col = map[string]int{}
			for i, name := range f {
				col[name] = i
			}
			continue
		}
		if col == nil || len(f) < 2 || (f[0] != "L0" && f[0] != "Sum") {
			continue
		}
		l, err := parseLevelLine(f, col)
		if err != nil {
			return lv, fmt.Errorf("level table line %q: %w", strings.TrimSpace(line), err)
		}
		if f[0] == "L0" {
			lv.l0 = l
		} else if !haveSum {
			lv.sum, haveSum = l, true
		}
	}
	if col == nil {
		return lv, fmt.Errorf("no level table (its Level header) in its compaction stats")
	}
	if !haveSum {
		return lv, fmt.Errorf("no Sum line in its compaction stats")
	}
	return lv, nil
}

// parseLevelLine reads a level table's data line f by the header's
// columns col.
func parseLevelLine(f []string, col map[string]int) (levelLine, error) {
	var l levelLine
	a, b, cut := strings.Cut(f[1], "/")
	n, err1 := strconv.ParseFloat(a, 64)
	c, err2 := strconv.ParseFloat(b, 64)
	if !cut || err1 != nil || err2 != nil {
		return l, fmt.Errorf("files %q, want files/compacting", f[1])
	}
	l.files, l.compacting = n, c
	size, ok := col["Size"]
	if !ok || size+1 >= len(f) {
		return l, fmt.Errorf("no Size column")
	}
	if l.bytes, ok = byteSize(f[size], f[size+1]); !ok {
		return l, fmt.Errorf("size %q %q", f[size], f[size+1])
	}
	for name, dst := range map[string]*float64{"Comp(sec)": &l.seconds, "Comp(cnt)": &l.jobs} {
		i, ok := col[name]
		if !ok || i+1 >= len(f) {
			return l, fmt.Errorf("no %s column", name)
		}
		v, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil {
			return l, fmt.Errorf("%s %q", name, f[i+1])
		}
		*dst = v
	}
	return l, nil
}

// byteSize reads a level table's size ("3.75", "KB") in bytes.
func byteSize(num, unit string) (float64, bool) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}[unit]
	if mult == 0 {
		return 0, false
	}
	return v * mult, true
}

// statisticsCount finds "<name> COUNT : <n>" in the STATISTICS row.
func statisticsCount(stats, name string) (float64, bool) {
	i := strings.Index(stats, name+" COUNT : ")
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stats[i+len(name)+len(" COUNT : "):])
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// readRocksStatus reads MyRocks' LSM state on the administrative
// connection.
func (db *DB) readRocksStatus(ctx context.Context) (rocksStatus, error) {
	rows, err := db.admin.Values(ctx, rocksStatusQuery)
	if err != nil {
		return rocksStatus{}, db.fail(fmt.Errorf("%s: %s: %w", db.engine, rocksStatusQuery, err))
	}
	st, err := parseRocksStatus(rows)
	if err != nil {
		return st, fmt.Errorf("%s: %s: %w", db.engine, rocksStatusQuery, err)
	}
	return st, nil
}
