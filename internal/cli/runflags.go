package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/dsn"
	"benchlab/internal/meter"
	"benchlab/internal/preflight"
	"benchlab/internal/spec"
	"benchlab/internal/workload"
)

// This file is run's flags and how they build the spec: the spec file or one
// --engine target, then every flag that was set.

// runFlags are the flags of `benchlab run`, named as sysbench users expect.
type runFlags struct {
	fs                                                *pflag.FlagSet
	spec, preset, name, base, engine, tests, threads  string
	time, readTime, writeTime, warmup, reportInterval string
	tables, repeats                                   int
	tableSize                                         int64
	seed                                              uint64
	set                                               []string
	store, workdir, reportOut, format, psMode, color  string
	keepData, yes, dryRun, skipSpace                  bool
	metricsAddr                                       string
	waitQuiet, cpuProfile, flushEvery                 string
	suite                                             string
	// sweep is --sweep setting=v1,v2: the flag-built target's sweep.
	sweep []string
	// opts are the flags of every suite's own options.
	opts       *suiteFlags
	warmupTime string
	k          knobs
	// profile and profileHz are --profile and --profile-hz.
	profile   bool
	profileHz int
	// speedProbe is --speed-probe (spec speed_probe).
	speedProbe string
	// interleave is --interleave (spec workload.interleave): a turn, or off.
	interleave string
	// schedule is scheduleTargets' sentence for the built spec: which mode
	// the targets run in and why.
	schedule string
	// getenv is the command's environment (Env.Getenv), which the spec's
	// targets read (versions dir, server logs, passwords).
	getenv func(string) string
}

// DefaultProfileHz is --profile's sampling rate: 99 per second, off the
// round figures at which periodic work in the server would alias with it.
const DefaultProfileHz = 99

// takeRunFlags gives cmd the flags of `benchlab run`, grouped in its
// usage, and makes it call do with them once its arguments are read (run,
// plan and queue take them); cmd may register flags of its own after.
func takeRunFlags(env Env, cmd *cobra.Command, do func(*runFlags) error) {
	f := newRunFlags(cmd.Flags())
	f.getenv = env.Getenv
	cmd.SetUsageFunc(groupedUsage)
	cmd.RunE = body(func(_ *cobra.Command, args []string) error {
		if err := f.args(args); err != nil {
			return err
		}
		return do(f)
	})
}

// newRunFlags registers the flags of `benchlab run` on fs.
func newRunFlags(fs *pflag.FlagSet) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.spec, "spec", "", "experiment spec file (TOML); may also be the first argument")
	fs.StringVar(&f.preset, "preset", "", "size preset: smoke, credible, or for the insert suite cached or io-bound (default: the faithful docs/method.md sizes)")
	fs.StringVar(&f.name, "name", "", "experiment name")
	fs.StringVar(&f.base, "base", "", "target every other is compared with (default: the first)")
	fs.StringVar(&f.engine, "engine", "", "engine of a single target when no spec file is given (e.g. sqlite)")
	fs.StringArrayVar(&f.set, "set", nil, "engine setting key=value for the flag-built target (repeatable)")
	fs.StringArrayVar(&f.sweep, "sweep", nil, "run the flag-built target once per value of one setting: an engine setting, memory or cpus, "+
		"e.g. cache_size=-2000,-64000; the report adds a table of each test against the value")
	fs.StringVar(&f.suite, "suite", "", "workload suite: "+strings.Join(workload.Names(), ", ")+" (default sysbench; benchlab list describes them)")
	fs.StringVar(&f.tests, "tests", "", "comma-separated tests or families (default: the whole suite)")
	f.opts = addSuiteFlags(fs)
	fs.StringVar(&f.threads, "threads", "", "comma-separated thread counts, e.g. 1,2,4")
	fs.StringVar(&f.time, "time", "", "duration of every test (sets read and write time); seconds or a duration like 30s")
	fs.StringVar(&f.readTime, "read-time", "", "duration of read tests")
	fs.StringVar(&f.writeTime, "write-time", "", "duration of write tests")
	fs.StringVar(&f.warmup, "warmup", "", "warm-up before each test, excluded from results")
	fs.StringVar(&f.reportInterval, "report-interval", "", "seconds between live lines (0: none)")
	fs.IntVar(&f.tables, "tables", 0, "number of tables")
	fs.Int64Var(&f.tableSize, "table-size", 0, "rows per table")
	fs.IntVar(&f.repeats, "repeats", 0, "repeats of each target")
	fs.StringVar(&f.psMode, "db-ps-mode", "", "auto (server-side prepared statements, the default) or disable, as sysbench")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed (default: a new one, stored with the run)")
	addStoreFlag(fs, &f.store)
	fs.StringVar(&f.workdir, "workdir", "", "where data dirs are created (default: a temp dir)")
	fs.BoolVar(&f.keepData, "keep-data", false, "keep each run's data dir")
	fs.BoolVarP(&f.yes, "yes", "y", false, "run a plan of more than an hour without asking")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (steps, times, estimated end) and exit without running")
	fs.BoolVar(&f.skipSpace, "skip-space-check", false, "run even when the suite's estimate of its data exceeds the free space of the data dirs' filesystem, or an embedded engine's per-connection caches the available memory")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of benchlab itself to this file (to study the client's cost)")
	fs.StringVar(&f.flushEvery, "flush-every", "", "how often a running step's 1-second series is written to the store, so a killed run keeps it (default 5s)")
	fs.StringVar(&f.waitQuiet, "wait-quiet", "", "before each run, wait up to this long for the machine's CPU use to drop below 10%")
	addReportOutFlags(fs, &f.reportOut, &f.format, &f.color)
	fs.StringVar(&f.warmupTime, "warmup-time", "", "the same as --warmup (sysbench's name)")
	fs.BoolVar(&f.profile, "profile", false, "record a CPU profile (perf record call stacks) of the server, or of benchlab for an in-process engine, over every measured step; the report then says which functions take more time per operation")
	fs.IntVar(&f.profileHz, "profile-hz", 0, "samples per second of CPU time for --profile (default 99; implies --profile)")
	fs.StringVar(&f.speedProbe, "speed-probe", "", "how often the CPU speed probes run on each CPU during a measured step (default 200ms), or off: they flag runs on slowed CPUs and cost the client a little CPU")
	fs.StringVar(&f.interleave, "interleave", "", "run each repeat's targets side by side in turns of this length (e.g. 20ms), or off: "+
		"one target after the other (default: interleaved in turns of "+DefaultTurn.String()+" where the targets fit in memory side by side; "+
		"spec workload.interleave)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve live Prometheus metrics (ops/s, latency quantiles, errors per target and test) at http://ADDR/metrics during the run; loopback only, e.g. 127.0.0.1:9464")
	addKnobs(fs, &f.k)
	setGroup(fs, groupExperiment, "spec", "preset", "name", "base", "engine", "set", "sweep", "suite", "repeats", "seed", "yes", "dry-run",
		"workdir", "keep-data", "skip-space-check", "wait-quiet", "cpuprofile", "flush-every", "profile", "profile-hz", "speed-probe")
	setGroup(fs, groupWorkload, "tests", "threads", "time", "read-time", "write-time", "warmup", "warmup-time",
		"report-interval", "tables", "table-size", "db-ps-mode")
	setGroup(fs, groupOutput, "store", "output", "format", "color", "metrics-addr")
	return f
}

