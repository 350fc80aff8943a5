package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"benchlab/internal/livemetrics"
	"benchlab/internal/preflight"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/stale"
	"benchlab/internal/store"
	"benchlab/internal/timeplan"
)

func newRunCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [spec.toml] [flags]",
		Short: "run an experiment from a spec file and/or flags",
		Long: "Runs an experiment from a spec file and/or flags. Without a spec file, --engine makes a single\n" +
			"target. Flags override the file.",
		Example: "  benchlab run --engine sqlite --tests point-query,scan --threads 1,2 --time 10s\n" +
			"  benchlab run examples/sqlite-sync.toml --preset credible -o report.html",
	}
	takeRunFlags(env, cmd, func(f *runFlags) error { return runRun(env, f) })
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
		lm, err := livemetrics.Start(f.metricsAddr)
		if err != nil {
			return usagef("flag --metrics-addr: %v", err)
		}
		defer lm.Close()
		opt.Live = lm.Record
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
		if line := scheduleTargets(&s, preflight.MemAvailable()); line != "" {
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
	if err := preflight.Check(s, storeFile, preflight.Options{KeepData: opt.KeepData, SkipSpace: pc.skipSpace}); err != nil {
		return usagef("%v", err)
	}
	pc.rates = storeRates(env, storeFile, s)
	sc, err := planAndConfirm(env, s, pc)
	if err != nil || pc.dryRun {
		return err
	}
	tracker := timeplan.NewTracker(sc, time.Now())
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
	rates                  timeplan.Rates
}

// planAndConfirm prints the plan of s and, when it is longer than longRun
// and neither --yes nor --dry-run was given, asks on a terminal or refuses
// with a usage error that says how to shorten it.
func planAndConfirm(env Env, s spec.Spec, pc planCheck) (timeplan.Schedule, error) {
	sc, err := timeplan.OfWithRates(s, pc.rates)
	if err != nil {
		return sc, err
	}
	if err := sc.Write(env.Stdout, time.Now()); err != nil {
		return sc, err
	}
	if sc.Total() >= timeplan.MaxTotal {
		return sc, usagef("planned for %s, which cannot be meant; %s", timeplan.Long(timeplan.MaxTotal), shortenAdvice(s, pc))
	}
	if pc.yes || pc.dryRun || sc.Total() <= longRun {
		return sc, nil
	}
	advice := shortenAdvice(s, pc)
	if in, ok := env.Stdin.(*os.File); ok && isTerminal(in) && isTerminal(env.Stdout) {
		printWrapped(env.Stdout, "This run is planned for %s, more than an hour. %s", timeplan.Long(sc.Total()), advice)
		fmt.Fprint(env.Stdout, "Run it? [y/N] ")
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			return sc, nil
		}
		return sc, usagef("not confirmed; nothing was run")
	}
	return sc, usagef("planned for %s, more than an hour, and not confirmed: %s; --yes runs it as planned",
		timeplan.Long(sc.Total()), advice)
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
			if sc, err := timeplan.OfWithRates(alt, pc.rates); err == nil {
				opts = append(opts, fmt.Sprintf("--preset %s takes %s", p, timeplan.Long(sc.Total())))
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
