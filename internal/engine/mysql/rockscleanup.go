package mysql

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"benchlab/internal/engine"
)

// rocksPendingQuery is whether a memtable flush or a compaction is pending
// in some column family, as information_schema.rocksdb_cfstats flags it.
const rocksPendingQuery = "SELECT COALESCE(SUM(value), 0) FROM information_schema.rocksdb_cfstats " +
	"WHERE stat_type IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')"

// rocksCleanup is MyRocks' part of the cleanup of docs/method.md 1.9 (the
// Insert Benchmark's vac_my), which the sysbench suite's postwrite runs as
// well: wait until no compaction or flush is pending (the scripts poll
// rocksdb_active_compaction_stats, which MariaDB lacks; its
// rocksdb_cfstats flags say the same), flush the memtable
// (rocksdb_force_flush_memtable_now), wait the target's flush wait (20 s by
// default), compact L0 into L1 (rocksdb_compact_lzero_now where the build
// has it; MariaDB's rocksdb_force_flush_memtable_and_lzero_now otherwise),
// and wait for what that left pending. Its line says what ran; its facts
// are the L0 files before and after (SHOW ENGINE ROCKSDB STATUS) and the
// seconds each wait took. On an existing server (dsn) whose account lacks
// PROCESS or SUPER, the flush and compaction are left out and returned as
// skipped.
func (db *DB) rocksCleanup(ctx context.Context) (engine.Cleanup, error) {
	c := engine.Cleanup{Facts: map[string]float64{}}
	before, err := db.readRocksStatus(ctx)
	if isAccessDenied(err) {
		// An existing server's (dsn) account without PROCESS: the
		// cleanup is then the analyze, and the run says so.
		c.Skipped = []string{fmt.Sprintf("MyRocks flush and L0 compaction left out: user %s lacks the PROCESS "+
			"privilege that SHOW ENGINE ROCKSDB STATUS needs", db.user())}
		c.Done = []string{"MyRocks: ANALYZE TABLE (docs/method.md 1.9)"}
		return c, nil
	}
	if err != nil {
		return c, err
	}
	l0Before := before.gauges[GaugeL0Files]
	waited, err := db.waitRocksIdle(ctx)
	if err != nil {
		return c, err
	}
	c.Facts["myrocks_compaction_wait_s"] = waited.Seconds()
	if err := db.setGlobal(ctx, "rocksdb_force_flush_memtable_now"); isAccessDenied(err) {
		c.Skipped = []string{fmt.Sprintf("MyRocks flush and L0 compaction left out: user %s may not SET GLOBAL "+
			"rocksdb_force_flush_memtable_now (SUPER)", db.user())}
		c.Done = []string{"MyRocks: ANALYZE TABLE, wait for pending compaction (docs/method.md 1.9)"}
		return c, nil
	} else if err != nil {
		return c, err
	}
	select {
	case <-time.After(db.storage.flushWait):
	case <-ctx.Done():
		return c, ctx.Err()
	}
	c.Facts["myrocks_flush_wait_s"] = db.storage.flushWait.Seconds()
	compact := "rocksdb_compact_lzero_now"
	if _, ok, err := db.admin.variable(ctx, compact); err != nil {
		return c, db.Wrap(fmt.Errorf("%s: read %s: %w", db.engine, compact, err))
	} else if !ok {
		compact = "rocksdb_force_flush_memtable_and_lzero_now"
	}
	if err := db.setGlobal(ctx, compact); err != nil {
		return c, err
	}
	settled, err := db.waitRocksIdle(ctx)
	if err != nil {
		return c, err
	}
	c.Facts["myrocks_compaction_wait_s"] += settled.Seconds()
	end, err := db.readRocksStatus(ctx)
	if err != nil {
		return c, err
	}
	l0After := end.gauges[GaugeL0Files]
	c.Facts["myrocks_l0_files_before"], c.Facts["myrocks_l0_files_after"] = l0Before, l0After
	c.Done = []string{fmt.Sprintf("MyRocks: ANALYZE TABLE, wait for pending compaction, "+
		"rocksdb_force_flush_memtable_now=1, wait %s, %s=1 (L0 into L1), wait for pending compaction; "+
		"L0 files %.0f before, %.0f after (docs/method.md 1.9)", db.storage.flushWait, compact, l0Before, l0After)}
	return c, nil
}

// setGlobal sets a MyRocks trigger variable to 1.
func (db *DB) setGlobal(ctx context.Context, name string) error {
	if _, err := db.admin.Exec(ctx, "SET GLOBAL "+name+" = 1"); err != nil {
		return db.Wrap(fmt.Errorf("%s: set %s: %w", db.engine, name, err))
	}
	return nil
}

// rocksGauge reads one number of MyRocks' state.
func (db *DB) rocksGauge(ctx context.Context, what, query string) (float64, error) {
	rows, err := db.admin.Values(ctx, query)
	if err == nil && (len(rows) != 1 || len(rows[0]) != 1) {
		err = fmt.Errorf("want one value, got %d rows", len(rows))
	}
	if err == nil {
		var x float64
		if x, err = strconv.ParseFloat(rows[0][0], 64); err == nil {
			return x, nil
		}
	}
	return 0, db.Wrap(fmt.Errorf("%s: MyRocks %s: %w", db.engine, what, err))
}

// waitRocksIdle polls each second until no memtable flush or compaction is
// pending, within maxFlushWait (a server that keeps writing may never be
// idle), and returns how long it waited.
func (db *DB) waitRocksIdle(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(maxFlushWait)
	for time.Now().Before(deadline) {
		pending, err := db.rocksGauge(ctx, "pending compaction", rocksPendingQuery)
		if err != nil {
			return time.Since(start), err
		}
		running, err := db.admin.status(ctx, "Rocksdb_manual_compactions_running")
		if err != nil {
			return time.Since(start), db.Wrap(fmt.Errorf("%s: MyRocks manual compactions: %w", db.engine, err))
		}
		if pending == 0 && running == 0 {
			break
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		}
	}
	return time.Since(start), nil
}
