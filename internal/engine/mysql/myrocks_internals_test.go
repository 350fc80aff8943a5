package mysql_test

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/runner"
	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// myRocksSmall are the settings of a MyRocks server whose 64 KiB memtables
// fill every few dozen rows of padRow, and whose L0 is compacted at 2 files:
// inserts flush and compact all the time.
var myRocksSmall = map[string]string{
	"default_storage_engine":      "rocksdb",
	"rocksdb_block_cache_size":    "32M",
	"rocksdb_default_cf_options":  "write_buffer_size=64k;level0_file_num_compaction_trigger=2",
	"rocksdb_max_background_jobs": "2",
}

// padRow is the bytes of padding each test insert writes.
const padRow = 1000

// readRecorder is a MyRocks DB whose ReadInternals keeps what each read
// returned, in order, for the test to compare with the series the runner
// made of them.
type readRecorder struct {
	*mysql.DB
	mu    sync.Mutex
	reads []engine.Internals
}

func (r *readRecorder) ReadInternals(ctx context.Context) (engine.Internals, error) {
	in, err := r.DB.ReadInternals(ctx)
	if err == nil {
		r.mu.Lock()
		r.reads = append(r.reads, in)
		r.mu.Unlock()
	}
	return in, err
}

// padInserter inserts rows of padRow bytes, keys from its worker's range.
type padInserter struct {
	c      engine.Conn
	id     int64
	worker int64
}

func (w *padInserter) Op(ctx context.Context) (workload.Tally, error) {
	w.id++
	// Keys in no order, so that each flush's file overlaps the others and
	// compactions rewrite them (sorted keys make them trivial moves).
	key := int64(uint64(w.id)*0x9E3779B97F4A7C15>>24) ^ w.worker
	_, err := w.c.Exec(ctx, "INSERT INTO ins (id, pad) VALUES (?, ?)", key, strings.Repeat("p", padRow))
	return workload.Tally{Statements: 1, Rows: 1}, err
}

func (w *padInserter) Close() error { return w.c.Close() }

// myRocksCounters and myRocksGauges are the MyRocks series the test
// expects as rates and as values.
var (
	myRocksCounters = []string{"status.Rocksdb_rows_inserted", "status.Rocksdb_bytes_written", "status.Rocksdb_wal_bytes",
		"status.Rocksdb_flush_write_bytes", "status.Rocksdb_compact_read_bytes", "status.Rocksdb_compact_write_bytes",
		"status.Rocksdb_stall_micros", "status.Rocksdb_stall_total_slowdowns",
		mysql.CounterFlushes, mysql.CounterFlushSeconds, mysql.CounterCompactions, mysql.CounterCompactionSeconds}
	myRocksGauges = []string{mysql.GaugeL0Files, mysql.GaugeL0Compacting, mysql.GaugeCompactions, mysql.GaugeFlushes,
		mysql.GaugeSSTBytes, mysql.GaugeWriteStopped, "status.Rocksdb_memtable_total", "status.Rocksdb_memtable_unflushed"}
)

// TestMyRocksInternals measures a 3-second step of 1 KB inserts on a
// MyRocks server that flushes and compacts all the time, and checks its
// per-second series against the reads they came from and against SHOW
// GLOBAL STATUS read before and after the step, relations that hold at
// any speed:
//   - MyRocks' counters (rows, WAL, flush and compaction bytes, stalls,
//     flush and compaction jobs and their seconds) are rates and its LSM
//     levels (L0 files, SST bytes, memtable bytes, jobs running) gauges;
//   - each second's rate is its read pair's growth over one time between
//     the two reads, the same for every counter (rate x growth of rows
//     inserted = rows' rate x growth), never below 0, and 0 exactly
//     where the counter did not grow; so the rates times that time add
//     up to the growth from the first read to the last;
//   - that growth is within the growth SHOW GLOBAL STATUS saw around the
//     step.
//
// Then, on the same server at rest, a read of the internals changes none
// of the status counters (ReadStats before and after), and one is compared
// with information_schema's own tables: the L0 files and the flushes and
// compactions done (information_schema.rocksdb_compaction_stats), after
// 300 inserts (the rows-inserted counter grew by exactly 300), a forced
// memtable flush and an L0 compaction (which grew the job counters and the
// flush and compaction bytes; not always their seconds, which the status
// rounds to 10 ms).
func TestMyRocksInternals(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	opened := enginetest.Open(t, engine.Target{Name: "myrocks", Engine: "mariadb", Settings: myRocksSmall, Getenv: getenv})
	db := &readRecorder{DB: opened.(*mysql.DB)}
	c := enginetest.Connect(t, opened)
	if _, err := c.Exec(ctx, "CREATE TABLE ins (id BIGINT PRIMARY KEY, pad VARCHAR(2000) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	status := func() map[string]float64 {
		t.Helper()
		rows, err := c.Values(ctx, "SHOW GLOBAL STATUS LIKE 'Rocksdb%'")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, r := range rows {
			if v, err := strconv.ParseFloat(r[1], 64); err == nil {
				out["status."+r[0]] = v
			}
		}
		return out
	}
	internals := func() map[string]float64 {
		t.Helper()
		in, err := db.DB.ReadInternals(ctx) // not recorded
		if err != nil {
			t.Fatal(err)
		}
		return in.Counters
	}
	// The counters of SHOW ENGINE ROCKSDB STATUS are not in SHOW GLOBAL
	// STATUS: a read of the internals of its own brackets them.
	before := status()
	maps.Copy(before, internals())
	step := workload.Step{Name: "insert", Duration: 3 * time.Second,
		NewWorker: func(ctx context.Context, d engine.DB, i, _ int, _ uint64) (workload.Worker, error) {
			c, err := d.(engine.SQL).Connect(ctx)
			return &padInserter{c: c, worker: int64(i)}, err
		}}
	res, err := runner.Measure(ctx, db, step, 1, 1, runner.Options{})
	if err != nil || res.Statements == 0 || res.Errors > 0 {
		t.Fatalf("insert step: %v, %d statements, %d errors %v", err, res.Statements, res.Errors, res.ErrorSamples)
	}
	after := internals()
	maps.Copy(after, status())
	checkSeries(t, res, db.reads, before, after)
	atRest(t, ctx, db.DB, c)
}

