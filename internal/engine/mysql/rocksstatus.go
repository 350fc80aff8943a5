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

// Gauge names of MyRocks' LSM state, read from rocksStatusQuery.
const (
	// GaugeL0Files is the files in L0 over every column family.
	GaugeL0Files = "rocksdb_status.l0_files"
	// GaugeL0Compacting is those of them a compaction is working on.
	GaugeL0Compacting = "rocksdb_status.l0_files_compacting"
	// GaugeCompactions and GaugeFlushes are the background threads
	// running a compaction or a memtable flush.
	GaugeCompactions = "rocksdb_status.compactions_running"
	GaugeFlushes     = "rocksdb_status.flushes_running"
)

// rocksGauges reads MyRocks' LSM gauges from the rows (Type, Name, Status)
// of rocksStatusQuery: the L0 line of each CF_COMPACTION level table
// ("  L0      3/1    3.75 KB ...": 3 files, 1 being compacted) and the
// operation_type of each BG_THREADS row.
func rocksGauges(rows [][]string) (map[string]float64, error) {
	g := map[string]float64{GaugeL0Files: 0, GaugeL0Compacting: 0, GaugeCompactions: 0, GaugeFlushes: 0}
	cfs := 0
	for _, r := range rows {
		if len(r) < 3 {
			return nil, fmt.Errorf("engine status row of %d columns, want 3", len(r))
		}
		switch r[0] {
		case "CF_COMPACTION":
			files, compacting, ok := l0Files(r[2])
			if !ok {
				return nil, fmt.Errorf("column family %s: no L0 line in its compaction stats", r[1])
			}
			g[GaugeL0Files] += files
			g[GaugeL0Compacting] += compacting
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
		}
	}
	if cfs == 0 {
		return nil, fmt.Errorf("no column family's compaction stats in the engine status")
	}
	return g, nil
}

// l0Files finds the level table's L0 line in one column family's
// compaction stats and returns its files and those being compacted. A
// column family without L0 files has no L0 line in some RocksDB
// versions: then the table's header is there and L0 holds nothing.
func l0Files(stats string) (files, compacting float64, ok bool) {
	header := false
	for _, line := range strings.Split(stats, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "Level" && f[1] == "Files" {
			header = true
		}
		if len(f) < 2 || f[0] != "L0" {
			continue
		}
		a, b, cut := strings.Cut(f[1], "/")
		n, err1 := strconv.ParseFloat(a, 64)
		c, err2 := strconv.ParseFloat(b, 64)
		if !cut || err1 != nil || err2 != nil {
			return 0, 0, false
		}
		return n, c, true
	}
	return 0, 0, header
}

// readRocksGauges reads MyRocks' LSM gauges on the administrative
// connection.
func (db *DB) readRocksGauges(ctx context.Context) (map[string]float64, error) {
	rows, err := db.admin.Values(ctx, rocksStatusQuery)
	if err != nil {
		return nil, db.fail(fmt.Errorf("%s: %s: %w", db.engine, rocksStatusQuery, err))
	}
	g, err := rocksGauges(rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", db.engine, rocksStatusQuery, err)
	}
	return g, nil
}
