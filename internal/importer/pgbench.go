package importer

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/store"
)

// PGBench is pgbench's tool name as the store keeps it.
const PGBench = "pgbench"

// TPS is an imported pgbench result's headline: transactions per second as
// pgbench printed it (without the initial connection time). It is a unit of
// its own: a pgbench transaction is a script, not a statement, so a tps is
// never set against a queries-per-second figure.
var TPS = metric.Register(metric.Metric{
	Name: "tps", Unit: "transactions/s", Legend: "transactions (script runs) per second, as pgbench printed it",
	Direction: analysis.HigherIsBetter, Symbol: "TPS",
	Value:  func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) }, SeriesUnit: "transactions",
})

// Facts an imported pgbench result keeps besides its counts.
const (
	// FactLatencyStddev is pgbench's "latency stddev" in milliseconds.
	FactLatencyStddev = "tool_latency_stddev_ms"
	// FactConnectMS is pgbench's "initial connection time" in milliseconds.
	FactConnectMS = "tool_initial_connection_ms"
	// FactScale is pgbench's "scaling factor".
	FactScale = "tool_scaling_factor"
	// FactWorkerThreads is pgbench's "number of threads" (its worker
	// threads; its clients are the result's threads).
	FactWorkerThreads = "tool_worker_threads"
	// FactScriptShare is a script's share of all transactions, in percent.
	FactScriptShare = "tool_script_share_pct"
)

var (
	pgbenchVersion  = regexp.MustCompile(`^pgbench \(([^,)\s]+)(?:[^,]*)(?:, server ([^)\s]+))?`)
	pgbenchProgress = regexp.MustCompile(`^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms stddev ([0-9.]+|NaN)(?:, (?:lag [0-9.]+ ms, )?(\d+) failed)?`)
	pgbenchTPS      = regexp.MustCompile(`^tps = ([0-9.]+) \((without initial connection time|excluding connections establishing|including connections establishing)\)`)
	pgbenchScript   = regexp.MustCompile(`^SQL script (\d+): (.*)$`)
	pgbenchScriptTx = regexp.MustCompile(`^ - (\d+) transactions \(([0-9.]+)% of total, tps = ([0-9.]+)\)`)
	pgbenchLatency  = regexp.MustCompile(`^(?: - )?latency (average|stddev) = ([0-9.]+) ms`)
	pgbenchFailed   = regexp.MustCompile(`^(?: - )?number of failed transactions: (\d+)`)
)

// pgbenchScriptFig is one script's figures of a multi-script run.
type pgbenchScriptFig struct {
	name            string
	line            int
	tx              int64
	share, tps      float64
	mean, stddev    float64
	failed          int64
	hasTx, hasLatMs bool
}

// parsePGBench reads pgbench's output (PostgreSQL 12 to 17): the summary
// (clients, transactions processed, failed, latency average and stddev,
// tps), the --progress lines as the series, and each script's figures
// when several ran (-b/-f with weights) as results of secondary roles named
// after the scripts. The headline is pgbench's tps without the initial
// connection time; clients are the threads.
func parsePGBench(file string, lines []string, test string, threads int) (*Output, error) {
	p := &pgbenchParse{file: file, out: &Output{Tool: PGBench}, processed: -1}
	for i, raw := range lines {
		if err := p.line(i, strings.TrimRight(lastCR(raw), " \t")); err != nil {
			return nil, err
		}
	}
	last := len(lines)
	switch {
	case p.clientsAt == 0 && p.procAt == 0:
		return nil, errorf(file, 0, "no pgbench result: no \"number of clients:\" and no \"number of transactions actually processed:\"; "+
			"want the whole output of a pgbench run")
	case p.procAt == 0 || p.tpsAt == 0:
		return nil, errorf(file, last, "the output ends before pgbench's summary (\"number of transactions actually processed:\" "+
			"and \"tps = ...\"): the run was cut short or the file truncated")
	case p.clients <= 0:
		return nil, errorf(file, p.clientsAt, "no client count (\"number of clients: N\"); want pgbench's whole output")
	case threads > 0 && int64(threads) != p.clients:
		return nil, errorf(file, p.clientsAt, "pgbench ran %d clients and --threads says %d; want them to agree (clients are threads)",
			p.clients, threads)
	}
	return p.results(test)
}

// pgbenchParse is what parsePGBench has read so far.
type pgbenchParse struct {
	file                         string
	out                          *Output
	clients, workers, scale      int64
	processed, failed            int64
	latMean, latStd, connMS, tps float64
	// tpsAt, clientsAt and procAt are the lines (from 1) of the tps, the
	// client count and the transactions processed; 0: not seen.
	tpsAt, clientsAt, procAt int
	duration                 float64
	scripts                  []*pgbenchScriptFig
	ivs                      []store.Interval
	prevSec                  float64
}

// num reads a number pgbench printed on line i (from 0).
func (p *pgbenchParse) num(i int, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return 0, errorf(p.file, i+1, "%q is not a number pgbench prints; want pgbench's own output", s)
	}
	return v, nil
}

