package store

import (
	"slices"
	"strings"
	"time"

	"benchlab/internal/meter"
)

// Fact names shared by the writer (the runner) and the readers (report,
// export). Every fact a package writes and another reads is named here or
// written and read through a typed accessor (KindStat), so that no one
// builds a name in one package and parses it in another.
const (
	// FactDBBytes is the database's size after a step as the engine counts
	// it (pg_database_size, InnoDB's schema dir, SQLite's pages).
	FactDBBytes = "db_bytes"
	// FactClientGOMAXPROCS is the processors Go had for the step.
	FactClientGOMAXPROCS = "client_gomaxprocs"
	// FactClientPolledIO is 1 when clients waited for the server through
	// Go's network poller, 0 when they blocked in their reads (engine/fastpath);
	// absent for embedded engines.
	FactClientPolledIO = "client_polled_io"
	// FactClientOpsPerCall is the operations per call into the engine (1,
	// or the batch size of a Batcher).
	FactClientOpsPerCall = "client_ops_per_call"
	// FactClientGoMemLimit is the soft memory limit benchlab set on the Go
	// runtime for the step (twice the live heap at its start, plus the
	// runtime's other memory and some slack); absent when GOMEMLIMIT set one.
	FactClientGoMemLimit = "client_go_memory_limit_bytes"
	// FactClientOwnPeakRSS is benchlab's own resident memory at its peak
	// over the measured part of a step: its resident set less what
	// in-process engines held from their own allocators at the same
	// moment (SQLite's page caches: sqlite3_memory_used). For a server
	// target it is the client's resident set (less the results store's
	// SQLite memory when the store is a SQLite file).
	FactClientOwnPeakRSS = "client_own_peak_rss_bytes"
	// FactClientGoPeak is the most the Go runtime held (mapped, not
	// released) over the measured part; FactEnginePeakMemory the most
	// in-process engines held (SQLite's allocator, every database of the
	// process). Absent, like FactClientOwnPeakRSS, in results stored
	// before they were measured.
	FactClientGoPeak     = "client_go_peak_bytes"
	FactEnginePeakMemory = "engine_peak_memory_bytes"
	// FactToolOpsPerSec is the rate an external tool (db_bench) reported.
	FactToolOpsPerSec = "tool_ops_per_sec"
	// FactRetries are the tries after the first that a role's operations
	// needed after conflicts (workload.Tally.Retries); FactRetried the
	// operations that needed any. Absent when none did.
	FactRetries = "retries"
	FactRetried = "retried"
	// FactCPUSpeed is the mean rate of the CPU speed probes over a step's
	// measured part (meter.SpeedProbe: rounds of a fixed loop per
	// microsecond of the probing thread's CPU time, every CPU probed every
	// 200 ms unless the experiment's speed_probe says otherwise; absent
	// when it is "off"); FactCPUSpeedSamples the number of probes behind it. A run's
	// speed far below the other runs' says the machine's CPUs were slow
	// during it (a busy hyperthread sibling, a lowered clock), which its
	// CPU time and steal do not show.
	FactCPUSpeed        = "cpu_speed"
	FactCPUSpeedSamples = "cpu_speed_samples"
	// FactInterleave is the turn, in seconds, of a result measured in an
	// interleaved step (spec workload.interleave): its target and
	// FactInterleaveTargets-1 others took turns through the step, so the
	// results of one repeat were measured in the same window.
	FactInterleave = "interleave_turn_s"
	// FactInterleaveTargets is how many targets took turns in the step.
	FactInterleaveTargets = "interleave_targets"
	// FactEffByTurns is 1 on an interleaved result whose resource use per
	// operation (Eff) was split by turns: benchlab's process counters read
	// at each turn's boundaries, a server's from its own processes.
	FactEffByTurns = "eff_by_turns"
	// FactCPUSpeedCPU is the CPU seconds the probes took over the measured
	// part, left out of the client's CPU (Efficiency.ClientCPU).
	FactCPUSpeedCPU = "cpu_speed_probe_cpu_s"
	// FactServerMemoryLimit is the memory limit of a memory-limited server
	// (its cgroup's), in bytes; the facts below come from that cgroup over
	// the step's measured part and are absent without a limit.
	// FactServerCgroupPeak is its peak usage (the server's memory and the
	// page cache its files take), FactServerLimitHits how often usage met
	// the limit (v1 failcnt, v2 memory.events max), FactServerPageCache
	// and FactServerSwap the page cache and swap at the end, in bytes.
	FactServerMemoryLimit = "server_memory_limit_bytes"
	FactServerCgroupPeak  = "server_cgroup_peak_bytes"
	FactServerLimitHits   = "server_memory_limit_hits"
	FactServerPageCache   = "server_page_cache_bytes"
	FactServerSwap        = "server_swap_bytes"
	// FactEngineStatsUnread is 1 when the engine's own counters
	// (engine.StatsReader) could not be read at the start or the end of a
	// step's measured part; the step then has no EngineStatFact.
	FactEngineStatsUnread = "engine_stats_unread"
)

