package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// engineStatDiff is the relative difference of a counter's figure per
// operation from the base's beyond which the relative table shows it.
const engineStatDiff = 0.10

// engineStatNames are the engine counters (engine.StatsReader's names,
// store.EngineStatFact) that grew in some result of the keys' cells, sorted
// by name, so each source's counters stand together (pg_stat_database.*,
// pg_stat_wal.*, status.Com_*, status.Innodb_*).
func engineStatNames(keys []cellKey, s samples) []string {
	seen := map[string]bool{}
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				for f, v := range r.Facts {
					if name, ok := store.EngineStatName(f); ok && v > 0 {
						seen[name] = true
					}
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// engineStatColumns names each counter's column by its name within its
// source ("xact_commit/op"), or by its whole name where two sources share
// it.
func engineStatColumns(names []string) []string {
	short := func(n string) string {
		if _, after, ok := strings.Cut(n, "."); ok {
			return after
		}
		return n
	}
	count := map[string]int{}
	for _, n := range names {
		count[short(n)]++
	}
	cols := make([]string, len(names))
	for i, n := range names {
		if count[short(n)] > 1 {
			cols[i] = n + "/op"
		} else {
			cols[i] = short(n) + "/op"
		}
	}
	return cols
}

// engineStatMetrics are the per-operation columns of the engine counters
// that grew somewhere. A column is relative (in the table relative to the
// base) when, for some test and target, its median per operation differs
// from the base's by more than engineStatDiff: the counters that may say
// why a target is slower, without the many that did not move.
func engineStatMetrics(d *Data, keys []cellKey, s samples) []effMetric {
	names := engineStatNames(keys, s)
	cols := engineStatColumns(names)
	targets := d.targets()
	out := make([]effMetric, len(names))
	for i, name := range names {
		fact := store.EngineStatFact(name)
		value := func(r store.Result) float64 {
			v, ok := r.Facts[fact]
			if !ok {
				return store.NotMeasured
			}
			return perOp(r, v, 1)
		}
		out[i] = effMetric{column: cols[i], value: value}
		if len(targets) < 2 {
			continue
		}
		for _, k := range keys {
			base, bc := effValues(s[targets[0]][k], value)
			if bc != nil {
				continue
			}
			b := analysis.Median(base)
			for _, t := range targets[1:] {
				other, oc := effValues(s[t][k], value)
				if oc != nil {
					continue
				}
				o := analysis.Median(other)
				if (b == 0 && o > 0) || (b > 0 && math.Abs(o/b-1) > engineStatDiff) {
					out[i].relative = true
				}
			}
		}
	}
	return out
}

// engineStatTables builds the engine's own counters per operation, absolute
// and, for the counters that moved, relative to the base, when some step
// read them.
func engineStatTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options) []Table {
	ms := engineStatMetrics(d, keys, s)
	if len(ms) == 0 {
		return nil
	}
	tables := costTables(d, keys, s, label, opt, ms, "Engine counters per operation",
		"op = statement (the QPS denominator); the growth of the engine's own counters over the measured part "+
			"(PostgreSQL: pg_stat_database of the benchmark database, pg_stat_bgwriter or pg_stat_checkpointer and "+
			"pg_stat_wal of the whole server; MariaDB/MySQL: SHOW GLOBAL STATUS, the whole server; Pebble: its metrics), "+
			"per operation; "+
			"only counters that grew somewhere; median over repeats; n/a = not read (another engine, or not readable)",
		"Relative engine counters: counter per operation(target) / counter per operation("+d.Experiment.Base+")")
	if len(tables) < 2 {
		return tables
	}
	if len(tables[1].Columns) == 0 {
		return tables[:1]
	}
	tables[1].Legend += fmt.Sprintf("; only counters whose per-op figure differs from the base's by more than %.0f%% somewhere",
		engineStatDiff*100)
	return tables
}

// engineStatNotes say how precise the engine counters are, and which steps
// could not read them.
func engineStatNotes(d *Data, keys []cellKey, s samples) []string {
	var notes []string
	// Each source's precision, for the sources whose counters grew (the
	// names say the source: engine.StatsReader).
	precision := []struct{ prefix, note string }{
		{"pg_", "PostgreSQL's backends publish their counts when idle, at most once a second, and at exit: the " +
			"runner closes the workers' sessions before its last read, so a step's counts are exact at its end, but " +
			"at its start they miss what the workers did in the last second of the warm-up (all of a warm-up under " +
			"a second), which the step's counts then include: up to 1 s / T too much for a step of T seconds at a " +
			"steady rate (under 2% at 60 s; a 3 s step after a 0.5 s warm-up counted 1.16 to 1.36 commits per point " +
			"query), nothing without a warm-up; pg_exact's two (WAL insert position, next transaction id) are read " +
			"from shared state and exact"},
		{"status.", "MariaDB's status counters are live, and what the reads add themselves (a temporary table and " +
			"its scan) is taken off"},
		{"pebble.", "Pebble's metrics are read in-process and exact"},
	}
	names := engineStatNames(keys, s)
	for _, p := range precision {
		if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p.prefix) }) {
			notes = append(notes, "engine counters: "+p.note)
		}
	}
	for _, t := range d.targets() {
		var tests []string
		for _, k := range keys {
			for _, r := range s[t][k] {
				if r.Facts[store.FactEngineStatsUnread] == 1 {
					tests = append(tests, fmt.Sprintf("%s @%d", r.Test, r.Threads))
					break
				}
			}
		}
		if len(tests) > 0 {
			notes = append(notes, fmt.Sprintf("engine counters: not read on %s for %s (the engine's statistics "+
				"query failed; the run's log says why): no per-op figures for them", t, strings.Join(tests, ", ")))
		}
	}
	return notes
}
