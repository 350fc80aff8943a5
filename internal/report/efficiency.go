package report

import (
	"fmt"
	"math"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/noise"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// effMetric is one per-operation efficiency column (docs/method.md
// 2.6 and 3). value returns the figure of one result, a store sentinel
// (NotMeasured, NotReadable), or NaN when the result has no efficiency.
type effMetric struct {
	column string
	value  func(store.Result) float64
	// relative marks the columns of the relative table (docs/method.md 2.7 sum_met.sh).
	relative bool
}

// perOp divides a step total by the step's operations: total / sampled
// seconds / QPS, with "op" the QPS denominator (statements, docs/method.md 2.6).
func perOp(r store.Result, total float64, scale float64) float64 {
	if r.Eff == nil {
		return math.NaN()
	}
	v := r.Eff.PerOp(total, r.QPS(), r.Seconds)
	if v < 0 {
		return v
	}
	return v * scale
}

// engineIO picks the IO of the processes doing the engine's work: the
// server tree's, or benchlab's own for an in-process engine.
func engineIO(e *store.Efficiency, server, client int64) float64 {
	if e.ServerCPU == store.NotMeasured {
		return float64(client)
	}
	return float64(server)
}

var effMetrics = []effMetric{
	{"cpu us/op client", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return e.ClientCPU }), 1e6)
	}, true},
	{"cpu us/op server", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return e.ServerCPU }), 1e6)
	}, true},
	{"cpu us/op total", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return section.SumOf(e.ServerCPU, e.ClientCPU) }), 1e6)
	}, true},
	{"KB read/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerReadBytes, e.ClientReadBytes) }), 1.0/1024)
	}, true},
	{"KB written/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerWriteBytes, e.ClientWriteBytes) }), 1.0/1024)
	}, true},
	{"reads/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerReadCalls, e.ClientReadCalls) }), 1)
	}, false},
	{"writes/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerWriteCalls, e.ClientWriteCalls) }), 1)
	}, false},
	{"dev reads/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevReads) }), 1)
	}, false},
	{"dev KB read/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevReadBytes) }), 1.0/1024)
	}, false},
	{"dev KB written/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevWriteBytes) }), 1.0/1024)
	}, false},
	{"cs/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return section.SumOf(float64(e.ServerCS), float64(e.ClientCS)) }), 1)
	}, true},
	{"peak server RSS MB", func(r store.Result) float64 {
		if _, limited := r.Facts[store.FactServerMemoryLimit]; limited {
			return store.NotMeasured // the cgroup's figures stand (memoryLimitTables)
		}
		return effF(r, func(e *store.Efficiency) float64 { return section.MiB(e.ServerPeakRSS) })
	}, false},
	{"peak client RSS MB", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return section.MiB(e.ClientPeakRSS) })
	}, false},
	{"peak client own MB", func(r store.Result) float64 {
		return effF(r, func(*store.Efficiency) float64 { return factMB(r, store.FactClientOwnPeakRSS) })
	}, false},
	{"steal %", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return e.StealPct() })
	}, false},
	{"foreign cpu %", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return e.ForeignPct() })
	}, false},
}

// effF applies f to r's efficiency, NaN when there is none.
func effF(r store.Result, f func(*store.Efficiency) float64) float64 {
	if r.Eff == nil {
		return math.NaN()
	}
	return f(r.Eff)
}

// factMB is a fact in bytes as MB; NotMeasured when r does not have it
// (results stored before it was measured).
func factMB(r store.Result, name string) float64 {
	v, ok := r.Facts[name]
	if !ok {
		return store.NotMeasured
	}
	return v / (1 << 20)
}

