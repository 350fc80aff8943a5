package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

func init() { section.Register(Suite{}.Name(), Suite{}) }

// ReportSections adds the facts each scenario measured beyond its headline,
// with their units: stale-read's stale reads and lag percentiles, and
// failover's planned kill, outage, longest write gap, failed tries,
// recovery, errors and retries. Failover's kill is marked planned, so the
// report does not call its dip unstable: the outage is its result.
func (Suite) ReportSections(in *section.Input) section.Sections {
	cs := cellsOf(in)
	var sec section.Sections
	if t := staleTable(cs); t != nil {
		sec.Tables = append(sec.Tables, *t)
	}
	if t := lagTable(cs); t != nil {
		sec.Tables = append(sec.Tables, *t)
	}
	if t := nodeCounterTable(cs); t != nil {
		sec.Tables = append(sec.Tables, *t)
	}
	if t := scalingTable(cs); t != nil {
		sec.Tables = append(sec.Tables, *t)
	}
	if t := failoverTable(cs); t != nil {
		sec.Tables = append(sec.Tables, *t)
	}
	for _, c := range cs {
		if c.test != Failover && c.test != Switchover {
			continue
		}
		for _, r := range c.all {
			at, ok := r.Facts["failover_kill_at_s"]
			if !ok || at < 0 {
				continue
			}
			if sec.Planned == nil {
				sec.Planned = map[string]string{}
			}
			what := fmt.Sprintf("node %d killed", int(r.Facts["failover_killed_node"]))
			if c.test == Switchover {
				what = fmt.Sprintf("primary moved from node %d", int(r.Facts["failover_killed_node"]))
			}
			sec.Planned[c.test] = fmt.Sprintf("%s by benchlab at %.1f s", what, at)
		}
		sec.Notes = append(sec.Notes, failoverNotes(c)...)
	}
	return sec
}

// cell is one scenario step on one target: the results of every role (its
// headline role's threads name it) and repeat.
type cell struct {
	target, test string
	seq, threads int
	all          []store.Result
}

// cellsOf groups the suite's measured results by target and step (a
// step's roles share its test and sequence number, not their thread
// counts), targets in the report's order.
func cellsOf(in *section.Input) []cell {
	var out []cell
	for _, target := range in.Targets {
		for _, run := range in.Runs {
			if run.Target != target {
				continue
			}
			for _, r := range in.Results[run.ID] {
				if r.Action || r.Warm || r.Status != store.StatusOK {
					continue
				}
				i := slices.IndexFunc(out, func(c cell) bool { return c.target == target && c.test == r.Test && c.seq == r.Seq })
				if i < 0 {
					out = append(out, cell{target: target, test: r.Test, seq: r.Seq, threads: r.Threads})
					i = len(out) - 1
				}
				if !r.Role.Secondary {
					out[i].threads = r.Threads
				}
				out[i].all = append(out[i].all, r)
			}
		}
	}
	return out
}

// withFact are the results of c holding the fact (the role that measured it).
func (c cell) withFact(name string) []store.Result {
	var out []store.Result
	for _, r := range c.all {
		if _, ok := r.Facts[name]; ok {
			out = append(out, r)
		}
	}
	return out
}

// fact is the median of a fact over the results that hold it, NaN when none does.
func (c cell) fact(name string, scale float64) float64 {
	return section.Median(c.withFact(name), func(r store.Result) float64 { return r.Facts[name] * scale })
}

// sum is the median over repeats of f summed over the roles of each
// repeat (a step's writers and its probe).
func (c cell) sum(f func(store.Result) float64) float64 {
	byRun := map[int64]float64{}
	var runs []int64
	for _, r := range c.all {
		if _, ok := byRun[r.RunID]; !ok {
			runs = append(runs, r.RunID)
		}
		byRun[r.RunID] += f(r)
	}
	vals := make([]float64, len(runs))
	for i, id := range runs {
		vals[i] = byRun[id]
	}
	return analysis.Median(vals)
}

// errorsAndRetries are a cell's failed operations and the retries its
// operations needed (store.FactRetries), summed over roles, median over
// repeats.
func (c cell) errorsAndRetries() (section.Cell, section.Cell) {
	return count(c.sum(func(r store.Result) float64 { return float64(r.Errors) })),
		count(c.sum(func(r store.Result) float64 { return r.Facts[store.FactRetries] }))
}

// count is a count as a whole number (a median of two repeats may end in
// .5), n/a when not measured.
func count(v float64) section.Cell {
	if math.IsNaN(v) {
		return section.Cell{Missing: true}
	}
	return section.TextCell(strconv.FormatFloat(v, 'f', -1, 64))
}