// line reads line i (from 0), l.
func (p *pgbenchParse) line(i int, l string) error {
	var cur *pgbenchScriptFig
	if n := len(p.scripts); n > 0 && strings.HasPrefix(l, " - ") {
		cur = p.scripts[n-1]
	}
	if m := pgbenchVersion.FindStringSubmatch(l); m != nil {
		p.out.Version = l
		p.out.EngineVersion = m[1]
		if m[2] != "" {
			p.out.EngineVersion = m[2]
		}
		return nil
	}
	if m := pgbenchProgress.FindStringSubmatch(l); m != nil {
		return p.progress(i, m)
	}
	if m := pgbenchScript.FindStringSubmatch(l); m != nil {
		p.scripts = append(p.scripts, &pgbenchScriptFig{name: strings.Trim(m[2], "<>"), line: i + 1})
		return nil
	}
	if m := pgbenchScriptTx.FindStringSubmatch(l); m != nil && cur != nil {
		cur.tx, _ = strconv.ParseInt(m[1], 10, 64)
		cur.share, _ = strconv.ParseFloat(m[2], 64)
		cur.tps, _ = strconv.ParseFloat(m[3], 64)
		cur.hasTx = true
		return nil
	}
	if m := pgbenchLatency.FindStringSubmatch(l); m != nil {
		v, err := p.num(i, m[2])
		if err != nil {
			return err
		}
		switch {
		case cur != nil && m[1] == "average":
			cur.mean, cur.hasLatMs = v, true
		case cur != nil:
			cur.stddev = v
		case m[1] == "average":
			p.latMean = v
		default:
			p.latStd = v
		}
		return nil
	}
	if m := pgbenchFailed.FindStringSubmatch(l); m != nil {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		if cur != nil {
			cur.failed = v
		} else {
			p.failed = v
		}
		return nil
	}
	if m := pgbenchTPS.FindStringSubmatch(l); m != nil {
		v, err := p.num(i, m[1])
		if err != nil {
			return err
		}
		// Newer pgbench prints one tps, older two: the one without
		// the connections' establishment is the rate of the work.
		if m[2] != "including connections establishing" || p.tpsAt == 0 {
			p.tps, p.tpsAt = v, i+1
		}
		return nil
	}
	key, val, ok := strings.Cut(l, ":")
	if !ok {
		if k, v, ok := strings.Cut(l, " = "); ok && k == "initial connection time" {
			ms, err := p.num(i, strings.TrimSuffix(v, " ms"))
			if err != nil {
				return err
			}
			p.connMS = ms
		}
		return nil
	}
	return p.summary(i, key, strings.TrimSpace(val))
}

// progress reads a --progress line, m its match, as the next interval.
func (p *pgbenchParse) progress(i int, m []string) error {
	at, err := p.num(i, m[1])
	if err != nil {
		return err
	}
	rate, err := p.num(i, m[2])
	if err != nil {
		return err
	}
	secs := at - p.prevSec
	if secs <= 0 {
		return errorf(p.file, i+1, "progress at %g s does not follow %g s; want pgbench's lines in order", at, p.prevSec)
	}
	n := int64(math.Round(rate * secs))
	iv := store.Interval{Sec: len(p.ivs), Seconds: secs, Events: n, Statements: n}
	if m[5] != "" {
		f, _ := strconv.ParseInt(m[5], 10, 64)
		iv.Errors = f
	}
	p.ivs = append(p.ivs, iv)
	p.prevSec = at
	return nil
}

// summary reads a "key: value" line of the summary.
func (p *pgbenchParse) summary(i int, key, val string) error {
	switch key {
	case "number of clients":
		v, err := p.num(i, val)
		if err != nil {
			return err
		}
		p.clients, p.clientsAt = int64(v), i+1
	case "number of threads":
		v, err := p.num(i, val)
		if err != nil {
			return err
		}
		p.workers = int64(v)
	case "scaling factor":
		v, err := p.num(i, val)
		if err != nil {
			return err
		}
		p.scale = int64(v)
	case "duration":
		v, err := p.num(i, strings.TrimSuffix(val, " s"))
		if err != nil {
			return err
		}
		p.duration = v
	case "number of transactions actually processed":
		done, _, _ := strings.Cut(val, "/")
		v, err := p.num(i, done)
		if err != nil {
			return err
		}
		p.processed, p.procAt = int64(v), i+1
	}
	return nil
}

// results are the run's headline result and, when several scripts ran,
// one result per script.
func (p *pgbenchParse) results(test string) (*Output, error) {
	out := p.out
	res := store.Result{Test: test, Family: test, Threads: int(p.clients), Metric: TPS.Name, Status: store.StatusOK,
		Events: p.processed, Statements: p.processed, Errors: p.failed, Seconds: secondsOf(p.processed, p.tps, p.duration),
		Latency: store.Latency{Mean: msDuration(p.latMean)}, Intervals: p.ivs,
		Facts: map[string]float64{store.FactToolOpsPerSec: p.tps, FactLatencyStddev: p.latStd}}
	if p.connMS > 0 {
		res.Facts[FactConnectMS] = p.connMS
	}
	if p.scale > 0 {
		res.Facts[FactScale] = float64(p.scale)
	}
	if p.workers > 0 {
		res.Facts[FactWorkerThreads] = float64(p.workers)
	}
	out.Results = append(out.Results, res)
	if len(p.scripts) > 1 {
		for _, s := range p.scripts {
			if !s.hasTx {
				return nil, errorf(p.file, s.line, "script %q has no \" - N transactions (...)\" line; the file is truncated", s.name)
			}
			sr := store.Result{Test: test, Family: test, Threads: int(p.clients), Metric: TPS.Name, Status: store.StatusOK,
				Events: s.tx, Statements: s.tx, Errors: s.failed, Seconds: secondsOf(s.tx, s.tps, p.duration),
				Latency: store.Latency{Mean: msDuration(s.mean)}, Role: store.RoleInfo{Name: s.name, Secondary: true},
				Facts: map[string]float64{store.FactToolOpsPerSec: s.tps, FactScriptShare: s.share, FactLatencyStddev: s.stddev}}
			out.Results = append(out.Results, sr)
		}
	}
	return out, nil
}
