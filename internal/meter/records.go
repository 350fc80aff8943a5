package meter

import (
	"fmt"
	"strings"
	"time"
)

// The records below are what the instruments measure. They are defined
// here, where they are measured, and the results store keeps them as they
// are (store aliases each), so the instruments import nothing above them.

// Sentinels stored in an efficiency counter instead of a number. Values are
// never guessed: a counter that could not be read says so.
const (
	// NotReadable marks a counter that exists but could not be read (for
	// example /proc/<pid>/io of another user's process, or a data dir on a
	// device missing from /proc/diskstats). Stored as -1.
	NotReadable = -1
	// NotMeasured marks a counter with nothing to measure, such as server
	// CPU for an in-process engine (SQLite). Stored as NULL.
	NotMeasured = -2
)

// Efficiency holds the totals of one measured step between its first sample
// (end of warm-up) and its last (all workers done). Per-operation figures are
// rates divided by the step's QPS, as docs/method.md 2.6 divides vmstat and iostat
// averages: total / Seconds / QPS. Each counter is >= 0, NotReadable or
// NotMeasured.
type Efficiency struct {
	// Seconds is the wall time between the first and the last sample.
	Seconds float64
	// ServerCPU and ClientCPU are user+sys CPU seconds of the server's
	// process tree and of benchlab itself (which, for an in-process engine,
	// includes the engine). Server CPU comes from /proc/<pid>/stat in clock
	// ticks of 10 ms.
	ServerCPU, ClientCPU float64
	// Server* come from /proc/<pid>/io summed over the server tree: bytes the
	// processes caused to be read from or written to storage, and read/write
	// system calls on any file descriptor (sockets included).
	ServerReadBytes, ServerWriteBytes, ServerReadCalls, ServerWriteCalls int64
	// Client* are the same for benchlab (/proc/self/io). For an in-process
	// engine they are the engine's IO.
	ClientReadBytes, ClientWriteBytes, ClientReadCalls, ClientWriteCalls int64
	// Device is the block device holding the data dir ("vda"); empty when it
	// could not be found, and then the Dev* counters are NotReadable.
	Device string
	// Dev* are reads and writes completed and bytes moved on Device, from
	// /proc/diskstats. They count every process using the device.
	DevReads, DevWrites, DevReadBytes, DevWriteBytes int64
	// ServerCS and ClientCS are voluntary plus involuntary context switches.
	ServerCS, ClientCS int64
	// ServerPeakRSS and ClientPeakRSS are the largest resident sizes seen in
	// any sample, in bytes.
	ServerPeakRSS, ClientPeakRSS int64
	// MachineCPU, MachineBusy and MachineSteal are CPU seconds of all cores
	// from /proc/stat over the step: all time, busy time (not idle, not
	// iowait) and time stolen by the hypervisor.
	MachineCPU, MachineBusy, MachineSteal float64
}

// StealPct is the share of all CPU time stolen by the hypervisor during the
// step; NotReadable when /proc/stat was not readable.
func (e *Efficiency) StealPct() float64 {
	if e.MachineCPU <= 0 || e.MachineSteal < 0 {
		return NotReadable
	}
	return 100 * e.MachineSteal / e.MachineCPU
}

// ForeignCPU is the busy CPU seconds of processes that are neither the
// server nor benchlab: machine busy time minus server and client CPU,
// floored at 0 (the three come from counters of different resolution).
// NotMeasured when the busy time is (an interleaved server target's).
func (e *Efficiency) ForeignCPU() float64 {
	if e.MachineBusy == NotMeasured {
		return NotMeasured
	}
	if e.MachineBusy < 0 || e.ClientCPU < 0 || e.ServerCPU == NotReadable {
		return NotReadable
	}
	return max(0, e.MachineBusy-e.ClientCPU-max(e.ServerCPU, 0))
}

// ForeignPct is ForeignCPU as a share of all CPU time of the machine.
func (e *Efficiency) ForeignPct() float64 {
	f := e.ForeignCPU()
	if f == NotMeasured {
		return f
	}
	if f < 0 || e.MachineCPU <= 0 {
		return NotReadable
	}
	return 100 * f / e.MachineCPU
}

// PerOp divides a step total by the number of operations the step did in
// the sampled window: qps times the shorter of the window and the measured
// seconds. The window may run past the measured seconds, into the step's
// start-up and drain, where no operation is counted: dividing by the whole
// window would make every figure per operation too low, the more so on a
// busy machine where start-up and drain take longer. measured <= 0 means
// unknown (the window is used). Sentinels pass through.
func (e *Efficiency) PerOp(total, qps, measured float64) float64 {
	if total < 0 {
		return total
	}
	if e.Seconds <= 0 || qps <= 0 {
		return NotReadable
	}
	window := e.Seconds
	if measured > 0 && measured < window {
		window = measured
	}
	return total / window / qps
}

