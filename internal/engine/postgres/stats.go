package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// statView is one cumulative statistics view and the counters ReadStats keeps
// from it. Every column listed is a total that only grows (no gauges, no
// timestamps); a column the server's version lacks is left out, so one
// list serves every version.
type statView struct {
	name string
	// since is the first server_version_num that has the view.
	since int
	// where restricts a per-database view to the benchmark database.
	where string
	// query, when set, is the statement that returns the row as JSON
	// instead of the view's row.
	query   string
	columns []string
}

// statViews are the counters ReadStats reads, named "<view>.<column>":
//
//   - pg_stat_database, the benchmark database only: transactions
//     (xact_commit, xact_rollback), shared buffer misses and hits (blks_read:
//     blocks read from the kernel, page cache or disk; blks_hit), rows
//     returned by scans and fetched by index scans, rows written, temporary
//     files and bytes (sorts and hashes spilled out of work_mem), deadlocks.
//   - pg_stat_bgwriter, the whole server: checkpoints by time and by request
//     (max_wal_size reached) and the buffers they wrote, buffers written by
//     the background writer and by backends (a backend writing dirty buffers
//     itself means the writers fell behind), backends' own fsyncs, buffers
//     allocated. PostgreSQL 17 moved the checkpoint columns to
//     pg_stat_checkpointer and dropped the backend ones (pg_stat_io has them).
//   - pg_stat_checkpointer (17+): checkpoints by time and by request, buffers
//     written.
//   - pg_stat_wal (14+), the whole server: WAL records, full page images
//     (the first change of a page after a checkpoint), bytes, times WAL
//     buffers were full, WAL writes and syncs (PostgreSQL 18 moved the last
//     two to pg_stat_io).
//   - pg_exact (10+), no view but two positions read from the server's
//     shared state at the moment, with no delay: wal_insert_bytes, the WAL
//     insert position (pg_current_wal_insert_lsn, so its growth is the WAL
//     bytes written), and xids_assigned, the next transaction id
//     (txid_current_snapshot's xmax, so its growth counts the transactions
//     that wrote). Both cover the whole server; neither exists on a standby.
var statViews = []statView{
	{name: "pg_stat_database", where: "datname = current_database()", columns: []string{
		"xact_commit", "xact_rollback", "blks_read", "blks_hit", "tup_returned", "tup_fetched",
		"tup_inserted", "tup_updated", "tup_deleted", "temp_files", "temp_bytes", "deadlocks"}},
	{name: "pg_stat_bgwriter", columns: []string{
		"checkpoints_timed", "checkpoints_req", "buffers_checkpoint", "buffers_clean", "maxwritten_clean",
		"buffers_backend", "buffers_backend_fsync", "buffers_alloc"}},
	{name: "pg_stat_checkpointer", since: 170000, columns: []string{"num_timed", "num_requested", "buffers_written"}},
	{name: "pg_stat_wal", since: 140000, columns: []string{
		"wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full", "wal_write", "wal_sync"}},
	{name: "pg_exact", since: 100000, query: "SELECT CASE WHEN NOT pg_is_in_recovery() THEN json_build_object(" +
		"'wal_insert_bytes', pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0'), " +
		"'xids_assigned', txid_snapshot_xmax(txid_current_snapshot())) END",
		columns: []string{"wal_insert_bytes", "xids_assigned"}},
}

// ReadStats reads the counters of statViews on the administrative connection,
// in one statement: each view's row as JSON, so a column that the server's
// version lacks is simply absent rather than an error.
//
// Precision: since PostgreSQL 15, a backend adds its pending counts to the
// shared statistics when it goes idle outside a transaction, at most once a
// second (PGSTAT_MIN_INTERVAL), or 10 s after it went idle
// (PGSTAT_IDLE_INTERVAL), and at its exit, before it leaves
// pg_stat_activity; the background writer and the checkpointer report on
// their own cycles. So a read while the workers run misses up to about the
// last second of each one's work. The runner closes the workers' sessions
// before its last read, and ReadStats first waits (up to a second) until the
// backends of the sessions closed since its last read have left
// pg_stat_activity: the end of a step is then exact, and its start early by
// up to a second, whose work (the warm-up's) the step's counts include; a
// step without warm-up has nothing pending at its start. A step of T
// seconds after a warm-up thus over-counts by up to 1/T of its work (a 60 s
// step: under 2%). Before PostgreSQL 15 the counts went through the
// statistics collector, with delays of the same order. pg_exact's two
// positions have no such delay: they are exact at every read, warm-up or
// not. Each read is its own transaction, so it sees fresh values whatever
// stats_fetch_consistency says (no pg_stat_clear_snapshot needed); the
// reads' own commits are taken off pg_stat_database.xact_commit
// (readViews).
func (db *DB) ReadStats(ctx context.Context) (map[string]float64, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if err := db.loadViews(ctx); err != nil {
		return nil, err
	}
	if err := db.awaitEnded(ctx); err != nil {
		return nil, err
	}
	return db.readCounters(ctx)
}

