package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"benchlab/internal/engine"
)

// statusCounters are the SHOW GLOBAL STATUS counters ReadStats keeps, named
// "status.<Variable_name>". Every one is a total since the server started
// (no gauges such as Innodb_buffer_pool_pages_dirty); one the server lacks
// is left out: MariaDB 10.11 has no Innodb_rows_* (Rows_read and the
// Handler_* counters tell the rows) nor Innodb_os_log_fsyncs, MySQL no
// Innodb_deadlocks.
var statusCounters = []string{
	// InnoDB's buffer pool: logical reads, reads that missed it (went to
	// the file), pages changed, pages flushed, waits for a free page.
	"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_write_requests",
	"Innodb_buffer_pool_pages_flushed", "Innodb_buffer_pool_wait_free",
	// Pages read, created and written; pages through the doublewrite buffer.
	"Innodb_pages_read", "Innodb_pages_created", "Innodb_pages_written", "Innodb_dblwr_pages_written",
	// InnoDB's files: read and write calls and bytes, fsyncs.
	"Innodb_data_reads", "Innodb_data_read", "Innodb_data_writes", "Innodb_data_written", "Innodb_data_fsyncs",
	// The redo log: bytes written, writes, fsyncs, waits for log buffer space.
	"Innodb_os_log_written", "Innodb_log_writes", "Innodb_os_log_fsyncs", "Innodb_log_waits",
	// The redo log's positions: its end (LSN) and the last checkpoint's,
	// in bytes since the log began (MariaDB).
	"Innodb_lsn_current", "Innodb_lsn_last_checkpoint",
	// Pages flushed from the end of the LRU list (to free a page, not to
	// move the checkpoint).
	"Innodb_buffer_pool_pages_lru_flushed",
	// Rows read (by the server; by InnoDB where it counts them) and
	// changed; row lock waits and their milliseconds.
	"Rows_read", "Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Innodb_row_lock_waits", "Innodb_row_lock_time", "Innodb_deadlocks",
	// The handler calls behind them: index lookups, index and table scans' next rows, writes.
	"Handler_read_key", "Handler_read_next", "Handler_read_prev", "Handler_read_first", "Handler_read_rnd",
	"Handler_read_rnd_next", "Handler_write", "Handler_update", "Handler_delete", "Handler_commit", "Handler_rollback",
	// Sorts, temporary tables, full scans and joins.
	"Created_tmp_tables", "Created_tmp_disk_tables", "Created_tmp_files", "Sort_rows", "Sort_merge_passes",
	"Select_scan", "Select_full_join",
	// Statements by kind; explicit commits and rollbacks (autocommit
	// statements count none).
	"Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback",
	// MyRocks (present once the RocksDB plugin is loaded): rows; bytes
	// the engine read and wrote for the workload (Get/Put payloads), to the
	// WAL, in memtable flushes and in compaction reads and writes (their
	// sum over the user bytes is the write amplification); block cache
	// hits and misses by block kind; where point reads were answered
	// (memtable, L0, L1, deeper); iterator seeks and nexts; write stalls
	// (their count by cause and their microseconds); lock conflicts.
	"Rocksdb_rows_read", "Rocksdb_rows_inserted", "Rocksdb_rows_updated", "Rocksdb_rows_deleted",
	"Rocksdb_bytes_read", "Rocksdb_bytes_written", "Rocksdb_wal_bytes", "Rocksdb_wal_synced",
	"Rocksdb_flush_write_bytes", "Rocksdb_compact_read_bytes", "Rocksdb_compact_write_bytes",
	"Rocksdb_block_cache_hit", "Rocksdb_block_cache_miss", "Rocksdb_block_cache_data_hit",
	"Rocksdb_block_cache_data_miss", "Rocksdb_block_cache_index_hit", "Rocksdb_block_cache_index_miss",
	"Rocksdb_block_cache_filter_hit", "Rocksdb_block_cache_filter_miss", "Rocksdb_bloom_filter_useful",
	"Rocksdb_memtable_hit", "Rocksdb_memtable_miss", "Rocksdb_get_hit_l0", "Rocksdb_get_hit_l1",
	"Rocksdb_get_hit_l2_and_up", "Rocksdb_number_db_seek", "Rocksdb_number_db_next",
	"Rocksdb_number_keys_read", "Rocksdb_number_keys_written", "Rocksdb_compaction_key_drop_obsolete",
	"Rocksdb_stall_micros", "Rocksdb_stall_total_stops", "Rocksdb_stall_total_slowdowns",
	"Rocksdb_stall_l0_file_count_limit_slowdowns", "Rocksdb_stall_l0_file_count_limit_stops",
	"Rocksdb_stall_pending_compaction_limit_slowdowns", "Rocksdb_stall_pending_compaction_limit_stops",
	"Rocksdb_stall_memtable_limit_slowdowns", "Rocksdb_stall_memtable_limit_stops",
	"Rocksdb_row_lock_deadlocks", "Rocksdb_row_lock_wait_timeouts", "Rocksdb_snapshot_conflict_errors",
}