// engineStatPrefix starts the name of every EngineStatFact.
const engineStatPrefix = "engine."

// EngineStatFact names the growth of one of the engine's own counters
// (engine.StatsReader's name, such as "pg_stat_wal.wal_bytes") over a
// step's measured part: engine.pg_stat_wal.wal_bytes.
func EngineStatFact(name string) string { return engineStatPrefix + name }

// EngineStatName returns the counter's name of an EngineStatFact, ok false
// for any other fact.
func EngineStatName(fact string) (name string, ok bool) {
	return strings.CutPrefix(fact, engineStatPrefix)
}

// Why a perf event could not be counted (the value of its
// CounterUnsupportedFact), as the instruments say it.
const (
	CounterNotSupported = meter.CounterNotSupported
	CounterNotPermitted = meter.CounterNotPermitted
	CounterNotReadable  = meter.CounterNotReadable
)

// CounterFact names the count of a perf event on one side over a step's
// measured part (meter.CounterFact).
func CounterFact(side, event string) string { return meter.CounterFact(side, event) }

// SchedRunFact names the seconds a side's threads ran on a CPU over a step's
// measured part (meter.SchedRunFact).
func SchedRunFact(side string) string { return meter.SchedRunFact(side) }

// SchedWaitFact names the seconds a side's threads waited runnable for a
// CPU (meter.SchedWaitFact).
func SchedWaitFact(side string) string { return meter.SchedWaitFact(side) }

// CounterUnsupportedFact names the fact that says why an event was not
// counted on a side (meter.CounterUnsupportedFact).
func CounterUnsupportedFact(side, event string) string {
	return meter.CounterUnsupportedFact(side, event)
}

// KindStat is one kind of operation's figures in a result: TPC-C's
// New-Order, a custom mix's test (workload.Kinded).
type KindStat struct {
	Kind        string
	Ops, Errors int64
	// Retries are the tries after the first its operations needed.
	Retries       int64
	P50, P99, Max time.Duration
}

// SetKind stores k's figures as facts of r.
func (r *Result) SetKind(k KindStat) {
	if r.Facts == nil {
		r.Facts = map[string]float64{}
	}
	r.Facts[k.Kind+"_ops"] = float64(k.Ops)
	r.Facts[k.Kind+"_errors"] = float64(k.Errors)
	if k.Retries > 0 {
		r.Facts[k.Kind+"_retries"] = float64(k.Retries)
	}
	r.Facts[k.Kind+"_p50_ms"] = msOf(k.P50)
	r.Facts[k.Kind+"_p99_ms"] = msOf(k.P99)
	r.Facts[k.Kind+"_max_ms"] = msOf(k.Max)
}

// Kinds returns the kinds of operation whose figures r holds, sorted by
// kind name.
func (r Result) Kinds() []KindStat {
	var out []KindStat
	for f := range r.Facts {
		kind, ok := strings.CutSuffix(f, "_ops")
		if !ok || strings.HasPrefix(f, "client_") || strings.HasPrefix(f, engineStatPrefix) {
			continue
		}
		out = append(out, KindStat{Kind: kind, Ops: int64(r.Facts[f]), Errors: int64(r.Facts[kind+"_errors"]),
			Retries: int64(r.Facts[kind+"_retries"]),
			P50:     fromMS(r.Facts[kind+"_p50_ms"]), P99: fromMS(r.Facts[kind+"_p99_ms"]), Max: fromMS(r.Facts[kind+"_max_ms"])})
	}
	slices.SortFunc(out, func(a, b KindStat) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// Kind returns the figures of one kind, and whether r has them.
func (r Result) Kind(kind string) (KindStat, bool) {
	for _, k := range r.Kinds() {
		if k.Kind == kind {
			return k, true
		}
	}
	return KindStat{}, false
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMS(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
