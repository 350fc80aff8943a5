package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/dsn"
	"benchlab/internal/metrics"
	"benchlab/internal/runner"
	"benchlab/internal/schedule"
	"benchlab/internal/spec"
	"benchlab/internal/stale"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

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

// newRunFlags registers the flags of `benchlab run` on fs.
func newRunFlags(fs *pflag.FlagSet) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.spec, "spec", "", "experiment spec file (TOML); may also be the first argument")
	fs.StringVar(&f.preset, "preset", "", "size preset: smoke, credible, or for the insert suite cached or io-bound (default: the faithful METHOD.md sizes)")
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
	var s spec.Spec
	var err error
	set := map[string]bool{}
	f.fs.Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	if f.engine == "" && f.spec == "" {
		f.engine = f.k.inferEngine(set)
	}
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
	if set["threads"] {
		w.Threads = nil
		for _, t := range splitList(f.threads) {
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 || n > spec.MaxThreads {
				return s, usagef("flag --threads: %q is not allowed; want integers from 1 to %d, like 1,2,4", t, spec.MaxThreads)
			}
			w.Threads = append(w.Threads, n)
		}
		if len(w.Threads) == 0 {
			return s, usagef("flag --threads: empty; want positive integers like 1,2,4")
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
			return s, err
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
			return s, usagef("flag --db-ps-mode: %q is not allowed; want auto or disable", f.psMode)
		}
	}
	if set["tables"] {
		if f.tables < 1 || f.tables > spec.MaxTables {
			return s, usagef("flag --tables: %d is not allowed; want 1 to %d", f.tables, spec.MaxTables)
		}
		w.Tables = f.tables
	}
	if set["table-size"] {
		if f.tableSize < 0 || f.tableSize > spec.MaxTableSize {
			return s, usagef("flag --table-size: %d is not allowed; want 0 to %d rows", f.tableSize, int64(spec.MaxTableSize))
		}
		w.TableSize = f.tableSize
	}
	if set["repeats"] {
		if f.repeats < 1 || f.repeats > spec.MaxRepeats {
			return s, usagef("flag --repeats: %d is not allowed; want 1 to %d", f.repeats, spec.MaxRepeats)
		}
		w.Repeats = f.repeats
	}
	switch {
	case set["profile-hz"]:
		if f.profileHz < 1 || f.profileHz > spec.MaxProfileHz {
			return s, usagef("flag --profile-hz: %d is not allowed; want 1 to %d samples per second", f.profileHz, spec.MaxProfileHz)
		}
		if set["profile"] && !f.profile {
			return s, usagef("flag --profile-hz: given with --profile=false")
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
			return s, usagef("flag --speed-probe: %q is not allowed; want a duration from %v to %v or off", f.speedProbe,
				metrics.MinSpeedProbeEvery, metrics.MaxSpeedProbeEvery)
		}
	}
	if set["interleave"] {
		if err := w.Interleave.UnmarshalText([]byte(strings.TrimSpace(f.interleave))); err != nil {
			return s, usagef("flag --interleave: %v", err)
		}
	}
	if err := f.k.apply(&s, set); err != nil {
		return s, err
	}
	s.Getenv = f.getenv
	if err := s.Validate(); err != nil {
		return s, f.sweepError(err)
	}
	f.schedule = scheduleTargets(&s, memAvailable())
	return s, nil
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

func newRunCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [spec.toml] [flags]",
		Short: "run an experiment from a spec file and/or flags",
		Long: "Runs an experiment from a spec file and/or flags. Without a spec file, --engine makes a single\n" +
			"target. Flags override the file.",
		Example: "  benchlab run --engine sqlite --tests point-query,scan --threads 1,2 --time 10s\n" +
			"  benchlab run examples/sqlite-sync.toml --preset credible -o report.html",
	}
	f := newRunFlags(cmd.Flags())
	f.getenv = env.Getenv
	cmd.SetUsageFunc(groupedUsage)
	cmd.RunE = body(func(_ *cobra.Command, args []string) error {
		if err := f.args(args); err != nil {
			return err
		}
		return runRun(env, f)
	})
	return cmd
}