// effValues returns the figures of a row's repeats and whether all of them
// are numbers; otherwise the cell that says why not ("n/a" when not
// measured or not sampled, "not readable" when a counter could not be read).
func effValues(rs []store.Result, f func(store.Result) float64) ([]float64, *Cell) {
	if len(rs) == 0 {
		return nil, &Cell{Missing: true}
	}
	var out []float64
	for _, r := range rs {
		v := f(r)
		switch {
		case math.IsNaN(v) || v == store.NotMeasured:
			return nil, &Cell{Missing: true}
		case v == store.NotReadable:
			c := section.TextCell("not readable")
			return nil, &c
		}
		out = append(out, v)
	}
	return out, nil
}

// hasEfficiency reports whether any measured result was sampled.
func hasEfficiency(s samples, keys []cellKey) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if r.Eff != nil {
					return true
				}
			}
		}
	}
	return false
}

// hasFact reports whether a result of the keys' cells holds the fact.
func hasFact(s samples, keys []cellKey, fact string) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if _, ok := r.Facts[fact]; ok {
					return true
				}
			}
		}
	}
	return false
}

// efficiencyTables builds the absolute per-operation efficiency table and,
// with more than one target, the table relative to the base (docs/method.md 2.6,
// 2.7 sum_met.sh blocks: one row per target under each test). Costs are
// lower-is-better, so a ratio >= 1.05 is red. Shown only when measured.
func efficiencyTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options) []Table {
	if !hasEfficiency(s, keys) {
		return nil
	}
	metrics := append(append([]effMetric{}, effMetrics...), clockMetrics(keys, s)...)
	return costTables(d, keys, s, label, opt, metrics, "Efficiency per operation",
		"op = statement (the QPS denominator); cpu in microseconds (client = benchlab, server = the server's "+
			"process tree); KB, reads and writes of the engine's processes (/proc/<pid>/io), dev = the data dir's block "+
			"device (/proc/diskstats, all processes); cs = context switches, server + client; steal and foreign "+
			"(other processes') cpu in % of all CPU time; median over repeats; n/a = not measured",
		"Relative efficiency: cost per operation(target) / cost per operation("+d.Experiment.Base+")")
}

// costTables builds an absolute table of per-operation costs, one row per
// target under each test, and, with more than one target, the table of
// the relative columns against the base. Costs are lower-is-better, so a
// ratio >= 1.05 is red.
func costTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options, metrics []effMetric,
	title, legend, relTitle string) []Table {
	targets := d.targets()
	abs := Table{Title: title, Legend: legend}
	for _, m := range metrics {
		abs.Columns = append(abs.Columns, m.column)
	}
	for _, k := range keys {
		for _, t := range targets {
			row := Row{Group: label(k), Label: t}
			for _, m := range metrics {
				vals, c := effValues(s[t][k], m.value)
				if c != nil {
					row.Cells = append(row.Cells, *c)
					continue
				}
				row.Cells = append(row.Cells, section.NumberCell(analysis.Median(vals)))
			}
			abs.Rows = append(abs.Rows, row)
		}
	}
	if len(targets) < 2 {
		return []Table{abs}
	}
	rel := Table{Title: relTitle,
		Legend: "lower is better: - (red) >= 1.05 costs more, + (green) <= 0.95 costs less, grey between; " +
			"1 when both are 0, inf when only the base is 0"}
	for _, m := range metrics {
		if m.relative {
			rel.Columns = append(rel.Columns, m.column)
		}
	}
	for _, k := range keys {
		for _, t := range targets[1:] {
			row := Row{Group: label(k), Label: t}
			for _, m := range metrics {
				if !m.relative {
					continue
				}
				base, bc := effValues(s[targets[0]][k], m.value)
				other, oc := effValues(s[t][k], m.value)
				switch {
				case bc != nil && bc.Kind == Text:
					row.Cells = append(row.Cells, *bc)
				case oc != nil && oc.Kind == Text:
					row.Cells = append(row.Cells, *oc)
				case bc != nil || oc != nil:
					row.Cells = append(row.Cells, Cell{Missing: true})
				default:
					row.Cells = append(row.Cells, relativeCell(base, other, analysis.LowerIsBetter, opt.Verdict))
				}
			}
			rel.Rows = append(rel.Rows, row)
		}
	}
	return []Table{abs, rel}
}