// IntervalLoad is the CPU use of one second, so that a disturbed second
// is visible. Each figure is >= 0, NotReadable or NotMeasured.
type IntervalLoad struct {
	// ServerCPU and ClientCPU are CPU seconds used in the interval.
	ServerCPU, ClientCPU float64
	// StealPct and ForeignPct are shares of all CPU time of the machine.
	StealPct, ForeignPct float64
	// CPUSpeed is the mean rate of the CPU speed probes that ended in the
	// second (SpeedProbe: rounds per CPU microsecond, comparable
	// with the step's fact cpu_speed); 0 when none did (probes off, the
	// warm-up, a second between two probes).
	CPUSpeed float64
}

// Latency holds the latency figures stored for every step.
type Latency struct {
	Mean, P50, P95, P99, P999, Max time.Duration
}

// Host holds the facts of the machine that do not change during a run.
type Host struct {
	Hostname   string `json:"hostname"`
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	CPUMHz     string `json:"cpu_mhz"`
	Governor   string `json:"cpufreq_governor"`
	Kernel     string `json:"kernel"`
	MemTotalMB int64  `json:"mem_total_mb"`
	// Affinity is the CPU list benchlab may run on (Cpus_allowed_list).
	Affinity string `json:"cpu_affinity"`
	// PerfCounters says whether perf can count hardware events here, for
	// example "not supported: instructions, cycles" on a VM without a
	// virtual PMU; a capability, never a measurement.
	PerfCounters string `json:"perf_counters,omitempty"`
}

// Class describes the kind of machine, without its name: CPU model, cores,
// memory (to the GiB) and kernel. The parts of an experiment split over a
// lab's machines run on machines of one class.
func (h Host) Class() string {
	return fmt.Sprintf("%s, %d cores, %d GiB, kernel %s", h.CPUModel, h.Cores, (h.MemTotalMB+512)/1024, h.Kernel)
}

// ID names the host for the noise model: runs on one ID share their
// history. It is the hostname, CPU model and core count, so a resized VM
// or a new machine under an old name starts a new history.
func (h Host) ID() string {
	return fmt.Sprintf("%s/%s/%d cores", h.Hostname, h.CPUModel, h.Cores)
}

// CanaryReading is what the fixed probes measured before (or after) a run: a
// CPU-bound loop and small fsync-bound writes in the work dir, each for
// about 100 ms, and the memory canary, two dependent random walks of 50 ms
// (MemoryCanary). Set against the host's other runs they tell a
// slow machine from a slow database. Runs stored before the memory canary
// existed have no memory figures (0).
type CanaryReading struct {
	// CPULoopsPerSec is iterations of the fixed CPU loop per second.
	CPULoopsPerSec float64 `json:"cpu_loops_per_s"`
	// FsyncsPerSec is 4 KiB write+fsync pairs per second in the work dir
	// (0 after a run, where it is not probed).
	FsyncsPerSec float64 `json:"fsyncs_per_s"`
	// CacheLoadsPerSec is dependent loads per second of a random walk over
	// 512 KiB (a core's second-level cache).
	CacheLoadsPerSec float64 `json:"cache_loads_per_s,omitempty"`
	// MemLoadsPerSec is dependent loads per second of a random walk over
	// 32 MiB (the shared last-level cache and memory, missing the TLB).
	MemLoadsPerSec float64 `json:"mem_loads_per_s,omitempty"`
	// Error says why a probe could not run (its figure is then 0).
	Error string `json:"error,omitempty"`
}

// Machine is a snapshot of the machine's load, taken before and after a run.
type Machine struct {
	When      string  `json:"when"`
	At        string  `json:"at"`
	LoadAvg1  float64 `json:"loadavg_1m"`
	MemFreeMB int64   `json:"mem_available_mb"`
	// StealPct and BusyPct are shares of all CPU time since the previous
	// snapshot (zero on the first).
	StealPct float64 `json:"steal_pct"`
	BusyPct  float64 `json:"busy_pct"`
}

// Why a perf event could not be counted (the value of its
// CounterUnsupportedFact).
const (
	// CounterNotSupported: the machine or kernel has no such counter
	// (virtual machines often expose no hardware counters).
	CounterNotSupported = 1
	// CounterNotPermitted: perf_event_paranoid forbids it to this user.
	CounterNotPermitted = 2
	// CounterNotReadable: another error of perf_event_open.
	CounterNotReadable = 3
)

// CounterFact names the count of a perf event (perf's name, such as
// "cache-misses") over a step's measured part on one side ("server" or
// "client"): perf_server_cache_misses.
func CounterFact(side, event string) string {
	return "perf_" + side + "_" + strings.ReplaceAll(event, "-", "_")
}

// SchedRunFact names the seconds a side's threads ("server" or "client")
// ran on a CPU over a step's measured part, from the kernel's schedstat;
// SchedWaitFact the seconds they waited runnable for a CPU (run-queue
// delay: the machine's other work, or more runnable threads than CPUs).
func SchedRunFact(side string) string { return "sched_" + side + "_run_s" }

// SchedWaitFact: see SchedRunFact.
func SchedWaitFact(side string) string { return "sched_" + side + "_wait_s" }

// CounterUnsupportedFact names the fact that says why an event was not
// counted on a side (CounterNotSupported, ...).
func CounterUnsupportedFact(side, event string) string {
	return CounterFact(side, event) + "_unsupported"
}
