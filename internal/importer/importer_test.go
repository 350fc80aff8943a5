package importer_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/all"
	"benchlab/internal/importer"
	"benchlab/internal/store"
)

// The files under testdata are outputs of real runs on this machine
// (sysbench 1.0.20 oltp_point_select and oltp_read_write --percentile=99
// on PostgreSQL 15, Debian's db_bench 7.8.3 fillseq,readrandom with
// --stats_interval_seconds=1), two of them cut short. The cli package's
// import tests run both tools afresh.

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSysbench reads a point-select run's summary and series: the headline
// is sysbench's own queries per second, the latency its avg, max and 95th
// percentile, and nothing it did not print is filled in.
func TestSysbench(t *testing.T) {
	out, err := importer.Parse(importer.Sysbench, "point-query.1.txt", read(t, "sysbench-point-select.txt"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)" || len(out.Results) != 1 {
		t.Fatalf("version %q, %d results", out.Version, len(out.Results))
	}
	r := out.Results[0]
	if r.Test != "point-query" || r.Group != "point queries" || r.Threads != 2 {
		t.Errorf("test %q group %q threads %d; want point-query (from the file name), point queries, 2", r.Test, r.Group, r.Threads)
	}
	if r.Statements != 153315 || r.Events != 153315 || r.Errors != 0 {
		t.Errorf("queries %d transactions %d errors %d; want 153315, 153315, 0", r.Statements, r.Events, r.Errors)
	}
	if got := r.Throughput(); got < 50986.485 || got > 50986.495 {
		t.Errorf("throughput %.3f; want sysbench's 50986.49 queries per second", got)
	}
	want := store.Latency{Mean: 40 * time.Microsecond, P95: 60 * time.Microsecond, Max: 82700 * time.Microsecond}
	if r.Latency != want {
		t.Errorf("latency %+v; want %+v (p50, p99 and p99.9 absent)", r.Latency, want)
	}
	if len(r.Intervals) != 2 || r.Intervals[0].Statements != 34866 || r.Intervals[1].Statements != 50777 ||
		r.Intervals[0].P95 != 170*time.Microsecond || r.Intervals[1].Sec != 1 || r.Intervals[0].Max != 0 {
		t.Errorf("intervals %+v; want 34866 and 50777 queries, p95 0.17 ms then 0.05 ms, no max", r.Intervals)
	}
	if r.Eff != nil || r.Facts["tool_total_time_s"] != 3.0053 {
		t.Errorf("efficiency %+v, facts %v; want none, and total time 3.0053", r.Eff, r.Facts)
	}
}

// TestSysbenchOtherPercentile keeps a --percentile=99 run's figure as p99,
// not p95, with the transactions, ignored errors and the test named by
// the flag.
func TestSysbenchOtherPercentile(t *testing.T) {
	out, err := importer.Parse(importer.Sysbench, "x.txt", read(t, "sysbench-read-write-p99.txt"), importer.Options{Test: "read-write_range=100"})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Test != "read-write_range=100" || r.Group != "writes" || r.Events != 750 || r.Statements != 15179 || r.Errors != 10 {
		t.Errorf("%s (%s): %d transactions, %d queries, %d errors; want writes, 750, 15179, 10", r.Test, r.Group, r.Events, r.Statements, r.Errors)
	}
	if r.Latency.P99 != 7980*time.Microsecond || r.Latency.P95 != 0 || r.Intervals[0].P95 != 0 || r.Facts["tool_latency_percentile"] != 99 {
		t.Errorf("latency %+v, first interval p95 %v; want p99 7.98 ms and no p95", r.Latency, r.Intervals[0].P95)
	}
}