// checkSeries compares the step's series with the reads they came from
// (TestMyRocksInternals).
func checkSeries(t *testing.T, res *store.Result, reads []engine.Internals, before, after map[string]float64) {
	t.Helper()
	byName := map[string]store.EngineSeries{}
	for _, s := range res.Internals {
		byName[s.Name] = s
	}
	for _, names := range []struct {
		list  []string
		gauge bool
	}{{myRocksCounters, false}, {myRocksGauges, true}} {
		for _, name := range names.list {
			if s, ok := byName[name]; !ok || s.Gauge != names.gauge || len(s.Points) == 0 {
				t.Errorf("series %s: present %v, gauge %v, %d points; want gauge %v with points",
					name, ok, s.Gauge, len(s.Points), names.gauge)
			}
		}
	}
	// Read i at boundary k > 0 gives each gauge a point at k-1; a first
	// read at k = 0 gives none. So the gauge's points name every read's
	// boundary.
	var ks []int
	for _, p := range byName["status.Threads_connected"].Points {
		ks = append(ks, p.Sec+1)
	}
	if len(reads) == len(ks)+1 {
		ks = append([]int{0}, ks...)
	}
	if len(reads) != len(ks) || len(reads) < 2 {
		t.Fatalf("%d reads, %d gauge points; want one per read after the first, and 2 reads or more", len(reads), len(ks))
	}
	const ref = "status.Rocksdb_rows_inserted"
	for _, name := range myRocksCounters {
		rate := map[int]float64{}
		for _, p := range byName[name].Points {
			rate[p.Sec] = p.Value
		}
		sum := 0.0 // the rates times the time between their reads
		for i := 1; i < len(reads); i++ {
			grow := reads[i].Counters[name] - reads[i-1].Counters[name]
			growRef := reads[i].Counters[ref] - reads[i-1].Counters[ref]
			for k := ks[i-1]; k < ks[i]; k++ {
				r, ok := rate[k]
				switch {
				case !ok:
					t.Errorf("%s: no point in second %d", name, k)
				case r < 0 || (r == 0) != (grow == 0):
					t.Errorf("%s: rate %v in second %d over a growth of %v; want >= 0, and 0 only without growth", name, r, k, grow)
				case growRef > 0 && math.Abs(r*growRef-rate0(byName[ref], k)*grow) > 1e-9*math.Max(1, r*growRef):
					t.Errorf("%s: rate %v in second %d, %v grown; %s's rate %v, %v grown: not one time between the reads",
						name, r, k, grow, ref, rate0(byName[ref], k), growRef)
				case growRef > 0 && k == ks[i-1]:
					sum += r * growRef / rate0(byName[ref], k)
				}
			}
			if growRef == 0 {
				sum += grow // no time to take from the reference: the growth as read
			}
		}
		first, last := reads[0].Counters[name], reads[len(reads)-1].Counters[name]
		if math.Abs(sum-(last-first)) > 1e-6*math.Max(1, last-first) {
			t.Errorf("%s: rates x time add up to %v, want the growth %v from the first read to the last", name, sum, last-first)
		}
		if first < before[name] || last > after[name] {
			t.Errorf("%s: reads from %v to %v, outside SHOW GLOBAL STATUS's %v before and %v after the step",
				name, first, last, before[name], after[name])
		}
		t.Logf("%-40s grew %12.2f over the reads (%12.2f around the step), %d points", name, last-first,
			after[name]-before[name], len(byName[name].Points))
	}
}

