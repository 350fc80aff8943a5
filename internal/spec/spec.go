// Package spec reads, completes and validates an experiment file (TOML) and
// expands it into the cells the runner executes. Defaults come first, then a
// named preset, then the file, then command-line flags.
package spec

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode"

	"benchlab/internal/analysis"
	"benchlab/internal/cpulist"
	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/workload"
)

// Spec is an experiment: targets, one of which is the base, and a workload
// run against each of them.
type Spec struct {
	Name string `toml:"name"`
	// Base names the target every other is compared with; default the first.
	Base string `toml:"base"`
	// Preset is "" (faithful defaults), "credible" or "smoke".
	Preset string `toml:"preset"`
	// WorkDir holds the data dirs of the cells; default a temp dir.
	WorkDir string `toml:"workdir"`
	// Seed makes data and random choices reproducible; 0 picks one per run.
	Seed uint64 `toml:"seed"`
	// ClientCPUs pins benchlab's own threads (the clients) to a CPU list
	// ("1", "2-3"); a target's cpus pins its server. Empty: no pinning.
	ClientCPUs string `toml:"client_cpus"`
	// ProfileHz, when > 0, records a CPU profile of every measured step at
	// this many samples per second with perf record (run --profile,
	// --profile-hz). 0: no profile.
	ProfileHz int `toml:"profile_hz,omitempty"`
	// SpeedProbe is how often the CPU speed probes run on each CPU during
	// a measured step (meter.SpeedProbe): a duration from 10ms to 10s,
	// "off" for none (no slow-CPU flags then), "" for the default 200ms.
	SpeedProbe string `toml:"speed_probe,omitempty"`
	// Sequence says the targets are listed in release order, so the report
	// locates where along the sequence a metric changed.
	Sequence bool     `toml:"sequence"`
	Targets  []Target `toml:"target"`
	Workload Workload `toml:"workload"`
	// Gate asks for a regression gate on this experiment ([gate]).
	Gate Gate `toml:"gate"`
	// Getenv is the environment of the command that runs the spec
	// (cli.Env.Getenv), never stored: targets read the variables that move
	// server installs and logs (BENCHLAB_VERSIONS, BENCHLAB_SERVER_LOGS) and
	// passwords (MYSQL_PWD) through it. Nil is an empty environment.
	Getenv func(string) string `toml:"-"`
	// origins say, per target, where in the file it came from once
	// Validate expanded the sweeps, so errors name the field the user
	// wrote (targetField); nil names each target by its own index.
	origins []origin
}

// Gate is the [gate] section: with FailOnRegression, `run` exits 3 when a
// target is significantly slower than the base by at least Threshold, and
// `plan` and `run` refuse (exit 2) a spec whose repeats cannot reach the
// p-value the gate needs. Unset fields take analysis.GateOptions' defaults
// (alpha 0.01, Holm, min_effect 0.02, threshold 0.05); a value that is set,
// 0 included, must be in range.
type Gate struct {
	FailOnRegression bool     `toml:"fail_on_regression"`
	Alpha            *float64 `toml:"alpha,omitempty"`
	Correction       string   `toml:"correction,omitempty"`
	MinEffect        *float64 `toml:"min_effect,omitempty"`
	Threshold        *float64 `toml:"threshold,omitempty"`
}

// Options converts the section to the gate's settings, defaults filled.
func (g Gate) Options() analysis.GateOptions {
	o := analysis.GateOptions{Correction: analysis.Correction(g.Correction)}.WithDefaults()
	for _, f := range []struct {
		src *float64
		dst *float64
	}{{g.Alpha, &o.Alpha}, {g.MinEffect, &o.MinEffect}, {g.Threshold, &o.Threshold}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return o
}

// Target is one system under test.
type Target struct {
	Name   string `toml:"name"`
	Engine string `toml:"engine"`
	// Basedir is a server install dir holding bin/; Version an installed
	// version (`benchlab versions`); DSN an existing server to use as is;
	// Config a server config file applied before Settings; CPUs the CPU list
	// the server is pinned to; Memory the memory ("2GB") a started server
	// may use, its page cache included (a cgroup's limit).
	Basedir string `toml:"basedir"`
	Version string `toml:"version"`
	DSN     string `toml:"dsn"`
	Config  string `toml:"config"`
	CPUs    string `toml:"cpus"`
	Memory  string `toml:"memory"`
	// Client is a server engine's client path: "driver" or "fast" (the
	// default where it applies); engine.ParseClient.
	Client   string         `toml:"client,omitempty"`
	Settings map[string]any `toml:"settings"`
	// Sweep runs the target once per value of one setting (sweep.go);
	// Validate replaces the target by those targets, so a validated spec
	// has none.
	Sweep *Sweep `toml:"sweep,omitempty"`
	// Swept says which sweep value a target runs: set on each target a
	// sweep expands into, and stored with it.
	Swept *Swept `toml:"swept,omitempty"`
}

// TargetField reports whether key (in any case) names a field of a
// [[target]] itself (name, engine, basedir, version, dsn, config, cpus)
// rather than an engine setting, and returns the field's name: such a key
// under [target.settings] (or in run's --set) would reach the server as a
// setting of that name and fail late, inside the server's start.
func TargetField(key string) (string, bool) {
	rt := reflect.TypeFor[Target]()
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("toml"), ",")
		if tag != "" && tag != "settings" && strings.EqualFold(tag, key) {
			return tag, true
		}
	}
	return "", false
}

