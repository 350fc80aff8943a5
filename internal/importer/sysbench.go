package importer

import (
	"math"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/store"
)

// sysbenchRun is one run in a sysbench output file: from its version line
// (or the file's start) to the end of its summary.
type sysbenchRun struct {
	start     int // 1-based line of the version line, or 1
	version   string
	threads   int
	threadsAt int
	intervals []store.Interval
	lastSec   float64 // the end of the last interval line, in seconds
	// The summary, each figure with the line that gave it (0: absent).
	transactions, queries, ignored, reconnects, events int64
	tps, qps, eps, totalTime                           float64
	queriesAt, eventsAt, totalAt, latAt, generalAt     int
	started                                            int // "Threads started!"
	fatal                                              int // the first "FATAL:" line
	fatalText                                          string
	sumAt                                              int // the "Latency (ms):" block's last line, "sum:"
	fairnessAt, fairEventsAt, fairTimeAt               int // "Threads fairness:" and its two lines
	lat                                                store.Latency
	percentile                                         float64 // of the summary's "Nth percentile:" line
	lastLine                                           int
}

// parseSysbench reads sysbench 1.0.20's text output (`sysbench <test> run`
// with or without --report-interval): every run in the file (one per
// "sysbench 1.0.20 ..." line; a file of several runs at different thread
// counts gives one result per thread count) becomes a result of test.
func parseSysbench(file string, lines []string, test string, wantThreads int) (*Output, error) {
	var runs []*sysbenchRun
	cur := &sysbenchRun{start: 1}
	for i, raw := range lines {
		n := i + 1
		l := strings.TrimSpace(raw)
		if sysbenchVersion.MatchString(l) {
			if cur.generalAt > 0 || cur.started > 0 || cur.version != "" {
				runs = append(runs, cur)
				cur = &sysbenchRun{}
			}
			cur.start, cur.version = n, l
			continue
		}
		if l != "" {
			cur.lastLine = n
		}
		key, val, _ := strings.Cut(l, ":")
		val = strings.TrimSpace(val)
		var err error
		switch {
		case strings.HasPrefix(l, "[ ") && strings.Contains(l, "s ] thds:"):
			err = cur.interval(l)
		case key == "Number of threads":
			cur.threads, err = strconv.Atoi(val)
			cur.threadsAt = n
		case l == "Threads started!":
			cur.started = n
		case strings.HasPrefix(l, "FATAL:") && cur.fatal == 0:
			cur.fatal, cur.fatalText = n, l
		case key == "transactions":
			cur.transactions, cur.tps, err = countAndRate(val)
		case key == "queries":
			cur.queries, cur.qps, err = countAndRate(val)
			cur.queriesAt = n
		case key == "ignored errors":
			cur.ignored, _, err = countAndRate(val)
		case key == "reconnects":
			cur.reconnects, _, err = countAndRate(val)
		case key == "events per second":
			cur.eps, err = strconv.ParseFloat(val, 64)
		case l == "General statistics:":
			cur.generalAt = n
		case key == "total time":
			cur.totalTime, err = strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
			cur.totalAt = n
		case key == "total number of events":
			cur.events, err = strconv.ParseInt(val, 10, 64)
			cur.eventsAt = n
		case l == "Latency (ms):":
			cur.latAt = n
		case cur.latAt > 0 && (key == "min" || key == "avg" || key == "max" || strings.HasSuffix(key, " percentile")):
			err = cur.latency(key, val)
		case cur.latAt > 0 && key == "sum":
			cur.sumAt = n
		case l == "Threads fairness:":
			cur.fairnessAt = n
		case cur.fairnessAt > 0 && key == "events (avg/stddev)":
			cur.fairEventsAt = n
		case cur.fairnessAt > 0 && key == "execution time (avg/stddev)":
			cur.fairTimeAt = n
		}
		if err != nil {
			return nil, errorf(file, n, "%v; want sysbench 1.0.20's %q line", err, key)
		}
	}
	runs = append(runs, cur)
	out := &Output{Tool: Sysbench}
	seen := map[int]int{}
	for _, r := range runs {
		res, err := r.result(file, test)
		if err != nil {
			return nil, err
		}
		if wantThreads > 0 && res.Threads != wantThreads {
			return nil, errorf(file, r.threadsAt, "sysbench ran %d threads; --threads says %d", res.Threads, wantThreads)
		}
		if at, dup := seen[res.Threads]; dup {
			return nil, errorf(file, r.start, "a second run at %d threads (the first begins on line %d); "+
				"a file holds one run per thread count: give each repeat its own file", res.Threads, at)
		}
		seen[res.Threads] = r.start
		if out.Version == "" {
			out.Version = r.version
		}
		out.Results = append(out.Results, res)
	}
	return out, nil
}