// loadViews finds the statistics views of the server's version, once
// (under statsMu).
func (db *DB) loadViews(ctx context.Context) error {
	if db.statsViews == nil {
		var num int
		db.ownXacts++
		if err := db.admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
			return db.Wrap(fmt.Errorf("postgres: statistics: server version: %w", err))
		}
		for _, v := range statViews {
			if num >= v.since {
				db.statsViews = append(db.statsViews, v)
			}
		}
	}
	return nil
}

// readCounters reads the counters of the server's statistics views in one
// statement (under statsMu).
func (db *DB) readCounters(ctx context.Context) (map[string]float64, error) {
	out, _, err := db.readViews(ctx, nil)
	return out, err
}

// readViews reads the counters of the server's statistics views and, in
// the same statement, the JSON objects of extra (one scalar subquery
// each), under statsMu. The statement is a transaction of its own:
// xact_commit has every earlier one of the statistics reads taken off
// (ownXacts), so the reads do not count as the workload's commits (an
// idle session publishes its counts within a second, so the last second's
// reads may still be on their way).
func (db *DB) readViews(ctx context.Context, extra []string) (map[string]float64, [][]byte, error) {
	selects := make([]string, 0, len(db.statsViews)+len(extra))
	for _, v := range db.statsViews {
		q := "SELECT row_to_json(v) FROM " + v.name + " v"
		if v.where != "" {
			q += " WHERE " + v.where
		}
		if v.query != "" {
			q = v.query
		}
		selects = append(selects, "("+q+")")
	}
	for _, q := range extra {
		selects = append(selects, "("+q+")")
	}
	raw := make([][]byte, len(selects))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	own := db.ownXacts
	db.ownXacts++
	if err := db.admin.QueryRow(ctx, "SELECT "+strings.Join(selects, ", ")).Scan(dest...); err != nil {
		return nil, nil, db.Wrap(fmt.Errorf("postgres: statistics: %w", err))
	}
	out := map[string]float64{}
	for i, v := range db.statsViews {
		if raw[i] == nil {
			continue // no row (a database the view does not list yet)
		}
		var row map[string]any
		if err := json.Unmarshal(raw[i], &row); err != nil {
			return nil, nil, fmt.Errorf("postgres: statistics: %s: %w", v.name, err)
		}
		for _, c := range v.columns {
			if x, ok := row[c].(float64); ok {
				out[v.name+"."+c] = x
			}
		}
	}
	if v, ok := out["pg_stat_database.xact_commit"]; ok {
		out["pg_stat_database.xact_commit"] = v - own
	}
	return out, raw[len(db.statsViews):], nil
}

// maxEnded bounds the closed sessions ReadStats waits for: the most recent
// ones (a step that opens a session per operation closes thousands, whose
// older backends are long gone).
const maxEnded = 256

// ending notes that a worker session's backend is about to exit (under
// statsMu).
func (db *DB) ending(pid uint32) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if len(db.ended) == maxEnded {
		db.ended = db.ended[1:]
	}
	db.ended = append(db.ended, pid)
}

// awaitEnded waits until the backends of the sessions closed since the last
// read have left pg_stat_activity, having added their last counts to the
// shared statistics, for at most a second (then the counts may miss their
// last second); it holds statsMu.
func (db *DB) awaitEnded(ctx context.Context) error {
	if len(db.ended) == 0 {
		return nil
	}
	pids := make([]int64, len(db.ended))
	for i, p := range db.ended {
		pids[i] = int64(p)
	}
	db.ended = db.ended[:0]
	deadline := time.Now().Add(time.Second)
	for {
		var left int
		db.ownXacts++
		if err := db.admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&left); err != nil {
			return db.Wrap(fmt.Errorf("postgres: statistics: sessions ending: %w", err))
		}
		if left == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