// EngineTarget converts t to what engines open, reading the environment
// through getenv (Spec.Getenv).
func (t Target) EngineTarget(getenv func(string) string) engine.Target {
	return engine.Target{Name: t.Name, Engine: t.Engine, Settings: t.TargetSettings(), Basedir: t.Basedir,
		Version: t.Version, DSN: t.DSN, ConfigFile: t.Config, CPUs: t.CPUs, Memory: t.Memory,
		Client: engine.Client(t.Client), Getenv: getenv}
}

// Workload says what runs against every target: the fields every suite
// shares. A suite's own options live in its table, [workload.<suite>]
// (workload.Configurable); Options returns them.
type Workload struct {
	Suite     string   `toml:"suite"`
	Tests     []string `toml:"tests"`
	Tables    int      `toml:"tables"`
	TableSize int64    `toml:"table_size"`
	Threads   []int    `toml:"threads"`
	ReadTime  Duration `toml:"read_time"`
	WriteTime Duration `toml:"write_time"`
	Warmup    Duration `toml:"warmup"`
	// WarmTime is the duration of the scan warm-ups (scan.warmpre, scan.warm:
	// 60 s in all_small.sh); the other warm-ups run ReadTime.
	WarmTime Duration `toml:"warm_time"`
	// PostwriteWait is the cleanup target time: "auto" for docs/method.md 1.9's
	// formula, or a duration.
	PostwriteWait AutoDuration `toml:"postwrite_wait"`
	// Prepared uses server-side prepared statements (default true); false is
	// sysbench's --db-ps-mode=disable.
	Prepared       bool     `toml:"prepared"`
	Repeats        int      `toml:"repeats"`
	ReportInterval Duration `toml:"report_interval"`
	// Rate, Events and Percentile are sysbench's --rate, --events and
	// --percentile: an open-loop rate in operations per second over all
	// threads of a test (latency from each operation's intended start;
	// 0: closed loop), a count of operations that ends a test before its
	// time (0: none), and the latency percentile of the live lines.
	Rate       float64 `toml:"rate,omitempty"`
	Events     int64   `toml:"events,omitempty"`
	Percentile float64 `toml:"percentile,omitempty"`
	// MaxErrorRate is the error policy: a measured test whose failed
	// operations are a larger share of its attempted ones fails its
	// target (as sysbench stops on errors it is not told to ignore).
	// 0: DefaultMaxErrorRate; 1: no limit.
	MaxErrorRate float64 `toml:"max_error_rate,omitempty"`
	// OpTimeout fails an operation that has run this long (an error), so
	// that a hung server is a result; 0: DefaultOpTimeout.
	OpTimeout Duration `toml:"op_timeout,omitempty"`
	// Interleave, when set, runs the targets of each repeat side by side
	// and measures each test on them in turns of this length (A, B, A,
	// B, ...) instead of one target after the other, so that a slow spell
	// of the machine falls on all of them alike and a verdict compares
	// them repeat by repeat (paired). "off" (or 0): one after the other;
	// unset: run decides (Turn).
	Interleave Turn `toml:"interleave,omitempty"`
	// options are every configurable suite's options by suite name, at
	// defaults, preset and the file's values, so that --suite can switch
	// suites after the file is read.
	options map[string]workload.Options
	// storedNotes are ParseStored's notes on an old stored spec.
	storedNotes []string
}

// DefaultMaxErrorRate is workload.max_error_rate's default: a test where
// more than 1% of the operations failed measured a failing target.
const DefaultMaxErrorRate = 0.01

// DefaultOpTimeout is workload.op_timeout's default, far above any sane
// latency: an operation that runs longer is a hang, not a slow answer.
const DefaultOpTimeout = 60 * time.Second