// countAndRate reads "153315 (50986.49 per sec.)".
func countAndRate(v string) (int64, float64, error) {
	f := strings.Fields(strings.NewReplacer("(", " ", ")", " ").Replace(v))
	if len(f) < 3 || f[2] != "per" {
		return 0, 0, errNum(v)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, errNum(v)
	}
	rate, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return 0, 0, errNum(v)
	}
	return n, rate, nil
}

type numError string

func (e numError) Error() string { return "cannot read " + strconv.Quote(string(e)) }

func errNum(v string) error { return numError(v) }

// interval reads one per-interval line:
//
//	[ 1s ] thds: 8 tps: 100.00 qps: 1600.00 (r/w/o: 1400.00/0.00/200.00) lat (ms,95%): 1.23 err/s: 0.00 reconn/s: 0.00
//	[ 1s ] thds: 1 eps: 2236.73 lat (ms,95%): 0.50
func (r *sysbenchRun) interval(l string) error {
	head, rest, _ := strings.Cut(strings.TrimPrefix(l, "[ "), "s ]")
	end, err := strconv.ParseFloat(strings.TrimSpace(head), 64)
	if err != nil || end <= r.lastSec {
		return errNum(head)
	}
	f := strings.Fields(rest)
	vals := map[string]float64{}
	pct := ""
	for i := 0; i+1 < len(f); i++ {
		k := f[i]
		if strings.HasPrefix(k, "(ms,") && strings.HasSuffix(k, "%):") {
			pct, k = strings.TrimSuffix(strings.TrimPrefix(k, "(ms,"), "%):"), "lat"
		} else if !strings.HasSuffix(k, ":") {
			continue
		}
		v, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil {
			continue // "(r/w/o: 1/2/3)" and the like
		}
		vals[strings.TrimSuffix(k, ":")] = v
		i++
	}
	rate, ok := vals["qps"]
	if !ok {
		rate, ok = vals["eps"]
	}
	events, okEv := vals["tps"]
	if !okEv {
		events = rate
	}
	if !ok {
		return errNum(l)
	}
	for _, v := range vals {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return errNum(l)
		}
	}
	if r.threads == 0 {
		r.threads = int(vals["thds"])
	}
	secs := end - r.lastSec
	iv := store.Interval{Sec: len(r.intervals), Seconds: secs, Statements: round(rate * secs), Events: round(events * secs),
		Errors: round(vals["err/s"] * secs)}
	if pct == "95" {
		iv.P95 = msDuration(vals["lat"])
	}
	r.intervals = append(r.intervals, iv)
	r.lastSec = end
	return nil
}

// latency reads one line of the summary's "Latency (ms):" block.
func (r *sysbenchRun) latency(key, val string) error {
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return errNum(val)
	}
	d := msDuration(v)
	switch key {
	case "avg":
		r.lat.Mean = d
	case "max":
		r.lat.Max = d
	case "min":
	default: // "95th percentile"
		p, err := strconv.ParseFloat(strings.TrimRight(strings.TrimSuffix(key, " percentile"), "thsrdn"), 64)
		if err != nil {
			return errNum(key)
		}
		r.percentile = p
		switch p {
		case 50:
			r.lat.P50 = d
		case 95:
			r.lat.P95 = d
		case 99:
			r.lat.P99 = d
		case 99.9:
			r.lat.P999 = d
		}
	}
	return nil
}

