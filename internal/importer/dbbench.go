package importer

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine/dbbench"
	"benchlab/internal/store"
)

// parseDBBench reads db_bench's output with the db_bench engine's parser
// (dbbench.Parse): one result per result line, named after its benchmark
// (a benchmark run twice in one file: readrandom, readrandom.2), with the
// latency percentiles of --histogram and the interval reports of
// --stats_interval_seconds as the series.
func parseDBBench(file, text string, lines []string, threads int) (*Output, error) {
	if err := checkDBBench(file, lines); err != nil {
		return nil, err
	}
	results, _, err := dbbench.Parse(text)
	if err != nil {
		return nil, errorf(file, 0, "no db_bench result: no line \"<benchmark> : N micros/op N ops/sec N seconds N operations\"; want %s", want(DBBench))
	}
	out := &Output{Tool: DBBench}
	for i, l := range lines {
		if strings.HasPrefix(l, "RocksDB:") {
			out.Version = strings.Join(strings.Fields(l), " ")
			if f := strings.Fields(l); len(f) >= 3 && f[1] == "version" {
				out.EngineVersion = f[2]
			}
		}
		if v, ok := strings.CutPrefix(l, "Date:"); ok && out.Date.IsZero() {
			d, err := time.ParseInLocation(time.ANSIC, strings.TrimSpace(v), time.Local)
			if err != nil {
				return nil, errorf(file, i+1, "cannot read the date %q; want db_bench's \"Date: Mon Jan  2 15:04:05 2006\"", strings.TrimSpace(v))
			}
			out.Date = d
		}
	}
	count := map[string]int{}
	reported := 0 // the most threads that sent interval reports for one benchmark
	for _, r := range results {
		if r.Ops <= 0 || r.Seconds <= 0 && r.OpsPerSec <= 0 {
			return nil, errorf(file, r.Line, "the result line of %s has no operations or time; want \"... N ops/sec N seconds N operations\"", r.Name)
		}
		count[r.Name]++
		test := r.Name
		if count[r.Name] > 1 {
			test += "." + strconv.Itoa(count[r.Name])
		}
		family, group := groupOf(DBBench, r.Name)
		res := store.Result{Test: test, Family: family, Group: group, Metric: "qps", Status: store.StatusOK,
			Events: r.Ops, Statements: r.Ops, Seconds: r.Seconds,
			Latency: store.Latency{Mean: time.Duration(r.MicrosPerOp * float64(time.Microsecond)),
				P50: r.P50, P99: r.P99, P999: r.P999, Max: r.Max},
			Facts: map[string]float64{store.FactToolOpsPerSec: r.OpsPerSec}}
		// The headline is db_bench's own ops/sec: its time, printed to
		// the millisecond, is kept as a fact.
		res.Facts[FactTotalTime] = r.Seconds
		if r.OpsPerSec > 0 {
			res.Seconds = float64(r.Ops) / r.OpsPerSec
		}
		var n int
		res.Intervals, n = intervalsOf(r.Intervals)
		reported = max(reported, n)
		out.Results = append(out.Results, res)
	}
	// db_bench does not print its --threads: the flag's, else the threads
	// that sent interval reports, else db_bench's default, 1.
	if threads == 0 {
		threads = max(reported, 1)
	}
	for i := range out.Results {
		out.Results[i].Threads = threads
	}
	return out, nil
}

// checkDBBench refuses a file cut short: a result line cut within its
// figures, or a benchmark begun ("DB path: [...]") whose result line never
// came.
func checkDBBench(file string, lines []string) error {
	open := 0 // the line of a "DB path:" not yet followed by a result line
	for i, raw := range lines {
		l := lastCR(raw)
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "DB path:"):
			open = i + 1
		case dbbenchResult.MatchString(l):
			if len(f) < 10 || f[5] != "ops/sec" || f[7] != "seconds" || !strings.HasPrefix(f[9], "operations") {
				return errorf(file, i+1, "a result line cut short; want \"<benchmark> : N micros/op N ops/sec N seconds N operations; ...\"")
			}
			open = 0
		}
	}
	if open > 0 {
		return errorf(file, open, "a benchmark begins here but the file ends before its result line: "+
			"the run was cut short or the file truncated")
	}
	return nil
}

// intervalsOf makes the 1-second series of a benchmark from its interval
// reports: the k-th report of every thread is interval k (their
// operations summed, the longest of their times), and the number of
// threads that reported.
func intervalsOf(reports []dbbench.Interval) ([]store.Interval, int) {
	byThread := map[int][]dbbench.Interval{}
	for _, r := range reports {
		byThread[r.Thread] = append(byThread[r.Thread], r)
	}
	ids := make([]int, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var out []store.Interval
	for _, id := range ids {
		for k, r := range byThread[id] {
			if k == len(out) {
				out = append(out, store.Interval{Sec: k})
			}
			out[k].Events += r.Ops
			out[k].Statements += r.Ops
			out[k].Seconds = max(out[k].Seconds, r.Seconds)
		}
	}
	return out, len(ids)
}
