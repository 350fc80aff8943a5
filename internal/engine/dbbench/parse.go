package dbbench

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine"
)

// Result is what one db_bench benchmark printed: its result line and, with
// --histogram, its percentiles.
type Result struct {
	Name                   string
	MicrosPerOp, OpsPerSec float64
	Seconds                float64
	Ops                    int64
	P50, P75, P99, P999    time.Duration
	P9999, Max             time.Duration
	// Line is the 1-based line of the output that holds the result line.
	Line int
	// Intervals are the benchmark's interval reports
	// (--stats_interval_seconds: "... thread 0: (ops,total) ops and
	// (rate,rate) ops/second in (secs,total) seconds"), in the order
	// printed; none without that flag.
	Intervals []Interval
}

// Interval is one interval report of one db_bench thread: the operations
// it did in the interval and the interval's length.
type Interval struct {
	Thread  int
	Ops     int64
	Seconds float64
}

// Parse reads db_bench's output: one result line per benchmark
// ("readrandom   :       3.998 micros/op 250062 ops/sec 0.080 seconds 20000
// operations; ...") followed by its histogram, and the compaction and DB
// stats that levelstats/stats and --stats_per_interval print. The LSM facts
// are those of the last stats dump (docs/method.md 4.3).
func Parse(out string) ([]Result, engine.LSMStats, error) {
	var results []Result
	st := engine.LSMStats{SizeBytes: -1, L0Files: -1, IngestBytes: -1, FlushBytes: -1,
		CompactReadBytes: -1, CompactWriteBytes: -1, StallMicros: -1, Stalls: -1, Compactions: -1}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	cumWrites := ""        // the write count of the last "Cumulative writes:" line
	var pending []Interval // interval reports since the last result line
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		// Progress lines end in carriage returns; keep what follows the last.
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 9 && f[1] == ":" && f[3] == "micros/op" && f[5] == "ops/sec":
			r := Result{Name: f[0], Line: n, Intervals: pending}
			pending = nil
			r.MicrosPerOp, _ = strconv.ParseFloat(f[2], 64)
			r.OpsPerSec, _ = strconv.ParseFloat(f[4], 64)
			if f[7] == "seconds" {
				r.Seconds, _ = strconv.ParseFloat(f[6], 64)
				r.Ops, _ = strconv.ParseInt(f[8], 10, 64)
			}
			results = append(results, r)
		case strings.Contains(line, " ... thread ") && strings.Contains(line, " ops/second in ("):
			if iv, ok := intervalOf(line); ok {
				pending = append(pending, iv)
			}
		case strings.HasPrefix(line, "Percentiles:") && len(results) > 0:
			r := &results[len(results)-1]
			for i := 1; i+1 < len(f); i += 2 {
				us, _ := strconv.ParseFloat(f[i+1], 64)
				d := time.Duration(us * float64(time.Microsecond))
				switch f[i] {
				case "P50:":
					r.P50 = d
				case "P75:":
					r.P75 = d
				case "P99:":
					r.P99 = d
				case "P99.9:":
					r.P999 = d
				case "P99.99:":
					r.P9999 = d
				}
			}
		case strings.HasPrefix(line, "Min:") && len(f) >= 6 && f[4] == "Max:" && len(results) > 0:
			us, _ := strconv.ParseFloat(f[5], 64)
			results[len(results)-1].Max = time.Duration(us * float64(time.Microsecond))
		case len(f) >= 17 && f[0] == "Sum" && strings.Contains(f[1], "/"):
			if size, err := sizeBytes(f[2], f[3]); err == nil {
				st.SizeBytes = size
			}
			st.Compactions, _ = strconv.ParseInt(f[16], 10, 64)
		case len(f) >= 2 && f[0] == "L0" && strings.Contains(f[1], "/"):
			files, _, _ := strings.Cut(f[1], "/")
			st.L0Files, _ = strconv.ParseInt(files, 10, 64)
		case strings.HasPrefix(line, "Flush(GB): cumulative") && len(f) >= 3:
			st.FlushBytes = gb(strings.TrimSuffix(f[2], ","))
		case strings.HasPrefix(line, "Cumulative compaction:") && len(f) >= 9:
			st.CompactWriteBytes, st.CompactReadBytes = gb(f[2]), gb(f[8])
		case strings.HasPrefix(line, "Cumulative writes:") && len(f) >= 3:
			cumWrites = f[2]
			st.IngestBytes = ingestOf(line)
		case strings.HasPrefix(line, "Interval writes:") && len(f) >= 3:
			// The cumulative line gives GB to two decimals, 0.00 under
			// 5 MB; the interval line gives MB. When the interval spans
			// every write (one stats dump), it is the cumulative figure.
			if f[2] == cumWrites && st.IngestBytes == 0 {
				st.IngestBytes = ingestOf(line)
			}
		case strings.HasPrefix(line, "Cumulative stall:") && len(f) >= 3:
			st.StallMicros = hms(f[2])
		case strings.HasPrefix(line, "Stalls(count):"):
			var n int64
			for _, part := range strings.Split(strings.TrimPrefix(line, "Stalls(count):"), ",") {
				pf := strings.Fields(part)
				if len(pf) > 0 && pf[0] != "interval" {
					v, _ := strconv.ParseInt(pf[0], 10, 64)
					n += v
				}
			}
			st.Stalls = n
		}
	}
	if st.IngestBytes > 0 && st.FlushBytes >= 0 && st.CompactWriteBytes >= 0 {
		st.WriteAmp = engine.WriteAmpOf(st.IngestBytes, st.FlushBytes, st.CompactWriteBytes)
	}
	if len(results) == 0 {
		return nil, st, fmt.Errorf("no result line (\"<benchmark> : N micros/op N ops/sec ...\") in db_bench's output")
	}
	return results, st, nil
}