// result turns a parsed run into a result, or says what the run lacks.
func (r *sysbenchRun) result(file, test string) (store.Result, error) {
	switch {
	case r.generalAt == 0 && r.fatal > 0:
		return store.Result{}, errorf(file, r.fatal, "sysbench failed (%s) and printed no summary: the run has no result",
			r.fatalText)
	case r.generalAt == 0 && r.started > 0:
		return store.Result{}, errorf(file, r.lastLine, "the output ends before sysbench's summary (\"General statistics:\"): "+
			"the run was cut short or the file truncated; want the whole output of `sysbench <test> run`")
	case r.generalAt == 0:
		return store.Result{}, errorf(file, r.start, "no sysbench result: no summary (\"General statistics:\" with "+
			"\"total time:\") follows; want the whole output of `sysbench <test> run`")
	case r.totalAt == 0 || r.eventsAt == 0:
		return store.Result{}, errorf(file, r.lastLine, "the summary ends before \"total time:\" and \"total number of events:\": "+
			"the file is truncated")
	case r.latAt == 0 || r.lat.Mean == 0 && r.lat.Max == 0:
		return store.Result{}, errorf(file, r.lastLine, "the summary ends before its \"Latency (ms):\" block: the file is truncated")
	// sysbench 1.0.20 ends every run's summary with the latency's "sum:"
	// line and the "Threads fairness:" section: a file cut before them
	// may have been cut inside a figure (95th percentile: 0.27 read as 0.).
	case r.sumAt == 0:
		return store.Result{}, errorf(file, r.lastLine, "the \"Latency (ms):\" block ends before its \"sum:\" line: "+
			"the file is truncated; want the whole output of `sysbench <test> run`")
	case r.fairnessAt == 0 || r.fairEventsAt == 0 || r.fairTimeAt == 0:
		return store.Result{}, errorf(file, r.lastLine, "the summary ends before its \"Threads fairness:\" section with "+
			"\"events (avg/stddev):\" and \"execution time (avg/stddev):\": the file is truncated; "+
			"want the whole output of `sysbench <test> run`")
	case min(r.transactions, r.queries, r.ignored, r.reconnects, r.events) < 0 || min(r.tps, r.qps, r.eps, r.totalTime) < 0 ||
		math.IsInf(r.totalTime, 0) || math.IsNaN(r.totalTime):
		return store.Result{}, errorf(file, r.generalAt, "a negative or infinite figure in the summary; want sysbench's own output")
	case r.threads <= 0:
		return store.Result{}, errorf(file, r.start, "no thread count (\"Number of threads: N\" or per-interval \"thds: N\"); "+
			"want sysbench's whole output")
	}
	family, group := groupOf(Sysbench, test)
	res := store.Result{Test: test, Family: family, Group: group, Threads: r.threads, Metric: "qps", Status: store.StatusOK,
		Latency: r.lat, Errors: r.ignored, Intervals: r.intervals, Facts: map[string]float64{}}
	// The headline is sysbench's own per-second figure (METHOD.md 2.6:
	// QPS is the per-second value of the queries: line), so the time is
	// the one sysbench divided by, not "total time", which also counts
	// the threads' start and end.
	switch {
	case r.queriesAt > 0:
		res.Statements, res.Events = r.queries, r.transactions
		res.Seconds = secondsOf(r.queries, r.qps, r.totalTime)
		res.Facts[store.FactToolOpsPerSec] = r.qps
	case r.eps > 0: // cpu, memory, threads, mutex: events only
		res.Statements, res.Events = r.events, r.events
		res.Seconds = secondsOf(r.events, r.eps, r.totalTime)
		res.Facts[store.FactToolOpsPerSec] = r.eps
	default:
		res.Statements, res.Events, res.Seconds = r.events, r.events, r.totalTime
	}
	if r.reconnects > 0 {
		res.Facts[FactReconnects] = float64(r.reconnects)
	}
	if r.percentile > 0 {
		res.Facts[FactPercentile] = r.percentile
	}
	res.Facts[FactTotalTime] = r.totalTime
	return res, nil
}

// Facts an imported sysbench result keeps besides its counts.
const (
	// FactTotalTime is sysbench's "total time:" in seconds.
	FactTotalTime = "tool_total_time_s"
	// FactPercentile is the latency percentile sysbench printed (its
	// --percentile, 95 by default); the figure is in the matching
	// latency field when it is 50, 95, 99 or 99.9.
	FactPercentile = "tool_latency_percentile"
	// FactReconnects is sysbench's reconnects, when there were any.
	FactReconnects = "tool_reconnects"
)

// secondsOf is the time a tool divided n by to print rate per second;
// total when the rate is 0.
func secondsOf(n int64, rate, total float64) float64 {
	if rate <= 0 || n <= 0 {
		return total
	}
	return float64(n) / rate
}

func round(v float64) int64 { return int64(math.Round(v)) }

func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}