// TestDBBench reads db_bench's results with the db_bench engine's parser:
// one per benchmark, ops/sec as the headline, the histogram's percentiles
// and the interval reports as the series.
func TestDBBench(t *testing.T) {
	out, err := importer.Parse(importer.DBBench, "dbb.log", read(t, "dbbench-intervals.txt"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.EngineVersion != "7.8.3" || out.Version != "RocksDB: version 7.8.3" || out.Date.Format(time.ANSIC) != "Thu Nov 26 14:35:22 2026" {
		t.Errorf("version %q %q date %v", out.Version, out.EngineVersion, out.Date)
	}
	if len(out.Results) != 2 {
		t.Fatalf("%d results, want fillseq and readrandom", len(out.Results))
	}
	fill, rr := out.Results[0], out.Results[1]
	if fill.Test != "fillseq" || fill.Group != "load" || fill.Events != 20000 || fill.Threads != 1 {
		t.Errorf("fillseq: %+v", fill)
	}
	if got := rr.Throughput(); rr.Test != "readrandom" || rr.Events != 1942999 || got < 647416.99 || got > 647417.01 {
		t.Errorf("readrandom: %s %d ops at %.2f/s; want 1942999 at db_bench's 647417", rr.Test, rr.Events, got)
	}
	if rr.Latency.P99 != 2960*time.Nanosecond || rr.Latency.P50 != 890*time.Nanosecond || rr.Latency.P95 != 0 {
		t.Errorf("readrandom latency %+v; want p50 0.89 us, p99 2.96 us, no p95", rr.Latency)
	}
	if len(rr.Intervals) != 2 || rr.Intervals[0].Events != 602000 || rr.Intervals[1].Events != 683000 || len(fill.Intervals) != 0 {
		t.Errorf("readrandom intervals %+v; want 602000 then 683000 operations", rr.Intervals)
	}
	out, err = importer.Parse(importer.DBBench, "dbb.log", read(t, "dbbench-intervals.txt"), importer.Options{Threads: 4})
	if err != nil || out.Results[0].Threads != 4 {
		t.Errorf("with Threads 4: %v, %+v", err, out)
	}
}

// TestBadFiles refuses each kind of bad file with its name, the line and
// what was expected.
func TestBadFiles(t *testing.T) {
	for _, c := range []struct {
		name, tool, file string
		data             []byte
		o                importer.Options
		want             string
		line             int
	}{
		{"empty", importer.Sysbench, "e.txt", []byte("\n \n"), importer.Options{}, "empty", 0},
		{"truncated sysbench", importer.Sysbench, "t.txt", read(t, "sysbench-truncated.txt"), importer.Options{}, "truncated", 17},
		{"truncated db_bench", importer.DBBench, "t.log", read(t, "dbbench-truncated.txt"), importer.Options{}, "cut short", 48},
		{"db_bench as sysbench", importer.Sysbench, "d.log", read(t, "dbbench-intervals.txt"), importer.Options{}, "--tool dbbench", 1},
		{"sysbench as db_bench", importer.DBBench, "s.txt", read(t, "sysbench-point-select.txt"), importer.Options{}, "--tool sysbench", 1},
		{"no result", importer.Sysbench, "n.txt", []byte("hello\nworld\n"), importer.Options{}, "no sysbench result", 1},
		{"no db_bench result", importer.DBBench, "n.txt", []byte("hello\n"), importer.Options{}, "no db_bench result", 0},
		{"threads", importer.Sysbench, "s.txt", read(t, "sysbench-point-select.txt"), importer.Options{Threads: 8}, "--threads says 8", 4},
		{"two runs at one thread count", importer.Sysbench, "s.txt",
			append(read(t, "sysbench-point-select.txt"), read(t, "sysbench-point-select.txt")...), importer.Options{}, "a second run at 2 threads", 41},
		{"binary", importer.Sysbench, "b.bin", []byte("sysbench 1.0.20\n\x00\x01"), importer.Options{}, "not a text file", 2},
	} {
		_, err := importer.Parse(c.tool, c.file, c.data, c.o)
		var ie *importer.Error
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v; want an *importer.Error", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || ie.Line != c.line || ie.File != c.file {
			t.Errorf("%s: %q (line %d); want %q at line %d of %s", c.name, err, ie.Line, c.want, c.line, c.file)
		}
	}
}

// TestTestFromFile names tests after their files, repeat numbers dropped.
func TestTestFromFile(t *testing.T) {
	for in, want := range map[string]string{"/x/point-query.1.txt": "point-query", "point-query-2.log": "point-query",
		"scan.txt": "scan", "oltp_read_only_3": "oltp_read_only", "t1.txt": "t1", "7.txt": "7"} {
		if got := importer.TestFromFile(in); got != want {
			t.Errorf("TestFromFile(%q) = %q, want %q", in, got, want)
		}
	}
}