// args takes the spec file as the one positional argument.
func (f *runFlags) args(args []string) error {
	switch {
	case len(args) > 1:
		return usagef("unexpected argument %q; give one spec file", args[1])
	case len(args) == 1 && f.spec != "":
		return usagef("spec file given twice: %q and --spec %q", args[0], f.spec)
	case len(args) == 1:
		f.spec = args[0]
	}
	return nil
}

// parseSeconds accepts sysbench's plain seconds ("10") or a Go duration,
// never negative and never past what a duration holds (spec.Duration.Set).
func parseSeconds(flagName, v string) (spec.Duration, error) {
	var d spec.Duration
	if err := d.Set(v); err != nil {
		return spec.Duration{}, usagef("flag --%s: %v", flagName, err)
	}
	return d, nil
}

// buildSpec loads the spec file (if any) and applies the flags that were set.
func (f *runFlags) buildSpec() (spec.Spec, error) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	if f.engine == "" && f.spec == "" {
		f.engine = f.k.inferEngine(set)
	}
	s, err := f.baseSpec(set)
	if err != nil {
		return s, err
	}
	if err := f.applySweep(&s); err != nil {
		return s, err
	}
	w := &s.Workload
	if set["name"] {
		s.Name = f.name
	}
	if set["base"] {
		s.Base = f.base
	}
	if set["seed"] {
		s.Seed = f.seed
	}
	if set["workdir"] {
		s.WorkDir = f.workdir
	}
	if set["suite"] {
		w.Suite = f.suite
	}
	if set["tests"] {
		w.Tests = splitList(f.tests)
	}
	if err := f.opts.apply(&s); err != nil {
		return s, err
	}
	if err := f.applyWorkload(w, set); err != nil {
		return s, err
	}
	if err := f.applyMeasure(&s, set); err != nil {
		return s, err
	}
	if err := f.k.apply(&s, set); err != nil {
		return s, err
	}
	s.Getenv = f.getenv
	if err := s.Validate(); err != nil {
		return s, f.sweepError(err)
	}
	f.schedule = scheduleTargets(&s, preflight.MemAvailable())
	return s, nil
}

