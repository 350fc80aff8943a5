package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Manifest is the JSON document kept with every run: enough to know exactly
// what ran where, and to run it again.
type Manifest struct {
	Benchlab   BuildInfo `json:"benchlab"`
	Experiment string    `json:"experiment"`
	// Spec is the completed spec (defaults, preset and flags applied), as TOML.
	Spec   string `json:"spec"`
	Preset string `json:"preset"`
	Repeat int    `json:"repeat"`
	// Seed is the experiment's seed; RepeatSeed the seed this run used,
	// the same for every target of one repeat (spec.RepeatSeed). Runs
	// stored before per-repeat seeds have no RepeatSeed and used Seed.
	Seed       uint64 `json:"seed"`
	RepeatSeed uint64 `json:"repeat_seed,omitempty"`
	DataDir    string `json:"data_dir"`
	Target     struct {
		Name     string            `json:"name"`
		Engine   string            `json:"engine"`
		Settings map[string]string `json:"settings"`
	} `json:"target"`
	// Engine is what the engine reported about itself once opened.
	Engine struct {
		Version  string            `json:"version"`
		Build    string            `json:"build"`
		Settings map[string]string `json:"settings"`
	} `json:"engine"`
	Host Host `json:"host"`
	// PID is the benchlab process that ran the run, on Host.Hostname: a run
	// still stored as running whose process is gone was abandoned.
	PID int `json:"pid,omitempty"`
	// Job is the queued job this run was part of, when a worker of a lab's
	// queue ran it (benchlab worker); nil for benchlab run.
	Job *QueueJob `json:"job,omitempty"`
	// Canary holds the fixed probes run just before the run (nil for runs
	// stored before canaries existed).
	Canary *Canary `json:"canary,omitempty"`
	// CanaryAfter holds the probes run right after the run (no fsync
	// probe; nil for runs stored before they existed): with Canary they
	// bracket the run.
	CanaryAfter *Canary   `json:"canary_after,omitempty"`
	MachineLoad []Machine `json:"machine"`
	// Notes say where the run did less than its steps should have, one
	// line each (a cleanup part the server's user may not run).
	Notes []string `json:"notes,omitempty"`
	// Import says where a run `benchlab import` took from another tool's
	// output came from; nil for a run benchlab ran. An imported run has no
	// host, canaries, machine load or engine settings: what the file did
	// not say is absent, never guessed.
	Import  *ImportSource `json:"import,omitempty"`
	Started time.Time     `json:"started"`
	Ended   time.Time     `json:"ended"`
	Status  string        `json:"status"`
}

// ImportSource is the file an imported run was read from.
type ImportSource struct {
	// Tool is the tool whose output the file holds ("sysbench", "db_bench").
	Tool string `json:"tool"`
	// File is the file's absolute path when it was imported.
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// ToolVersion is the tool's version line as the file prints it
	// ("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)", "RocksDB:
	// version 7.8.3"); empty when the file has none.
	ToolVersion string `json:"tool_version,omitempty"`
	// Imported is when benchlab read the file.
	Imported time.Time `json:"imported"`
}

// Imported reports whether the run was imported from another tool's
// output (benchlab import) rather than run by benchlab.
func (m Manifest) Imported() bool { return m.Import != nil }

// QueueJob names the job of a lab's queue (benchlab queue) that a worker
// ran an experiment for.
type QueueJob struct {
	// ID is the job's ID in the queue (benchlab jobs lists it).
	ID int64 `json:"id"`
	// Worker names the worker that took it: its host name and process ID.
	Worker string `json:"worker"`
}

// BuildInfo identifies the benchlab binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go"`
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

// Canary is what the fixed probes measured before (or after) a run: a
// CPU-bound loop and small fsync-bound writes in the work dir, each for
// about 100 ms, and the memory canary, two dependent random walks of 50 ms
// (metrics.MemoryCanary). Set against the host's other runs they tell a
// slow machine from a slow database. Runs stored before the memory canary
// existed have no memory figures (0).
type Canary struct {
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

// ParseManifest decodes a run's manifest; a damaged one yields an empty value.
func ParseManifest(s string) Manifest {
	var m Manifest
	_ = json.Unmarshal([]byte(s), &m)
	return m
}

// JSON encodes m, indented for people who read it.
func (m Manifest) JSON() string {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "{}"
	}
	return string(b)
}