// Duration is a time.Duration written as "30s", "5m" or "500ms".
type Duration = workload.Duration

// AutoDuration is a Duration or the word "auto".
type AutoDuration struct {
	Auto bool
	Duration
}

// UnmarshalText accepts "auto" or a duration.
func (d *AutoDuration) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*d = AutoDuration{Auto: true}
		return nil
	}
	d.Auto = false
	if err := d.Duration.UnmarshalText(b); err != nil {
		return fmt.Errorf("%w, or \"auto\"", err)
	}
	return nil
}

// MarshalText writes "auto" or the duration.
func (d AutoDuration) MarshalText() ([]byte, error) {
	if d.Auto {
		return []byte("auto"), nil
	}
	return d.Duration.MarshalText()
}

// Error is a validation error: the field (or flag, or file), the bad value and
// what is allowed. The command line turns it into exit code 2.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

func errf(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// IsInvalid reports whether err is (or wraps) a validation error.
func IsInvalid(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Default returns the faithful defaults: the durations and waits of docs/method.md
// 2.3-2.5 (600 s reads, 900 s writes, 5 s warm-up, 60 s scan warm-up, the
// postwrite formula) on one table of a million rows at one thread, and every
// suite's own defaults.
func Default() Spec {
	return Spec{
		Name: "experiment",
		Workload: Workload{
			Suite: "sysbench", Tables: 1, TableSize: 1_000_000, Threads: []int{1},
			ReadTime: Duration{Duration: 600 * time.Second}, WriteTime: Duration{Duration: 900 * time.Second},
			Warmup: Duration{Duration: 5 * time.Second}, WarmTime: Duration{Duration: 60 * time.Second},
			PostwriteWait: AutoDuration{Auto: true}, Repeats: 1, ReportInterval: Duration{Duration: time.Second},
			Prepared: true, options: defaultOptions(),
		},
	}
}

// defaultOptions returns every configurable suite's options at defaults.
func defaultOptions() map[string]workload.Options {
	out := map[string]workload.Options{}
	for _, n := range workload.Names() {
		if c, ok := lookupConfigurable(n); ok {
			out[n] = c.NewOptions()
		}
	}
	return out
}

func lookupConfigurable(name string) (workload.Configurable, bool) {
	s, ok := workload.Lookup(name)
	if !ok {
		return nil, false
	}
	c, ok := s.(workload.Configurable)
	return c, ok
}

// Options returns the options of the workload's suite (nil for a suite
// without options). A Workload built without Default gets the suite's
// defaults.
func (w *Workload) Options() workload.Options {
	if o, ok := w.options[w.Suite]; ok {
		return o
	}
	c, ok := lookupConfigurable(w.Suite)
	if !ok {
		return nil
	}
	if w.options == nil {
		w.options = map[string]workload.Options{}
	}
	o := c.NewOptions()
	w.options[w.Suite] = o
	return o
}

// TargetSettings converts a target's settings to strings, as engines take them.
func (t Target) TargetSettings() map[string]string {
	out := make(map[string]string, len(t.Settings))
	for k, v := range t.Settings {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// SpeedProbeEvery is the pause between two CPU speed probes that
// speed_probe asks for: 0 for the default, -1 for "off"; an error that
// names the field when it is neither a duration in range nor "off".
func (s *Spec) SpeedProbeEvery() (time.Duration, error) {
	switch v := strings.TrimSpace(s.SpeedProbe); v {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d < meter.MinSpeedProbeEvery || d > meter.MaxSpeedProbeEvery {
			return 0, errf("speed_probe", "%q is not allowed; want a duration from %v to %v (e.g. \"200ms\") or \"off\"",
				s.SpeedProbe, meter.MinSpeedProbeEvery, meter.MaxSpeedProbeEvery)
		}
		return d, nil
	}
}

// MaxProfileHz is the highest profile_hz: above it perf's own work would
// distort what it measures (the kernel's default cap is 100,000).
const MaxProfileHz = 10000

// Limits of the shared counts and durations: generous for any real
// experiment, but finite, so that a typo (an extra three zeros) or a flag
// of 1e308 is refused at once instead of growing a plan without bound or
// wrapping a duration round to a negative one.
const (
	// MaxTables is the most tables (sysbench's --tables); every table is
	// created, loaded and planned one by one.
	MaxTables = 100_000
	// MaxTableSize is the most rows per table (workload.MaxRows).
	MaxTableSize = workload.MaxRows
	// MaxEvents is the most operations a test may count (--events).
	MaxEvents = 1_000_000_000_000
	// MaxTargets is the most targets of an experiment, each sweep value
	// counted as one: every target is a run per repeat, and the stored
	// spec holds each in full.
	MaxTargets = 1000
	// MaxThreads is the most threads of one test.
	MaxThreads = 4096
	// MaxThreadCounts is the longest list of thread counts.
	MaxThreadCounts = 100
	// MaxRepeats is the most repeats of each target.
	MaxRepeats = 1000
	// MaxDuration is the longest test, warm-up or wait: 30 days.
	MaxDuration = 30 * 24 * time.Hour
)

// Validate checks every field and fills the base. The error names the field.
func (s *Spec) Validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return errf("name", "must not be empty")
	}
	if i := strings.IndexFunc(s.Name, unicode.IsControl); i >= 0 {
		return errf("name", "%q has a control character at byte %d; want printable text", s.Name, i)
	}
	if s.ClientCPUs != "" {
		if _, err := cpulist.Parse(s.ClientCPUs); err != nil {
			return errf("client_cpus", "%v", err)
		}
	}
	if s.ProfileHz < 0 || s.ProfileHz > MaxProfileHz {
		return errf("profile_hz", "%d is not allowed; want 0 (no profile) or 1 to %d samples per second", s.ProfileHz, MaxProfileHz)
	}
	if _, err := s.SpeedProbeEvery(); err != nil {
		return err
	}
	if s.Seed > math.MaxInt64 {
		return errf("seed", "%d is too large; want 0 (a new seed) to %d", s.Seed, int64(math.MaxInt64))
	}
	if len(s.Targets) == 0 {
		return errf("target", "no targets; want at least one [[target]] with a name and an engine")
	}
	// Sweeps expand first, so that each value's target is checked below
	// as a hand-written one is.
	if err := s.expandSweeps(); err != nil {
		return err
	}
	if len(s.Targets) > MaxTargets {
		return errf("target", "%d targets (sweep values included) is too many; want at most %d", len(s.Targets), MaxTargets)
	}
	if err := s.checkTargets(); err != nil {
		return err
	}
	w := s.Workload
	suite, ok := workload.Lookup(w.Suite)
	if !ok {
		return errf("workload.suite", "unknown suite %q; known: %s", w.Suite, strings.Join(workload.Names(), ", "))
	}
	if err := checkKinds(s.Targets, suite, s.targetField); err != nil {
		return err
	}
	if err := s.checkWorkload(suite); err != nil {
		return err
	}
	if err := s.Gate.Options().Check(); err != nil {
		var fe *analysis.GateFieldError
		if errors.As(err, &fe) {
			return errf("gate."+fe.Field, "%s", fe.Msg)
		}
		return errf("gate", "%v", err)
	}
	if err := suite.Check(s.Params()); err != nil {
		var fe *workload.FieldError
		if errors.As(err, &fe) {
			return errf("workload."+fe.Field, "%s", fe.Msg)
		}
		return errf("workload", "%v", err)
	}
	if _, ok := suite.(workload.Preparer); ok && s.Workload.Prepared {
		for i, t := range s.Targets {
			d, _ := engine.Lookup(t.Engine)
			l, ok := d.(engine.PreparedStatementLoser)
			if !ok {
				continue
			}
			if why := l.LosesPrepared(t.EngineTarget(s.Getenv)); why != "" {
				return errf("workload.prepared", "true, but target[%d] (%s) %s; set prepared = false (statements sent as text)", i, t.Name, why)
			}
		}
	}
	if tc, ok := suite.(workload.TargetChecker); ok {
		for i, t := range s.Targets {
			if err := tc.CheckTarget(s.Params(), t.EngineTarget(s.Getenv)); err != nil {
				return errf(fmt.Sprintf("target[%d]", i), "%v", err)
			}
		}
	}
	return nil
}

// checkTargets checks every target and that their names are unique, and
// fills the base.
func (s *Spec) checkTargets() error {
	seen := map[string]bool{}
	for i, t := range s.Targets {
		if err := s.checkTarget(t, func(sub string) string { return s.targetField(i, sub) }); err != nil {
			return err
		}
		if seen[t.Name] {
			return errf(s.targetField(i, ".name"), "%q is used by two targets; names must be unique", t.Name)
		}
		seen[t.Name] = true
	}
	if err := checkSwept(s.Targets, s.targetField); err != nil {
		return err
	}
	if s.Base == "" {
		s.Base = s.Targets[0].Name
	}
	if !seen[s.Base] {
		names := make([]string, len(s.Targets))
		for i, t := range s.Targets {
			names[i] = t.Name
		}
		return errf("base", "%q names no target; targets are %s", s.Base, strings.Join(names, ", "))
	}
	return nil
}

// checkWorkload checks the [workload] fields every suite shares.
func (s *Spec) checkWorkload(suite workload.Suite) error {
	w := s.Workload
	if len(w.Threads) == 0 {
		return errf("workload.threads", "empty; want a list of thread counts, e.g. [1, 2]")
	}
	if len(w.Threads) > MaxThreadCounts {
		return errf("workload.threads", "%d thread counts is too many; want at most %d", len(w.Threads), MaxThreadCounts)
	}
	for _, n := range w.Threads {
		if n < 1 || n > MaxThreads {
			return errf("workload.threads", "%d is not allowed; want integers from 1 to %d", n, MaxThreads)
		}
	}
	if w.Tables < 1 || w.Tables > MaxTables {
		return errf("workload.tables", "%d is not allowed; want 1 to %d", w.Tables, MaxTables)
	}
	if w.TableSize < 0 || w.TableSize > MaxTableSize {
		return errf("workload.table_size", "%d is not allowed; want 0 to %d rows", w.TableSize, int64(MaxTableSize))
	}
	for _, d := range []struct {
		field string
		v     time.Duration
		min   time.Duration
	}{
		{"workload.read_time", w.ReadTime.Duration, time.Millisecond},
		{"workload.write_time", w.WriteTime.Duration, time.Millisecond},
		{"workload.warmup", w.Warmup.Duration, 0},
		{"workload.warm_time", w.WarmTime.Duration, 0},
		{"workload.report_interval", w.ReportInterval.Duration, 0},
	} {
		if d.v < d.min || d.v > MaxDuration {
			return errf(d.field, "%s is not allowed; want a duration from %s to %s", d.v, d.min, Duration{Duration: MaxDuration})
		}
	}
	if p := w.PostwriteWait.Duration.Duration; !w.PostwriteWait.Auto && (p < 0 || p > MaxDuration) {
		return errf("workload.postwrite_wait", "%s is not allowed; want \"auto\" or a duration from 0s to %s",
			w.PostwriteWait.Duration, Duration{Duration: MaxDuration})
	}
	if w.Repeats < 1 || w.Repeats > MaxRepeats {
		return errf("workload.repeats", "%d is not allowed; want 1 to %d", w.Repeats, MaxRepeats)
	}
	if !(w.Rate >= 0 && w.Rate < 1e9) {
		return errf("workload.rate", "%v is not allowed; want operations per second >= 0 (0: closed loop)", w.Rate)
	}
	if w.Events < 0 || w.Events > MaxEvents {
		return errf("workload.events", "%d is not allowed; want a count from 0 (no limit) to %d", w.Events, int64(MaxEvents))
	}
	for _, c := range []struct {
		field, what string
		set         bool
	}{{"workload.rate", "pace their operations", w.Rate > 0}, {"workload.events", "count their operations as they run", w.Events > 0}} {
		if i, tool, ok := StepToolTarget(s.Targets); ok && c.set {
			return errf(c.field, "%s (%s) runs each step in %s, its own process with its own threads: benchlab's workers "+
				"do not run it, so they cannot %s; remove it or run that target with an in-process engine", s.targetField(i, ""), s.Targets[i].Name, tool, c.what)
		}
		if o, ok := suite.(workload.OutsideRunner); ok && c.set {
			return errf(c.field, "suite %s runs its steps in %s, not in benchlab's workers, so they cannot %s; "+
				"remove it (the program's own options pace or bound it)", s.Workload.Suite, o.RunsOutside(), c.what)
		}
	}
	if err := s.checkInterleave(suite); err != nil {
		return err
	}
	if !(w.Percentile >= 0 && w.Percentile < 100) {
		return errf("workload.percentile", "%v is not allowed; want a percentile above 0 and below 100 (0: 95)", w.Percentile)
	}
	if !(w.MaxErrorRate >= 0 && w.MaxErrorRate <= 1) {
		return errf("workload.max_error_rate", "%v is not allowed; want a share of failed operations from 0 to 1 "+
			"(0: the default %g, 1: no limit)", w.MaxErrorRate, DefaultMaxErrorRate)
	}
	if w.OpTimeout.Duration < 0 {
		return errf("workload.op_timeout", "%s is not allowed; want a duration > 0 (0: the default %s)",
			w.OpTimeout.Duration, DefaultOpTimeout)
	}
	return nil
}