// Thresholds beyond which a sampled second counts as disturbed.
const (
	// DisturbedStealPct is the steal share of one second (percent of all CPU time).
	DisturbedStealPct = 10
	// DisturbedForeignPct is the CPU share of other processes in one second.
	DisturbedForeignPct = 25
)

// efficiencyNotes explain how the efficiency figures were made and what is
// not measured, give the database size after load, and flag disturbed
// steps and seconds.
func efficiencyNotes(d *Data, keys []cellKey, s samples) []string {
	if !hasEfficiency(s, keys) && !hasDBSize(d) {
		return nil
	}
	var n []string
	if hasEfficiency(s, keys) {
		n = append(n, "efficiency: per-op = counter total over the sampled part of a step / its seconds / its QPS; "+
			"process CPU from /proc comes in 10 ms ticks, so a step with under a few hundred ms of server CPU gives a "+
			"rough server cpu us/op; client CPU comes from getrusage and includes benchlab's own sampling, less the CPU "+
			"speed probes' own CPU time (fact cpu_speed_probe_cpu_s)")
	}
	inProcess := map[string]bool{}
	devices := map[string]bool{}
	noDevice := map[string]bool{}
	for _, t := range d.targets() {
		for _, k := range keys {
			for _, r := range s[t][k] {
				if r.Eff == nil {
					continue
				}
				if r.Eff.ServerCPU == store.NotMeasured {
					inProcess[t] = true
				}
				if r.Eff.Device != "" {
					devices[r.Eff.Device] = true
				} else if r.Eff.DevReads != store.NotMeasured {
					noDevice[t] = true
				}
				steal := r.Eff.StealPct()
				bad, all := disturbedSeconds(r)
				if steal > NoisyStealPct || bad > 0 {
					n = append(n, fmt.Sprintf("noisy step: %s on %s (%d threads): %.1f%% CPU steal over the step; %d of %d measured "+
						"seconds had steal > %d%%, other processes using > %d%% of all CPU, or CPUs slower than x%.2f of the "+
						"step's median second (speed probes)", r.Test, t, r.Threads, steal,
						bad, all, DisturbedStealPct, DisturbedForeignPct, noise.SlowCPUFactor))
				}
			}
		}
	}
	if len(inProcess) > 0 {
		n = append(n, fmt.Sprintf("efficiency: %s run in-process (no server process): server cpu and RSS are n/a, "+
			"the engine's CPU is inside the client figures, and its IO (KB, reads, writes per op) is benchlab's own "+
			"/proc/self/io", strings.Join(sortedKeys(inProcess), ", ")))
	}
	if hasFact(s, keys, store.FactEffByTurns) {
		n = append(n, "efficiency: interleaved targets' figures are split by turns: only one target's workers run in a "+
			"turn, so benchlab's CPU, context switches, IO and perf counts (an in-process engine's work) read at each turn's start and "+
			"end are that target's; a server's come from its own processes over the whole step, its background work in "+
			"the others' turns included; an in-process engine's background threads (Pebble's, RocksDB's compactions) "+
			"count in whichever turn they run; peak client RSS, dev columns and, beside servers, foreign cpu are n/a "+
			"(shared by the targets)")
	}
	if hasFact(s, keys, store.FactClientOwnPeakRSS) {
		n = append(n, "efficiency: peak client RSS MB is benchlab's whole resident set, an in-process engine's memory "+
			"included; peak client own MB is that less what in-process engines held from their own allocators at the same "+
			"moment (SQLite: sqlite3_memory_used, its page caches of cache_size per connection), so benchlab's own memory "+
			"is told from the engine's")
	}
	if len(inProcess) < len(d.targets()) && hasEfficiency(s, keys) {
		n = append(n, "efficiency: for servers, KB read/written per op are bytes the server processes caused storage to "+
			"read or write (/proc/<pid>/io read_bytes, write_bytes; cache hits are no reads); reads and writes per op are "+
			"their read and write system calls on any descriptor, sockets included")
	}
	if len(devices) > 0 {
		n = append(n, "efficiency: dev columns are the whole device ("+strings.Join(sortedKeys(devices), ", ")+
			"), so other processes' IO on it is included")
	}
	if len(noDevice) > 0 {
		n = append(n, "efficiency: dev columns not readable for "+strings.Join(sortedKeys(noDevice), ", ")+
			": the data dir's block device is not in /proc/diskstats (tmpfs or overlay)")
	}
	if m := memoryLimitNote(d, keys, s); m != "" {
		n = append(n, m)
	}
	if c := clockNote(keys, s); c != "" {
		n = append(n, c)
	}
	if sz := dbSizeLine(d); sz != "" {
		n = append(n, sz)
	}
	if ld := loadLine(d); ld != "" {
		n = append(n, ld)
	}
	return n
}