// staleTable shows stale-read's facts: the share of stale reads, their
// count against all reads, how old the write a stale read missed was
// (p50, p99, max of the lags), and the writers' errors and retries.
func staleTable(cs []cell) *section.Table {
	t := &section.Table{Title: "Cluster: stale reads",
		Legend: "reads on nodes other than the writer's; stale share (the headline, of the measured part): reads older than the last " +
			"acknowledged write when the read began; counts and lag (how long the oldest missed write had been acknowledged) " +
			"include the warm-up; median over repeats",
		Columns: []string{"target", "stale share", "stale reads", "reads", "lag p50", "lag p99", "lag max", "errors", "retries"}}
	for _, c := range cs {
		if c.test != StaleRead || len(c.withFact("reads_total")) == 0 {
			continue
		}
		var readers []store.Result
		for _, r := range c.all {
			if r.Metric == StaleShare.Name {
				readers = append(readers, r)
			}
		}
		share := section.Median(readers, func(r store.Result) float64 { return 100 * r.Throughput() })
		errs, retries := c.errorsAndRetries()
		t.Rows = append(t.Rows, section.Row{Group: Group, Label: fmt.Sprintf("%s @%d", c.test, c.threads), Cells: []section.Cell{
			section.TextCell(c.target), section.UnitCell(share, "%"),
			count(c.fact("stale_reads_total", 1)), count(c.fact("reads_total", 1)),
			section.UnitCell(c.fact("stale_lag_p50_ms", 1), "ms"), section.UnitCell(c.fact("stale_lag_p99_ms", 1), "ms"),
			section.UnitCell(c.fact("stale_lag_max_ms", 1), "ms"), errs, retries}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// scalingTable shows write-scaling's conflicts: for each spread over
// nodes, the transactions that failed even after retrying, the retries
// conflicts needed, and per 100 committed transactions.
func scalingTable(cs []cell) *section.Table {
	t := &section.Table{Title: "Cluster: write scaling conflicts",
		Legend: "per spread of the writers over nodes: failed transactions (after retries), retries after conflicts, " +
			"and retries per 100 committed transactions; median over repeats",
		Columns: []string{"target", "errors", "retries", "retries/100"}}
	for _, c := range cs {
		if !strings.HasPrefix(c.test, WriteScaling) {
			continue
		}
		errs, retries := c.errorsAndRetries()
		per100 := c.sum(func(r store.Result) float64 {
			if r.Events == 0 {
				return 0
			}
			return 100 * r.Facts[store.FactRetries] / float64(r.Events)
		})
		t.Rows = append(t.Rows, section.Row{Group: Group, Label: fmt.Sprintf("%s @%d", c.test, c.threads), Cells: []section.Cell{
			section.TextCell(c.target), errs, retries, section.NumberCell(per100)}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// failoverTable shows failover's facts: which node benchlab killed and
// when (planned), the outage the probe writer saw (the headline), the
// longest gap between two successful writes, the probe's failed tries, the
// writes that succeeded after the kill, the seconds until throughput was
// back, and the writers' errors and retries.
func failoverTable(cs []cell) *section.Table {
	t := &section.Table{Title: "Cluster: failover and switchover (planned)",
		Legend: "benchlab kills the node on purpose (cluster.kill_node at cluster.kill_at), or moves the primary to the next " +
			"node there and back halfway to the step's end (switchover): the outage is the result measured, not instability; " +
			"for a switchover, killed node = the old primary, promoted = the new one and how long the whole switch took; outage = seconds the probe's writes spent failing; gap = longest time between two successful " +
			"writes of any writer; promoted = the replica made primary and how long its promotion took (PostgreSQL's pg_promote; MariaDB's applying what it received, then STOP SLAVE and read_only off); recovery = seconds until " +
			"throughput was back to 90% (n/a: not within the step); lost acked writes = the probe's writes acknowledged before the " +
			"kill that the cluster no longer had once writes resumed (the largest over repeats; n/a: writes never resumed); median over repeats",
		Columns: []string{"target", "killed node", "killed at", "promoted", "outage", "longest write gap", "failed tries", "reconnects",
			"writes after kill", "recovery", "lost acked writes", "errors", "retries"}}
	for _, c := range cs {
		if (c.test != Failover && c.test != Switchover) || len(c.withFact("failover_max_gap_ms")) == 0 {
			continue
		}
		outage := section.Median(c.withFact("failover_max_gap_ms"), func(r store.Result) float64 { return r.Throughput() })
		recovery := section.Median(c.withFact("failover_recovery_s"), func(r store.Result) float64 {
			if v := r.Facts["failover_recovery_s"]; v >= 0 {
				return v
			}
			return math.NaN()
		})
		errs, retries := c.errorsAndRetries()
		t.Rows = append(t.Rows, section.Row{Group: Group, Label: fmt.Sprintf("%s @%d", c.test, c.threads), Cells: []section.Cell{
			section.TextCell(c.target), section.TextCell(fmt.Sprintf("node %.0f", c.fact("failover_killed_node", 1))),
			section.UnitCell(c.fact("failover_kill_at_s", 1), "s"), promotedCell(c), section.UnitCell(outage, "s"),
			section.UnitCell(c.fact("failover_max_gap_ms", 1), "ms"), count(c.fact("failover_errors", 1)),
			count(c.fact("failover_reconnects", 1)), count(c.fact("failover_writes_after_kill", 1)), section.UnitCell(recovery, "s"),
			lostCell(c), errs, retries}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// failoverNotes say, per repeat, that the kill was planned and what it
// cost, and when the figures are a lower bound (the outage outlasted the
// step) or recovery was not seen.
func failoverNotes(c cell) []string {
	var out []string
	for _, r := range c.withFact("failover_max_gap_ms") {
		at := r.Facts["failover_kill_at_s"]
		if at < 0 {
			out = append(out, fmt.Sprintf("%s on %s @%d: nothing was disrupted within the step; its figures measure no outage",
				c.test, c.target, c.threads))
			continue
		}
		what := "killed"
		if c.test == Switchover {
			what = fmt.Sprintf("switched over to node %.0f", r.Facts["failover_promoted_node"])
			if b := r.Facts["switchback_at_s"]; b >= 0 {
				what += fmt.Sprintf(" and back at %.1f s", b)
			} else if r.Facts["switchback_skipped"] == 1 {
				what += " (not back: less of the step was left than the first switch took; run a longer write_time)"
			}
		}
		n := fmt.Sprintf("%s on %s @%d: node %d %s by benchlab as planned at %.1f s; the measured result is its outage, "+
			"%.2f s of failing writes (longest write gap %.0f ms, %.0f failed tries)", c.test, c.target, c.threads,
			int(r.Facts["failover_killed_node"]), what, at, r.Throughput(), r.Facts["failover_max_gap_ms"], r.Facts["failover_errors"])
		if c.test == Switchover {
			n += rejoinNote(r.Facts)
		}
		// Results stored before the durability probe have no such facts.
		lost, probed := r.Facts["failover_lost_acked_writes"]
		if lost > 0 {
			n += fmt.Sprintf("; LOST %.0f of %.0f writes acknowledged before the kill", lost, r.Facts["failover_acked_before_kill"])
		} else if probed && lost == 0 {
			n += fmt.Sprintf("; none of the %.0f writes acknowledged before the kill was lost", r.Facts["failover_acked_before_kill"])
		}
		if r.Facts["failover_outage_open_at_end"] == 1 {
			n += "; the outage outlasted the step, so it is a lower bound: run a longer write_time"
		} else if r.Facts["failover_recovery_s"] < 0 {
			n += "; throughput was not back to 90% within the step"
		} else {
			n += fmt.Sprintf("; throughput back after %.1f s", r.Facts["failover_recovery_s"])
		}
		out = append(out, n)
	}
	return out
}

// rejoinNote says how the old primary rejoined after the switch (and
// after the switch back): on its own data, or on a copy of the new
// primary's, and why; "" for results stored before the facts existed.
func rejoinNote(f map[string]float64) string {
	var out string
	for _, r := range []struct{ fact, when string }{{"switchover_rejoin", "the switch"}, {"switchback_rejoin", "the switch back"}} {
		copied, ok := f[r.fact+"_copied"]
		if !ok || copied < 0 {
			continue
		}
		how := "keeping its data (rewound, or following on from its own position)"
		if f[r.fact+"_fallback"] == 1 {
			how = "on a new copy of the new primary's data, as its own could not be rewound (its server log says why)"
		} else if copied == 1 {
			how = "on a new copy of the new primary's data"
		}
		out += fmt.Sprintf("; after %s the old primary rejoined in %.1f s %s", r.when, f[r.fact+"_s"], how)
	}
	return out
}

// promotedCell names the node a promotion made primary and how long the
// promotion took; "-" when the cluster needed none (Galera).
func promotedCell(c cell) section.Cell {
	node := c.fact("failover_promoted_node", 1)
	if math.IsNaN(node) {
		return section.Cell{Missing: true}
	}
	if node < 1 {
		return section.TextCell("-")
	}
	return section.TextCell(fmt.Sprintf("node %.0f in %.2f s", node, c.fact("failover_promote_s", 1)))
}

// lostCell is the largest count of lost acknowledged writes over the
// repeats (a loss in any repeat is the finding), n/a when never checked.
func lostCell(c cell) section.Cell {
	most := math.NaN()
	for _, r := range c.withFact("failover_lost_acked_writes") {
		if v := r.Facts["failover_lost_acked_writes"]; v >= 0 && !(v <= most) {
			most = v
		}
	}
	if math.IsNaN(most) {
		return section.Cell{Missing: true}
	}
	return count(most)
}

// lagTable shows replica-lag's percentiles: bytes of WAL not yet replayed
// (and not yet flushed) by the furthest replica, its own lag in seconds,
// and transactions queued (Galera's receive queue), over the samples.
func lagTable(cs []cell) *section.Table {
	t := &section.Table{Title: "Cluster: replica lag under writes",
		Legend: "sampled 5 times a second from the engine's views (pg_stat_replication; Galera's wsrep_local_recv_queue), the " +
			"furthest replica each time, warm-up included; bytes = primary's WAL position minus the replica's replayed (flushed) " +
			"one; n/a: the engine has no such view; median over repeats",
		Columns: []string{"target", "writes/s", "samples", "replay p50", "replay p99", "replay max", "flush p99", "seconds p50",
			"seconds p99", "seconds max", "queued p99", "queued max"}}
	for _, c := range cs {
		if c.test != ReplicaLag || len(c.withFact("lag_samples")) == 0 {
			continue
		}
		var writers []store.Result
		for _, r := range c.all {
			if r.Metric == WPS.Name {
				writers = append(writers, r)
			}
		}
		wps := section.Median(writers, func(r store.Result) float64 { return r.Throughput() })
		b := func(name string) section.Cell { return section.UnitCell(c.fact(name, 1), "B") }
		s := func(name string) section.Cell { return section.UnitCell(c.fact(name, 1), "s") }
		t.Rows = append(t.Rows, section.Row{Group: Group, Label: fmt.Sprintf("%s @%d", c.test, c.threads), Cells: []section.Cell{
			section.TextCell(c.target), section.NumberCell(wps), count(c.fact("lag_samples", 1)),
			b("lag_replay_bytes_p50"), b("lag_replay_bytes_p99"), b("lag_replay_bytes_max"), b("lag_flush_bytes_p99"),
			s("lag_seconds_p50"), s("lag_seconds_p99"), s("lag_seconds_max"),
			count(c.fact("lag_transactions_p99", 1)), count(c.fact("lag_transactions_max", 1))}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// nodeCounterTable shows every node's engine counters over replica-lag's
// step (the sampler's node<k>_ facts): one row per target and counter, one
// column per node; median over repeats.
func nodeCounterTable(cs []cell) *section.Table {
	type key struct{ target, name string }
	var keys []key
	cols := 0
	vals := map[key]map[int]float64{}
	for _, c := range cs {
		if c.test != ReplicaLag {
			continue
		}
		names := map[string]bool{}
		for _, r := range c.withFact("lag_samples") {
			for f := range r.Facts {
				if strings.HasPrefix(f, NodeFactPrefix) {
					names[f] = true
				}
			}
		}
		for f := range names {
			rest := strings.TrimPrefix(f, NodeFactPrefix)
			i := strings.IndexByte(rest, '_')
			node, err := strconv.Atoi(rest[:max(i, 0)])
			if i < 0 || err != nil {
				continue
			}
			k := key{c.target, rest[i+1:]}
			if vals[k] == nil {
				vals[k] = map[int]float64{}
				keys = append(keys, k)
			}
			vals[k][node] = c.fact(f, 1)
			cols = max(cols, node)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortStableFunc(keys, func(a, b key) int { return cmp.Compare(a.target+"\x00"+a.name, b.target+"\x00"+b.name) })
	t := &section.Table{Title: "Cluster: node counters during replica-lag",
		Legend: "each node's engine counters, read once a second during the replica-lag step: a counter's change over the " +
			"step, or a level's highest value (_max); node 1 is the first primary; n/a: the node did not report it; median over repeats",
		Columns: []string{"target"}}
	for n := 1; n <= cols; n++ {
		t.Columns = append(t.Columns, fmt.Sprintf("node %d", n))
	}
	for _, k := range keys {
		row := section.Row{Group: Group, Label: k.name, Cells: []section.Cell{section.TextCell(k.target)}}
		for n := 1; n <= cols; n++ {
			v, ok := vals[k][n]
			if !ok {
				v = math.NaN()
			}
			row.Cells = append(row.Cells, section.NumberCell(v))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