// statusGauges are the SHOW GLOBAL STATUS values ReadInternals reads besides
// statusCounters: levels at the moment, named "status.<Variable_name>" too.
// Adding a gauge (a storage engine's own, such as MyRocks' Rocksdb_*) is
// adding its name here; a name the server lacks is left out.
var statusGauges = []string{
	// InnoDB's checkpoint age: the redo log written since the last
	// checkpoint (LSN minus the checkpoint's LSN), and the age at which
	// InnoDB must flush pages to move the checkpoint (MariaDB).
	"Innodb_checkpoint_age", "Innodb_checkpoint_max_age",
	// The buffer pool's dirty pages and bytes, and its free pages.
	"Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_bytes_dirty", "Innodb_buffer_pool_pages_free",
	// Undo logs not yet purged, and row lock waits under way.
	"Innodb_history_list_length", "Innodb_row_lock_current_waits",
	// Sessions connected and running a statement.
	"Threads_connected", "Threads_running",
	// MyRocks: the memtables' bytes (all, and those not flushed yet) and
	// the manual compactions under way (the cleanup's).
	"Rocksdb_memtable_total", "Rocksdb_memtable_unflushed", "Rocksdb_manual_compactions_running",
}

// statusQuery reads statusCounters in one statement; internalsQuery reads
// statusCounters and statusGauges.
var (
	statusQuery    = showStatus(statusCounters)
	internalsQuery = showStatus(append(slices.Clone(statusCounters), statusGauges...))
)

func showStatus(names []string) string {
	return "SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(names, "', '") + "')"
}

// ReadStats reads statusCounters on the administrative connection.
//
// Precision: the counters are live (InnoDB's are global counters; the
// server adds every session's own to the global ones as it reads them),
// so a read is exact at its moment. Reading changes a few of them: on
// MariaDB each SHOW GLOBAL STATUS fills a temporary table with the
// variables it returns and scans it, which adds one Created_tmp_tables, one
// Select_scan and a Handler_read_rnd_next per row it returns plus one, and
// nothing else. ReadStats takes
// what its own reads and ReadInternals' added off those three (readCost),
// so two reads back to back differ by nothing and a step's growth is the
// workload's own. On MySQL, whose SHOW STATUS reads performance_schema, the
// reads' own cost is left in: one read's worth per step.
func (db *DB) ReadStats(ctx context.Context) (map[string]float64, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	return db.readStatus(ctx, statusQuery)
}

// ReadInternals reads statusCounters and statusGauges in one SHOW GLOBAL
// STATUS (engine.InternalsReader), on the administrative connection, with
// the reads' own cost taken off the counters as ReadStats does. Where the
// server runs MyRocks (its status has Rocksdb_* counters) a second round
// trip reads the LSM state of SHOW ENGINE ROCKSDB STATUS (readRocksStatus:
// L0 files as gauges, flush and compaction jobs as counters), which adds
// nothing to the status counters. An account without PROCESS cannot read
// it (an existing server's, by dsn): the series then lack those names,
// and the rest are read as before.
func (db *DB) ReadInternals(ctx context.Context) (engine.Internals, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	all, err := db.readStatus(ctx, internalsQuery)
	if err != nil {
		return engine.Internals{}, err
	}
	in := engine.Internals{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	for _, g := range statusGauges {
		if v, ok := all["status."+g]; ok {
			in.Gauges["status."+g] = v
			delete(all, "status."+g)
		}
	}
	in.Counters = all
	if _, rocks := all["status.Rocksdb_rows_read"]; rocks && !db.rocksStatusDenied {
		st, err := db.readRocksStatus(ctx)
		switch {
		case isAccessDenied(err):
			db.rocksStatusDenied = true
		case err != nil:
			return engine.Internals{}, err
		default:
			maps.Copy(in.Gauges, st.gauges)
			maps.Copy(in.Counters, st.counters)
		}
	}
	return in, nil
}

// readStatus runs query, a SHOW GLOBAL STATUS, and returns its rows by
// "status.<name>", the cost of every read so far taken off (under statsMu).
func (db *DB) readStatus(ctx context.Context, query string) (map[string]float64, error) {
	if db.statsMariaDB == nil {
		ver, _, err := db.admin.variable(ctx, "version")
		if err != nil {
			return nil, db.fail(fmt.Errorf("%s: status counters: version: %w", db.engine, err))
		}
		mariadb := strings.Contains(ver, "MariaDB")
		db.statsMariaDB = &mariadb
	}
	rows, err := db.admin.c.(driver.QueryerContext).QueryContext(ctx, query, nil)
	if err != nil {
		return nil, db.fail(fmt.Errorf("%s: status counters: %w", db.engine, err))
	}
	defer rows.Close()
	out := map[string]float64{}
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, db.fail(fmt.Errorf("%s: status counters: %w", db.engine, err))
		}
		name, v := text(dest[0]), text(dest[len(dest)-1])
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			out["status."+name] = x
		}
	}
	if !*db.statsMariaDB {
		return out, nil
	}
	if db.statsCost == nil {
		db.statsCost = map[string]float64{}
	}
	for name, per := range readCost(len(out)) {
		db.statsCost[name] += per
	}
	for name, cost := range db.statsCost {
		if v, ok := out[name]; ok {
			out[name] = v - cost
		}
	}
	return out, nil
}

// readCost is what one SHOW GLOBAL STATUS of statusQuery returning rows
// variables adds to MariaDB's counters (measured on 10.11, checked by
// TestEngineStats).
func readCost(rows int) map[string]float64 {
	return map[string]float64{"status.Created_tmp_tables": 1, "status.Select_scan": 1,
		"status.Handler_read_rnd_next": float64(rows + 1)}
}

// text is a column's value as text.
func text(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}