// loadLine gives, for every run, the load's rate and its cost per inserted
// row (docs/method.md 2.2, sysbench's sb.prepare.met): CPU microseconds of the
// server and of benchlab, and KB the engine read and wrote.
func loadLine(d *Data) string {
	var parts []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if !r.Action || r.Test != "prepare" || r.Rows <= 0 || r.Seconds <= 0 {
				continue
			}
			p := fmt.Sprintf("%s repeat %d: %s rows/s", run.Target, run.Repeat, FormatValue(float64(r.Rows)/r.Seconds))
			if e := r.Eff; e != nil {
				per := func(v, scale float64) string {
					switch {
					case v == store.NotMeasured:
						return "n/a"
					case v < 0:
						return "not readable"
					}
					return FormatValue(v * scale / float64(r.Rows))
				}
				p += fmt.Sprintf(", per row: cpu us server %s client %s, KB read %s, KB written %s",
					per(e.ServerCPU, 1e6), per(e.ClientCPU, 1e6),
					per(engineIO(e, e.ServerReadBytes, e.ClientReadBytes), 1.0/1024),
					per(engineIO(e, e.ServerWriteBytes, e.ClientWriteBytes), 1.0/1024))
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "load (prepare, index included): " + strings.Join(parts, "; ")
}

// disturbedSeconds counts the measured seconds of r whose steal or foreign
// CPU share passed the thresholds, or whose CPU speed fell below
// noise.SlowCPUFactor of the step's median second, and the measured
// seconds sampled.
func disturbedSeconds(r store.Result) (bad, all int) {
	var speeds []float64
	for _, iv := range r.Intervals {
		if iv.Sec >= 0 && iv.Load != nil && iv.Load.CPUSpeed > 0 {
			speeds = append(speeds, iv.Load.CPUSpeed)
		}
	}
	slow := 0.0
	if len(speeds) > 0 {
		slow = noise.SlowCPUFactor * analysis.Median(speeds)
	}
	for _, iv := range r.Intervals {
		if iv.Sec < 0 || iv.Load == nil {
			continue
		}
		all++
		if iv.Load.StealPct > DisturbedStealPct || iv.Load.ForeignPct > DisturbedForeignPct ||
			(iv.Load.CPUSpeed > 0 && iv.Load.CPUSpeed < slow) {
			bad++
		}
	}
	return bad, all
}

func hasDBSize(d *Data) bool {
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.DBBytes != 0 {
				return true
			}
		}
	}
	return false
}

// dbSizeLine lists the database size after load of every run (docs/method.md
// 1.11 dbdirGB: du of the data dir after the load step).
func dbSizeLine(d *Data) string {
	var parts []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			switch {
			case r.DBBytes > 0:
				parts = append(parts, fmt.Sprintf("%s repeat %d: %s MB", run.Target, run.Repeat, FormatValue(section.MiB(r.DBBytes))))
			case r.DBBytes == store.NotReadable:
				parts = append(parts, fmt.Sprintf("%s repeat %d: not readable", run.Target, run.Repeat))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "database size after load (du of the data dir): " + strings.Join(parts, "; ")
}