// baseSpec is the spec file with its preset, or without one the preset's
// spec with one target of --engine and its --set settings.
func (f *runFlags) baseSpec(set map[string]bool) (spec.Spec, error) {
	var s spec.Spec
	var err error
	if f.spec != "" {
		if s, err = spec.Load(f.spec, f.preset); err != nil {
			return s, err
		}
	} else {
		s = spec.Default()
		if err := spec.ApplyPreset(&s, f.preset); err != nil {
			return s, usagef("flag --preset: %v", err)
		}
		if f.engine == "" && set["dsn"] {
			if _, err := dsn.Parse(f.k.dsn); err != nil {
				return s, usagef("flag --dsn: %v", err)
			}
		}
		if f.engine == "" {
			return s, usagef("no spec file and no --engine; give a spec file or e.g. --engine sqlite")
		}
		s.Name = f.engine
		s.Targets = []spec.Target{{Name: f.engine, Engine: f.engine, Settings: map[string]any{}}}
	}
	if set["engine"] && f.spec != "" {
		return s, usagef("flag --engine: only for runs without a spec file (the spec names its targets)")
	}
	for _, kv := range f.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return s, usagef("flag --set: %q is not key=value", kv)
		}
		if f.spec != "" {
			return s, usagef("flag --set: only for runs without a spec file; put settings in [target.settings]")
		}
		if field, ok := spec.TargetField(k); ok {
			return s, usagef("flag --set: %s is a field of the target, not an engine setting; %s", k, targetFieldHint(field))
		}
		s.Targets[0].Settings[k] = v
	}
	return s, nil
}

// applyWorkload applies the [workload] flags that were set: threads,
// durations, prepared statements, tables, rows and repeats.
func (f *runFlags) applyWorkload(w *spec.Workload, set map[string]bool) error {
	if set["threads"] {
		w.Threads = nil
		for _, t := range splitList(f.threads) {
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 || n > spec.MaxThreads {
				return usagef("flag --threads: %q is not allowed; want integers from 1 to %d, like 1,2,4", t, spec.MaxThreads)
			}
			w.Threads = append(w.Threads, n)
		}
		if len(w.Threads) == 0 {
			return usagef("flag --threads: empty; want positive integers like 1,2,4")
		}
	}
	for _, d := range []struct {
		name string
		val  string
		dst  []*spec.Duration
	}{
		{"time", f.time, []*spec.Duration{&w.ReadTime, &w.WriteTime}},
		{"read-time", f.readTime, []*spec.Duration{&w.ReadTime}},
		{"write-time", f.writeTime, []*spec.Duration{&w.WriteTime}},
		{"warmup", f.warmup, []*spec.Duration{&w.Warmup}},
		{"warmup-time", f.warmupTime, []*spec.Duration{&w.Warmup}},
		{"report-interval", f.reportInterval, []*spec.Duration{&w.ReportInterval}},
	} {
		if !set[d.name] {
			continue
		}
		v, err := parseSeconds(d.name, d.val)
		if err != nil {
			return err
		}
		for _, p := range d.dst {
			*p = v
		}
	}
	if set["db-ps-mode"] {
		switch f.psMode {
		case "auto":
			w.Prepared = true
		case "disable":
			w.Prepared = false
		default:
			return usagef("flag --db-ps-mode: %q is not allowed; want auto or disable", f.psMode)
		}
	}
	if set["tables"] {
		if f.tables < 1 || f.tables > spec.MaxTables {
			return usagef("flag --tables: %d is not allowed; want 1 to %d", f.tables, spec.MaxTables)
		}
		w.Tables = f.tables
	}
	if set["table-size"] {
		if f.tableSize < 0 || f.tableSize > spec.MaxTableSize {
			return usagef("flag --table-size: %d is not allowed; want 0 to %d rows", f.tableSize, int64(spec.MaxTableSize))
		}
		w.TableSize = f.tableSize
	}
	if set["repeats"] {
		if f.repeats < 1 || f.repeats > spec.MaxRepeats {
			return usagef("flag --repeats: %d is not allowed; want 1 to %d", f.repeats, spec.MaxRepeats)
		}
		w.Repeats = f.repeats
	}
	return nil
}

// applyMeasure applies the flags of what is measured beside the
// operations and how targets share the machine: the profile, the CPU
// speed probes, the interleaving.
func (f *runFlags) applyMeasure(s *spec.Spec, set map[string]bool) error {
	w := &s.Workload
	switch {
	case set["profile-hz"]:
		if f.profileHz < 1 || f.profileHz > spec.MaxProfileHz {
			return usagef("flag --profile-hz: %d is not allowed; want 1 to %d samples per second", f.profileHz, spec.MaxProfileHz)
		}
		if set["profile"] && !f.profile {
			return usagef("flag --profile-hz: given with --profile=false")
		}
		s.ProfileHz = f.profileHz
	case set["profile"] && f.profile && s.ProfileHz == 0:
		s.ProfileHz = DefaultProfileHz
	case set["profile"] && !f.profile:
		s.ProfileHz = 0
	}
	if set["speed-probe"] {
		s.SpeedProbe = f.speedProbe
		if _, err := s.SpeedProbeEvery(); err != nil {
			return usagef("flag --speed-probe: %q is not allowed; want a duration from %v to %v or off", f.speedProbe,
				meter.MinSpeedProbeEvery, meter.MaxSpeedProbeEvery)
		}
	}
	if set["interleave"] {
		if err := w.Interleave.UnmarshalText([]byte(strings.TrimSpace(f.interleave))); err != nil {
			return usagef("flag --interleave: %v", err)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