// intervalOf reads an interval report: "2026/11/26-14:35:23  ... thread 0:
// (602000,602000) ops and (601751.5,601751.5) ops/second in
// (1.000413,1.000413) seconds"; the first figure of each pair is the
// interval's.
func intervalOf(line string) (Interval, bool) {
	_, rest, _ := strings.Cut(line, " ... thread ")
	id, rest, ok := strings.Cut(rest, ": (")
	if !ok {
		return Interval{}, false
	}
	thread, err := strconv.Atoi(id)
	if err != nil {
		return Interval{}, false
	}
	first := func(s string) string { // "602000,602000) ops ..." -> "602000"
		v, _, _ := strings.Cut(s, ",")
		return v
	}
	ops, err := strconv.ParseInt(first(rest), 10, 64)
	if err != nil || ops < 0 {
		return Interval{}, false
	}
	_, secs, ok := strings.Cut(rest, "ops/second in (")
	if !ok {
		return Interval{}, false
	}
	s, err := strconv.ParseFloat(first(secs), 64)
	if err != nil || s <= 0 {
		return Interval{}, false
	}
	return Interval{Thread: thread, Ops: ops, Seconds: s}, true
}

// ingestOf reads the "ingest: 2.06 MB," figure of a writes line, -1 when
// it has none.
func ingestOf(line string) int64 {
	_, rest, ok := strings.Cut(line, "ingest: ")
	if !ok {
		return -1
	}
	rf := strings.Fields(rest)
	if len(rf) < 2 {
		return -1
	}
	n, err := sizeBytes(rf[0], strings.TrimSuffix(rf[1], ","))
	if err != nil {
		return -1
	}
	return n
}

func gb(s string) int64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return int64(v * (1 << 30))
}

func sizeBytes(num, unit string) (int64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, err
	}
	mult := map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	return int64(v * mult), nil
}

// hms parses RocksDB's stall time "HH:MM:SS.sss" into microseconds.
func hms(s string) int64 {
	p := strings.Split(s, ":")
	if len(p) != 3 {
		return -1
	}
	h, _ := strconv.ParseInt(p[0], 10, 64)
	m, _ := strconv.ParseInt(p[1], 10, 64)
	sec, _ := strconv.ParseFloat(p[2], 64)
	return (h*3600+m*60)*1_000_000 + int64(sec*1e6)
}

// ParseStats reads the LSM facts from RocksDB's stats text (the property
// "rocksdb.stats", or db_bench's stats output) without needing result lines.
func ParseStats(text string) engine.LSMStats {
	_, st, _ := Parse(text)
	return st
}