// rate0 is s's value in second k (0 when it has none).
func rate0(s store.EngineSeries, k int) float64 {
	for _, p := range s.Points {
		if p.Sec == k {
			return p.Value
		}
	}
	return 0
}

// atRest inserts 300 rows, flushes the memtable and compacts L0, waits
// until MyRocks has no work pending, and compares one read of its
// internals with information_schema's (TestMyRocksInternals).
func atRest(t *testing.T, ctx context.Context, db *mysql.DB, c engine.Conn) {
	t.Helper()
	idle := func() {
		t.Helper()
		// A server without writes settles; the bound only keeps a broken
		// one from hanging the test (3000 polls of 0.1 s at least).
		for range 3000 {
			busy, err := c.Values(ctx, "SELECT (SELECT COALESCE(SUM(value), 0) FROM information_schema.rocksdb_cfstats "+
				"WHERE stat_type IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')) + "+
				"(SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'ROCKSDB_MANUAL_COMPACTIONS_RUNNING')")
			if err != nil {
				t.Fatal(err)
			}
			in, err := db.ReadInternals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if busy[0][0] == "0" && in.Gauges[mysql.GaugeCompactions]+in.Gauges[mysql.GaugeFlushes] == 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("MyRocks still flushing or compacting after 3000 polls")
	}
	idle()
	// A read of the internals, engine status included, adds nothing to
	// the counters the per-op figures take (ReadStats before and after).
	s0, err := db.ReadStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r0, err := db.ReadInternals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := db.ReadStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range s1 {
		if v != s0[name] {
			t.Errorf("%s: %v, then %v after a read of the internals on an idle server; want no change", name, s0[name], v)
		}
	}
	const rows = 300
	for i := range rows {
		key := -1 - int64(uint64(i+1)*0x9E3779B97F4A7C15>>24) // below the step's keys
		if _, err := c.Exec(ctx, "INSERT INTO ins (id, pad) VALUES (?, ?)", key, strings.Repeat("r", padRow)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"SET GLOBAL rocksdb_force_flush_memtable_now = 1", "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	idle()
	r1, err := db.ReadInternals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := r1.Counters["status.Rocksdb_rows_inserted"] - r0.Counters["status.Rocksdb_rows_inserted"]; d != rows {
		t.Errorf("Rocksdb_rows_inserted grew by %v over %d inserts", d, rows)
	}
	for _, name := range []string{mysql.CounterFlushes, mysql.CounterCompactions, "status.Rocksdb_flush_write_bytes",
		"status.Rocksdb_compact_write_bytes"} {
		if r1.Counters[name] <= r0.Counters[name] {
			t.Errorf("%s: %v, then %v after %d KB of inserts, a flush and an L0 compaction; want growth",
				name, r0.Counters[name], r1.Counters[name], rows*padRow/1000)
		}
	}
	stats, err := c.Values(ctx, "SELECT level, type, SUM(value) FROM information_schema.rocksdb_compaction_stats "+
		"WHERE (level = 'L0' AND type = 'NumFiles') OR (level = 'Sum' AND type IN ('CompCount', 'SizeBytes')) GROUP BY level, type")
	if err != nil {
		t.Fatal(err)
	}
	is := map[string]float64{}
	for _, r := range stats {
		is[r[0]+"."+r[1]], _ = strconv.ParseFloat(r[2], 64)
	}
	jobs := r1.Counters[mysql.CounterFlushes] + r1.Counters[mysql.CounterCompactions]
	if r1.Gauges[mysql.GaugeL0Files] != is["L0.NumFiles"] || jobs != is["Sum.CompCount"] {
		t.Errorf("at rest: %v L0 files and %v jobs; information_schema.rocksdb_compaction_stats: %v",
			r1.Gauges[mysql.GaugeL0Files], jobs, is)
	}
	// The engine status rounds sizes to 3 digits ("3.75 KB").
	if b := r1.Gauges[mysql.GaugeSSTBytes]; math.Abs(b-is["Sum.SizeBytes"]) > 0.01*is["Sum.SizeBytes"] || b == 0 {
		t.Errorf("at rest: SST bytes %v, information_schema %v", b, is["Sum.SizeBytes"])
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range r1.Gauges {
			if strings.HasPrefix(k, "rocksdb_status.") && !yield(k) {
				return
			}
		}
	})
	for _, k := range names {
		t.Logf("at rest: %s = %v", k, r1.Gauges[k])
	}
	t.Logf("at rest: %v flushes in %.2f s, %v compactions in %.2f s", r1.Counters[mysql.CounterFlushes],
		r1.Counters[mysql.CounterFlushSeconds], r1.Counters[mysql.CounterCompactions], r1.Counters[mysql.CounterCompactionSeconds])
}