func runRun(env Env, f *runFlags) error {
	s, err := f.buildSpec()
	if err != nil {
		return err
	}
	ro := reportOut{path: f.reportOut, format: f.format, color: f.color}
	if err := ro.check(); err != nil {
		return err
	}
	if err := planBeforeRun(env, s, f.store, f.schedule); err != nil {
		return err
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return usagef("flag --cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	quiet, flush, err := f.waits()
	if err != nil {
		return err
	}
	opt := runner.ExperimentOptions{KeepData: f.keepData, WaitQuiet: quiet, FlushEvery: flush}
	if f.metricsAddr != "" && !f.dryRun {
		lm, err := startLiveMetrics(f.metricsAddr)
		if err != nil {
			return err
		}
		defer lm.close()
		opt.Live = lm.record
		fmt.Fprintf(env.Stdout, "benchlab: live metrics at http://%s/metrics\n", lm.Addr())
	}
	pc := planCheck{yes: f.yes, dryRun: f.dryRun, skipSpace: f.skipSpace, alt: func(preset string) (spec.Spec, error) {
		g := *f
		g.preset = preset
		return g.buildSpec()
	}}
	id, err := execute(env, s, f.store, opt, pc)
	if id != 0 {
		if rerr := printAndWriteReport(env, storePath(env, f.store), id, ro); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err == nil && id != 0 {
		_, err = specGate(env, storePath(env, f.store), id, s)
	}
	return err
}

// waits reads --wait-quiet and --flush-every.
func (f *runFlags) waits() (quiet, flush time.Duration, err error) {
	if f.waitQuiet != "" {
		d, err := parseSeconds("wait-quiet", f.waitQuiet)
		if err != nil {
			return 0, 0, err
		}
		quiet = d.Duration
	}
	if f.flushEvery != "" {
		d, err := parseSeconds("flush-every", f.flushEvery)
		if err != nil {
			return 0, 0, err
		}
		if d.Duration < time.Second {
			return 0, 0, usagef("flag --flush-every: %s is too often; want at least 1s", d.Duration)
		}
		flush = d.Duration
	}
	return quiet, flush, nil
}

// execute runs the experiment with signal handling: the first SIGINT or
// SIGTERM stops the workers and keeps what was measured; a second one exits
// at once.
func execute(env Env, s spec.Spec, storeFlag string, opt runner.ExperimentOptions, pc planCheck) (int64, error) {
	path := storePath(env, storeFlag)
	s.Getenv = env.Getenv
	if s.Workload.Interleave.Unset() {
		// A spec run without run's flags (quickstart, calibrate): the
		// same default, said once.
		if line := scheduleTargets(&s, memAvailable()); line != "" {
			printWrapped(env.Stdout, "benchlab: %s\n", line)
		}
	}
	if err := prepareRun(env, s, path, &opt, pc); err != nil || pc.dryRun {
		return 0, err
	}
	st, err := store.Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if err := st.CheckIntegrity(context.Background()); err != nil {
		return 0, err
	}
	printReplayed(env, st)
	// The work dir (cells' data dirs) is created here rather than by the
	// runner, so that even a second Ctrl-C, which exits at once, removes it.
	tmp, err := tempWorkDir(env, &s, &opt)
	if err != nil {
		return 0, err
	}
	if tmp != "" {
		defer os.RemoveAll(tmp)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The experiment's ID, for a second interrupt to mark its runs.
	var expID atomic.Int64
	onExp := opt.OnExperiment
	opt.OnExperiment = func(id int64) {
		expID.Store(id)
		if onExp != nil {
			onExp(id)
		}
	}
	sigs, stopSignals := interrupts(env)
	defer stopSignals()
	// A closed output (benchlab run | head) or a lost terminal ends the run
	// as one interrupt does, keeping results and cleaning up.
	lost := env.OutputLost
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-sigs:
		case <-lost:
			cancel()
			return
		case <-stopWatch:
			return
		}
		fmt.Fprintln(env.Stderr, "\nbenchlab: interrupt: stopping workers and storing what was measured (again to exit at once)")
		cancel()
		select {
		case <-sigs:
			fmt.Fprintln(env.Stderr, "benchlab: second interrupt: exiting now")
			markInterrupted(st, expID.Load())
			if tmp != "" {
				os.RemoveAll(tmp)
			}
			env.Exit(ExitInterrupted)
		case <-stopWatch:
		}
	}()
	return runPrepared(ctx, env, s, st, opt)
}

// markInterrupted marks the experiment's runs still running as
// interrupted, within a second or two, before a second interrupt exits at
// once: a run left "running" would look alive until `runs --prune`. The
// step under way is not stored; those before it are.
func markInterrupted(st *store.Store, expID int64) {
	if expID == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	runs, err := st.Runs(ctx, expID)
	if err != nil {
		return
	}
	for _, r := range runs {
		if r.Status != store.StatusRunning {
			continue
		}
		r.Status, r.Ended = store.StatusInterrupted, time.Now().UTC()
		r.Error = "a second interrupt exited at once; the test under way was not stored"
		st.FinishRun(ctx, &r)
	}
}

// prepareRun does what comes before an experiment runs, for run, rerun and
// a queue's worker alike: the checks of this machine (preflight), the plan
// printed and, when long, confirmed, and the tracker whose ETA the live
// lines show.
func prepareRun(env Env, s spec.Spec, storeFile string, opt *runner.ExperimentOptions, pc planCheck) error {
	if err := preflight(s, storeFile, preflightOptions{keepData: opt.KeepData, skipSpace: pc.skipSpace}); err != nil {
		return err
	}
	pc.rates = storeRates(env, storeFile, s)
	sc, err := planAndConfirm(env, s, pc)
	if err != nil || pc.dryRun {
		return err
	}
	tracker := schedule.NewTracker(sc, time.Now())
	opt.OnRun = func(i, _ int) { tracker.StartRun(i, time.Now()) }
	opt.Progress = func() string { return tracker.Line(time.Now()) }
	return nil
}

// tempWorkDir makes the temp work dir of a spec that names none (after
// removing those of benchlab processes that are gone), sets it in s and
// opt, and returns it for the caller to remove; "" when the spec names one.
func tempWorkDir(env Env, s *spec.Spec, opt *runner.ExperimentOptions) (string, error) {
	if s.WorkDir != "" {
		return "", nil
	}
	// Work dirs left by benchlab processes killed hard go first.
	if removed, err := stale.SweepWorkDirs(os.TempDir()); err == nil && len(removed) > 0 {
		fmt.Fprintf(env.Stderr, "benchlab: removed %d work dir(s) of benchlab processes that are gone: %s\n",
			len(removed), strings.Join(removed, ", "))
	}
	dir, err := os.MkdirTemp("", "benchlab-")
	if err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if err := stale.MarkOwner(dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	s.WorkDir = dir
	opt.TempWorkDir = true
	return dir, nil
}

// runPrepared runs a prepared experiment into st (runner.RunExperiment),
// its live lines on env.Stdout; ctx's cancellation stops it as an
// interrupt does, keeping what was measured (errInterrupted).
func runPrepared(ctx context.Context, env Env, s spec.Spec, st *store.Store, opt runner.ExperimentOptions) (int64, error) {
	printWrapped(env.Stdout, "benchlab: experiment %q, %d target(s), suite %s, preset %s, results in %s",
		s.Name, len(s.Targets), s.Workload.Suite, orNone(s.Preset), st.Path())
	// The run's live lines and log, each fitted to the terminal's 120
	// columns.
	out := newFitWriter(env.Stdout)
	defer out.Flush()
	opt.Out, opt.Build = out, buildInfo()
	st.Journal(store.WriteTimeout)
	id, err := runner.RunExperiment(ctx, s, st, opt)
	if err != nil && ctx.Err() != nil {
		return id, errInterrupted
	}
	return id, err
}

// printReplayed says which journals of results a failed store refused
// were stored when st was opened.
func printReplayed(env Env, st *store.Store) {
	for _, r := range st.Replayed() {
		printWrapped(env.Stderr, "benchlab: stored %d result(s) and run end(s) kept in %s when the store failed, and removed it",
			r.Entries, r.Path)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// longRun is the planned time above which a run needs --yes or a
// confirmation on the terminal.
const longRun = time.Hour

// planCheck says how execute treats the plan: --yes, --dry-run,
// --skip-space-check, how to build the same run under another preset (nil
// when the command cannot), and the load rates of earlier runs.
type planCheck struct {
	yes, dryRun, skipSpace bool
	alt                    func(preset string) (spec.Spec, error)
	rates                  schedule.Rates
}

// planAndConfirm prints the plan of s and, when it is longer than longRun
// and neither --yes nor --dry-run was given, asks on a terminal or refuses
// with a usage error that says how to shorten it.
func planAndConfirm(env Env, s spec.Spec, pc planCheck) (schedule.Schedule, error) {
	sc, err := schedule.OfWithRates(s, pc.rates)
	if err != nil {
		return sc, err
	}
	if err := sc.Write(env.Stdout, time.Now()); err != nil {
		return sc, err
	}
	if sc.Total() >= schedule.MaxTotal {
		return sc, usagef("planned for %s, which cannot be meant; %s", schedule.Long(schedule.MaxTotal), shortenAdvice(s, pc))
	}
	if pc.yes || pc.dryRun || sc.Total() <= longRun {
		return sc, nil
	}
	advice := shortenAdvice(s, pc)
	if in, ok := env.Stdin.(*os.File); ok && isTerminal(in) && isTerminal(env.Stdout) {
		printWrapped(env.Stdout, "This run is planned for %s, more than an hour. %s", schedule.Long(sc.Total()), advice)
		fmt.Fprint(env.Stdout, "Run it? [y/N] ")
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			return sc, nil
		}
		return sc, usagef("not confirmed; nothing was run")
	}
	return sc, usagef("planned for %s, more than an hour, and not confirmed: %s; --yes runs it as planned",
		schedule.Long(sc.Total()), advice)
}

// shortenAdvice says how long the run would take under each preset that
// shortens it, and which flags shorten it further.
func shortenAdvice(s spec.Spec, pc planCheck) string {
	var opts []string
	if pc.alt != nil {
		for _, p := range []string{"smoke", "credible"} {
			if p == s.Preset {
				continue
			}
			alt, err := pc.alt(p)
			if err != nil {
				continue
			}
			if sc, err := schedule.OfWithRates(alt, pc.rates); err == nil {
				opts = append(opts, fmt.Sprintf("--preset %s takes %s", p, schedule.Long(sc.Total())))
			}
		}
	}
	opts = append(opts, "--time, --tests, --threads or --repeats shorten it too")
	return strings.Join(opts, ", ")
}

// targetFieldHint says how to give a target field that --set cannot set:
// the flag that sets it, or the spec file's [[target]].
func targetFieldHint(field string) string {
	switch field {
	case "engine":
		return "use --engine"
	case "dsn":
		return "use --dsn for a running server"
	case "name":
		return "the flag-built target is named after its engine; name targets in a spec file's [[target]] (--name names the experiment)"
	}
	return fmt.Sprintf("give %s = ... in a spec file's [[target]] (benchlab run spec.toml)", field)
}

// interrupts is where a command that runs experiments hears Ctrl-C and
// SIGTERM: env.Signals when the caller gives one (tests), else the
// process's SIGINT and SIGTERM until stop is called.
func interrupts(env Env) (sigs <-chan os.Signal, stop func()) {
	if env.Signals != nil {
		return env.Signals, func() {}
	}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}
