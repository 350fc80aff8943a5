package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// results returns every result of experiment id, by "test/role".
func results(t *testing.T, db string, id int64) map[string]store.Result {
	t.Helper()
	rs := runResults(t, db, id)
	out := map[string]store.Result{}
	for _, r := range rs {
		out[r.Test+"/"+r.Role.Name] = r
	}
	return out
}

// TestRateAndEventsForRoles runs the Insert Benchmark, whose steps have
// roles, with sysbench's --rate and --events. --rate paces each step's
// headline role (the load's inserter, the queries of qp100) at that total
// rate, with latency from the intended start, while a role with a rate of
// its own (qp100's background inserter, 100 rows/s) keeps it. --events ends
// qp100 after that many queries, long before its query time, while the
// load, whose inserter has a count of its own (its 40 batches of 100 rows),
// keeps it.
func TestRateAndEventsForRoles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	base := []string{"run", "--engine", "sqlite", "--suite", "insert", "--rows", "4000", "--inserts", "500",
		"--rates", "100", "--pacing", "even", "--tests", "qp100", "--report-interval", "0", "--store", db}
	code, out, stderr := run(t, Env{}, append(base, "--rate", "50", "--query-time", "2")...)
	if code != ExitOK {
		t.Fatalf("--rate: exit %d\n%s\n%s", code, out, stderr)
	}
	rs := results(t, db, 1)
	load, query, insert := rs["l.i0/insert"], rs["qp100/query"], rs["qp100/insert"]
	// 40 batches at 50/s: the load's schedule lasts 0.8 s (unpaced, SQLite
	// loads 4000 rows in a fraction of that).
	if load.Role.TargetRate != 50 || load.Events != 40 || load.Seconds < 0.75 {
		t.Errorf("l.i0 --rate 50: target %v, %d batches in %.3f s; want 40 in 0.8 s", load.Role.TargetRate, load.Events, load.Seconds)
	}
	// The schedule is never ahead of its rate (its first operation at 0 s);
	// how far a loaded machine leaves it behind is no bound (the runner's
	// fake-time tests check the catching up).
	if r := float64(query.Events+query.Errors) / query.Seconds; query.Role.TargetRate != 50 || r <= 0 ||
		r > 50*1.01+1/query.Seconds || query.Role.Service.P50 <= 0 {
		t.Errorf("qp100 queries --rate 50: target %v, %.1f/s, service p50 %s", query.Role.TargetRate, r, query.Role.Service.P50)
	}
	if insert.Role.TargetRate != 100 {
		t.Errorf("qp100's inserter took --rate: target %v, want its own 100 rows/s", insert.Role.TargetRate)
	}

	code, out, stderr = run(t, Env{}, append(base, "--events", "30", "--query-time", "60")...)
	if code != ExitOK {
		t.Fatalf("--events: exit %d\n%s\n%s", code, out, stderr)
	}
	rs = results(t, db, 2)
	load, query = rs["l.i0/insert"], rs["qp100/query"]
	if n := query.Events + query.Errors; n != 30 || query.Seconds >= 60 {
		t.Errorf("qp100 --events 30: %d queries in %.1f s, want 30 before the 60 s query time", n, query.Seconds)
	}
	if load.Events != 40 {
		t.Errorf("l.i0 --events 30: %d batches, want its own 40", load.Events)
	}
}

// TestEventsCountMeasuredOnly runs point queries with a warm-up and
// --events: the test ends after that many measured operations, those of
// the warm-up not counted.
func TestEventsCountMeasuredOnly(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--events", "2000", "--time", "60", "--warmup-time", "0.5", "--report-interval", "0", "--store", db)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	all, err := st.Results(context.Background(), runs[0].ID, true)
	if err != nil {
		t.Fatal(err)
	}
	var res store.Result
	for _, r := range all {
		if r.Test == "point-query" {
			res = r
		}
	}
	var warm int64
	for _, iv := range res.Intervals {
		if iv.Sec < 0 {
			warm += iv.Events
		}
	}
	if res.Events != 2000 || warm == 0 || res.Seconds >= 60 {
		t.Errorf("--events 2000 after a 0.5 s warm-up: %d measured events (%d in the warm-up) in %.1f s; want 2000 besides the warm-up's",
			res.Events, warm, res.Seconds)
	}
}

// TestRateAndEventsRefusedForDBBench checks that --rate and --events, and
// the spec's rate and events, are refused for a db_bench target, which runs
// each step in its own process: exit 2 naming the flag (or field) and why,
// before any store is created.
func TestRateAndEventsRefusedForDBBench(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	for _, flag := range []string{"--rate", "--events"} {
		code, _, stderr := run(t, Env{}, "run", "--engine", "db_bench", "--suite", "kv", flag, "100", "--store", db)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), "flag "+flag) || !strings.Contains(unwrap(stderr), "db_bench") ||
			!strings.Contains(unwrap(stderr), "own process") {
			t.Errorf("%s with db_bench: exit %d %q, want %d naming the flag and why", flag, code, stderr, ExitUsage)
		}
	}
	sp := writeFile(t, dir, "s.toml", `name = "x"
[[target]]
name = "tool"
engine = "db_bench"
[workload]
suite = "kv"
events = 100
`)
	code, _, stderr := run(t, Env{}, "run", sp, "--store", db)
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "workload.events") || !strings.Contains(unwrap(stderr), "db_bench") {
		t.Errorf("events = 100 with db_bench: exit %d %q, want %d naming workload.events", code, stderr, ExitUsage)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused run created the store %s (%v)", db, err)
	}
}
