package store

import (
	"encoding/json"
	"time"

	"benchlab/internal/meter"
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
		// Client is the client path the spec asked for ("driver",
		// "fast"; empty: the default).
		Client string `json:"client,omitempty"`
	} `json:"target"`
	// Engine is what the engine reported about itself once opened.
	Engine struct {
		Version  string            `json:"version"`
		Build    string            `json:"build"`
		Settings map[string]string `json:"settings"`
		// SettingUnits: the unit a bare number of a setting counts in,
		// where the server says (engine.Info.SettingUnits).
		SettingUnits map[string]string `json:"setting_units,omitempty"`
		// Client is the client path the workers used ("fast", "driver"),
		// for a server engine with a choice; a fall back to the driver
		// is explained in Notes.
		Client string `json:"client,omitempty"`
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
	// Attempt is the job's attempt (from 1) that ran the experiment.
	Attempt int `json:"attempt,omitempty"`
	// Lease is the job's lease that attempt took (Store.TakeLease); the
	// runs record it, the manifest does not.
	Lease string `json:"-"`
}

// BuildInfo identifies the benchlab binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go"`
}

// Host holds the facts of the machine that do not change during a run
// (meter.Host), kept in every run's manifest.
type Host = meter.Host

// Canary is what the fixed probes measured before (or after) a run
// (meter.CanaryReading).
type Canary = meter.CanaryReading

// Machine is a snapshot of the machine's load (meter.Machine).
type Machine = meter.Machine

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
