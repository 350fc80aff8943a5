package cli

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"benchlab/internal/fleet"
	"benchlab/internal/meter"
	"benchlab/internal/noise"
	"benchlab/internal/runner"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/timeplan"
)

// needPostgres refuses a queue command on a store that is not PostgreSQL:
// the queue lives in the lab's shared results database.
func needPostgres(path string) error {
	if store.IsPostgres(path) {
		return nil
	}
	return usagef("flag --store: %s is a SQLite file; a queue lives in a PostgreSQL results store shared by the lab's machines: give --store postgres://... (or BENCHLAB_STORE)", path)
}

// redactedShown is a store URL without its password, for messages.
func redactedShown(path string) string { return server.RedactDSN(path) }

// queueOnly are run's flags that mean nothing for a queued experiment:
// queue hides and refuses them.
var queueOnly = []string{"output", "format", "color", "yes", "dry-run", "cpuprofile", "metrics-addr", "keep-data"}

func newQueueCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue [spec.toml] [--store postgres://...] [--host-kind K | --host H] [--priority] [run flags]",
		Short: "queue an experiment for a lab's workers (needs a PostgreSQL --store)",
		Long: "Validates an experiment exactly as run does and queues it in the lab's shared PostgreSQL results\n" +
			"store, for the first idle `benchlab worker` of the right kind of machine to run. Prints the job's ID.\n" +
			"Takes run's flags (--preset, --repeats, --tests, ...), which shape the queued spec.",
		Example: "  benchlab queue examples/sqlite-sync.toml --preset smoke --store postgres://lab@db/benchlab\n" +
			"  benchlab queue spec.toml --host-kind nvme-16c --priority",
	}
	var kind, host, timeout, split string
	var priority bool
	takeRunFlags(env, cmd, func(f *runFlags) error {
		return runQueue(env, f, fleet.Placement{HostKind: kind, Host: host}, priority, timeout, split)
	})
	fs := cmd.Flags()
	fs.StringVar(&kind, "host-kind", "", "run it on a machine of this kind only (a worker's --queue), e.g. nvme-16c")
	fs.StringVar(&host, "host", "", "run it on this host only (its host name)")
	fs.BoolVar(&priority, "priority", false, "run it before the jobs queued without --priority")
	fs.StringVar(&timeout, "timeout", "", "stop the experiment after this long (the job fails), and let another machine take the job this long after the worker that took it died (default: twice the planned time and 15 minutes, at least an hour; at least 1m)")
	fs.StringVar(&split, "split", "", "split the experiment into one job per repeat (\"repeat\"), each running every target of its repeat on one machine, spread over the lab's machines of one class, into one experiment")
	setGroup(fs, "Queue", "host-kind", "host", "priority", "timeout", "split")
	for _, n := range queueOnly {
		fs.Lookup(n).Hidden = true
	}
	return cmd
}

func runQueue(env Env, f *runFlags, p fleet.Placement, priority bool, timeoutFlag, split string) error {
	if split != "" && split != "repeat" {
		return usagef("flag --split: %q; want \"repeat\" (one job per repeat)", split)
	}
	for _, n := range queueOnly {
		if f.fs.Changed(n) {
			return usagef("flag --%s: not for queue; a worker runs the experiment (report it afterwards with benchlab report)", n)
		}
	}
	switch {
	case p.HostKind != "" && p.Host != "":
		return usagef("flags --host-kind and --host: give one of them")
	case p.HostKind != "":
		if err := fleet.CheckKind(p.HostKind); err != nil {
			return usagef("flag --host-kind: %v", err)
		}
	case p.Host != "":
		if err := fleet.CheckHost(p.Host); err != nil {
			return usagef("flag --host: %v", err)
		}
	}
	var timeout time.Duration
	if timeoutFlag != "" {
		d, err := parseSeconds("timeout", timeoutFlag)
		if err != nil {
			return err
		}
		if d.Duration < fleet.MinTimeout {
			return usagef("flag --timeout: %s is too short; want at least %s", d.Duration, fleet.MinTimeout)
		}
		timeout = d.Duration
	}
	path := storePath(env, f.store)
	if err := needPostgres(path); err != nil {
		return err
	}
	// The spec is built and checked as run builds and checks it; what
	// concerns the machine (installs, ports, free space) is checked by the
	// worker that takes it.
	s, err := f.buildSpec()
	if err != nil {
		return err
	}
	quiet, flush, err := f.waits()
	if err != nil {
		return err
	}
	info := env
	info.Stdout = env.Stderr // stdout is the job's ID alone
	if err := planBeforeRun(info, s, f.store, f.schedule); err != nil {
		return err
	}
	sc, err := timeplan.Of(s)
	if err != nil {
		return err
	}
	if split != "" && s.Seed == 0 {
		// The parts share the experiment's seed, from which each repeat's
		// seed comes, as the runs of one machine would.
		s.Seed = rand.Uint64()>>1 | 1
	}
	stored := s
	stored.Targets = append([]spec.Target(nil), s.Targets...)
	for i := range stored.Targets {
		stored.Targets[i].DSN = server.RedactDSN(stored.Targets[i].DSN)
	}
	hostname, _ := os.Hostname()
	a := fleet.Args{Spec: stored.TOML(), Name: s.Name, Placement: p, PlannedSeconds: sc.Total().Seconds(),
		TimeoutSeconds: timeout.Seconds(), WaitQuietSeconds: quiet.Seconds(), FlushEverySeconds: flush.Seconds(), SkipSpaceCheck: f.skipSpace, QueuedBy: hostname}
	ctx := context.Background()
	q, err := fleet.Open(ctx, path, redactedShown(path))
	if err != nil {
		return err
	}
	defer q.Close()
	if split != "" {
		return queueParts(env, q, path, stored, a, priority)
	}
	id, err := q.Insert(ctx, a, priority)
	if err != nil {
		return err
	}
	printWrapped(env.Stderr, "benchlab: queued job %d: experiment %q (planned %s) for %s%s",
		id, s.Name, timeplan.Long(sc.Total()), p.Where(), map[bool]string{true: ", ahead of the others"}[priority])
	fmt.Fprintln(env.Stdout, id)
	return nil
}

// queueParts stores the experiment and queues one job per repeat into it
// (queue --split repeat), and prints the jobs' IDs, one per line.
func queueParts(env Env, q *fleet.Queue, path string, stored spec.Spec, a fleet.Args, priority bool) error {
	ctx := context.Background()
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	exp := store.Experiment{Name: stored.Name, Base: stored.Base, Preset: stored.Preset, Spec: a.Spec}
	for _, t := range stored.Targets {
		exp.Targets = append(exp.Targets, t.Name)
	}
	if err := st.CreateExperiment(ctx, &exp); err != nil {
		return err
	}
	n := stored.Workload.Repeats
	parts := make([]fleet.Args, n)
	for r := range n {
		parts[r] = a
		parts[r].PlannedSeconds = a.PlannedSeconds / float64(n)
		parts[r].Part = &fleet.Part{Experiment: exp.ID, Repeat: r + 1, Of: n}
	}
	ids, err := q.InsertParts(ctx, parts, priority)
	if err != nil {
		return err
	}
	printWrapped(env.Stderr, "benchlab: queued jobs %s: experiment %d %q split into %d parts, one per repeat, for %s%s",
		joinIDs(ids), exp.ID, stored.Name, n, a.Placement.Where(), map[bool]string{true: ", ahead of the others"}[priority])
	for _, id := range ids {
		fmt.Fprintln(env.Stdout, id)
	}
	return nil
}

func newWorkerCmd(env Env) *cobra.Command {
	var storeFlag, class string
	var kinds []string
	var maxJobs int
	var once bool
	cmd := &cobra.Command{
		Use:   "worker [--store postgres://...] [--queue KIND] [--class C] [--max-jobs N] [--once]",
		Short: "run queued experiments on this machine, one at a time (needs a PostgreSQL --store)",
		Long: "Takes the jobs of the lab's queue (benchlab queue) that this machine may run: those for any machine,\n" +
			"for this host by name and for the kinds of machine given with --queue; runs each as benchlab run does,\n" +
			"one at a time, with results in the shared store. Ctrl-C (or SIGTERM) stops the running experiment,\n" +
			"keeps what it measured and puts its job back in the queue; a second one exits at once.",
		Example: "  benchlab worker --store postgres://lab@db/benchlab --queue nvme-16c\n" +
			"  benchlab worker --once   # run what is queued for this machine, then exit",
		Args: noArgs,
		RunE: body(func(*cobra.Command, []string) error {
			return runWorker(env, storeFlag, kinds, class, maxJobs, once)
		}),
	}
	fs := cmd.Flags()
	addStoreFlag(fs, &storeFlag)
	fs.StringSliceVar(&kinds, "queue", nil, "kinds of machine this one is (comma-separated or repeated): it takes the jobs queued with --host-kind for them, besides those for any machine and for this host")
	fs.StringVar(&class, "class", "", "the class of machine this one is, for the parts of split experiments (default: its CPU model, cores, memory and kernel)")
	fs.IntVar(&maxJobs, "max-jobs", 0, "exit after this many jobs (0: no limit)")
	fs.BoolVar(&once, "once", false, "exit when no job is left that this machine could take")
	return cmd
}

func runWorker(env Env, storeFlag string, kinds []string, class string, maxJobs int, once bool) error {
	path := storePath(env, storeFlag)
	if err := needPostgres(path); err != nil {
		return err
	}
	if maxJobs < 0 {
		return usagef("flag --max-jobs: %d is negative; want a number of jobs, or 0 for no limit", maxJobs)
	}
	for _, k := range kinds {
		if err := fleet.CheckKind(k); err != nil {
			return usagef("flag --queue: %v", err)
		}
	}
	if class == "" {
		class = meter.HostFacts().Class()
	} else if strings.TrimSpace(class) != class || strings.ContainsFunc(class, unicode.IsControl) {
		return usagef("flag --class: %q; want a name without control characters or surrounding spaces", class)
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("host name: %w", err)
	}
	if err := fleet.CheckHost(host); err != nil {
		return fmt.Errorf("this machine's host name: %w", err)
	}
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	q, err := fleet.Open(context.Background(), path, st.Path())
	if err != nil {
		return err
	}
	defer q.Close()

	// The first signal stops the worker: the running experiment stops as
	// run's does and its job goes back to the queue. A second one exits at
	// once, removing the running experiment's temp work dir.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs, stopSignals := interrupts(env)
	defer stopSignals()
	w := &workerJobs{env: env, path: path, st: st, q: q}
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-sigs:
		case <-env.OutputLost:
		case <-stopWatch:
			return
		}
		fmt.Fprintln(env.Stderr, "\nbenchlab worker: interrupt: stopping; a running experiment keeps what it measured and its job goes back to the queue (again to exit at once)")
		cancel()
		select {
		case <-sigs:
			fmt.Fprintln(env.Stderr, "benchlab worker: second interrupt: exiting now")
			w.removeTemp()
			env.Exit(ExitInterrupted)
		case <-stopWatch:
		}
	}()

	sum, err := q.Work(ctx, fleet.Options{Host: host, ID: fmt.Sprintf("%s-%d", host, os.Getpid()), Kinds: kinds, Class: class,
		MaxJobs: maxJobs, Once: once, Out: env.Stdout, Log: env.Stderr, Run: w.run})
	fmt.Fprintf(env.Stdout, "benchlab worker: %d job(s) done\n", sum.Done)
	if err != nil {
		return err
	}
	if len(sum.Requeued) > 0 {
		fmt.Fprintf(env.Stderr, "benchlab worker: job(s) %v back in the queue\n", sum.Requeued)
		return errInterrupted
	}
	return nil
}

// workerJobs runs a worker's jobs, each one's experiment in the store at
// path, and keeps the running one's temporary work dir, which a second
// interrupt removes before exiting.
type workerJobs struct {
	env  Env
	path string
	st   *store.Store
	q    *fleet.Queue
	mu   sync.Mutex
	tmp  string
}

// removeTemp removes the running job's temporary work dir, if any.
func (w *workerJobs) removeTemp() {
	w.mu.Lock()
	if w.tmp != "" {
		os.RemoveAll(w.tmp)
	}
	w.mu.Unlock()
}

// run runs job j (fleet.Options.Run).
func (w *workerJobs) run(ctx context.Context, j *fleet.Started) error {
	s, err := spec.ParseStored([]byte(j.Args.Spec), fmt.Sprintf("job %d's spec", j.ID))
	if err != nil {
		return fleet.Failed(err)
	}
	for i := range s.Targets {
		// Stored DSNs have no password: it comes from the environment.
		s.Targets[i].DSN = server.DropRedacted(s.Targets[i].DSN)
	}
	s.Getenv = w.env.Getenv
	if err := s.Validate(); err != nil {
		return fleet.Failed(err)
	}
	lease, err := takeLease(w.env, w.st, j)
	if err != nil {
		return err // the store cannot be written: another attempt may succeed
	}
	opt := runner.ExperimentOptions{
		WaitQuiet:    time.Duration(j.Args.WaitQuietSeconds * float64(time.Second)),
		FlushEvery:   time.Duration(j.Args.FlushEverySeconds * float64(time.Second)),
		Job:          &store.QueueJob{ID: j.ID, Worker: j.Worker, Attempt: j.Attempt, Lease: lease},
		OnExperiment: j.Experiment,
	}
	if p := j.Args.Part; p != nil {
		opt.Part = &runner.Part{Experiment: p.Experiment, Repeats: []int{p.Repeat}}
	}
	// The plan is printed; the worker runs it however long it is.
	if err := prepareRun(w.env, s, w.path, &opt, planCheck{yes: true, skipSpace: j.Args.SkipSpaceCheck}); err != nil {
		// This machine cannot run it (an install, a port, the space).
		return fleet.Failed(err)
	}
	dir, err := tempWorkDir(w.env, &s, &opt)
	if err != nil {
		return err
	}
	if dir != "" {
		w.mu.Lock()
		w.tmp = dir
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			os.RemoveAll(dir)
			w.tmp = ""
			w.mu.Unlock()
		}()
	}
	id, err := runPrepared(ctx, w.env, s, w.st, opt)
	var pending *store.PendingError
	switch {
	case err == nil && j.Args.Part != nil:
		return partDone(w.env, w.q, w.st, w.path, id, s, j)
	case err == nil:
		return jobReport(w.env, w.path, id, s)
	case errors.Is(err, store.ErrSuperseded):
		// A later attempt took the job over; this one's runs do not count.
		return fmt.Errorf("attempt %d superseded (experiment %d): %w", j.Attempt, id, err)
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return fleet.Failed(fmt.Errorf("timed out after %s (queue --timeout; the results so far are stored): %w",
			j.Args.Timeout(), err))
	case ctx.Err() != nil:
		// Stopped by the worker (the job goes back to the queue), or
		// cancelled with benchlab cancel (the worker says so).
		return fleet.Failed(fmt.Errorf("stopped: %v", context.Cause(ctx)))
	case errors.As(err, &pending):
		// The store refused a write (kept in the journal): the experiment
		// did not fail, and another attempt may store it whole.
		return err
	case id != 0:
		// The experiment ran and failed: not retried blindly.
		return fleet.Failed(runErrors(w.st, id, err))
	}
	// Nothing was measured (the store could not be written, ...):
	// another attempt may succeed.
	return err
}

// jobReport ends a job's experiment as run ends its own: the report on the
// worker's output, then the spec's [gate], whose regressions fail the job
// (its error names them, and jobs shows it). A report that cannot be built
// is said on the worker's error output and does not fail the job: the
// experiment is stored.
func jobReport(env Env, path string, id int64, s spec.Spec) error {
	if err := printAndWriteReport(env, path, id, reportOut{color: "never"}); err != nil {
		fmt.Fprintf(env.Stderr, "benchlab worker: experiment %d: report: %v\n", id, err)
	}
	found, err := specGate(env, path, id, s)
	switch {
	case errors.Is(err, errRegression):
		return fleet.Failed(fmt.Errorf("gate: %w: %s", errRegression, strings.Join(found, "; ")))
	case err != nil:
		return fleet.Failed(fmt.Errorf("gate: %w", err))
	}
	return nil
}

// runErrors adds to an experiment's error the errors its failed runs
// stored, for the job's record.
func runErrors(st *store.Store, id int64, err error) error {
	runs, rerr := st.Runs(context.Background(), id)
	if rerr != nil {
		return err
	}
	var msgs []string
	for _, r := range runs {
		if r.Error != "" {
			msgs = append(msgs, fmt.Sprintf("%s repeat %d: %s", r.Target, r.Repeat, r.Error))
		}
	}
	if len(msgs) == 0 {
		return err
	}
	return fmt.Errorf("%w: %s", err, strings.Join(msgs, "; "))
}

// takeLease takes job j's lease in the store for this attempt (a random
// token) and returns it: the runs of the job's earlier attempts, whatever
// ended them (a worker that died or was cut off, a signal), are marked
// superseded and left out of reports, this attempt's runs to count
// instead. What they measured stays in the store.
func takeLease(env Env, st *store.Store, j *fleet.Started) (string, error) {
	var token [8]byte
	cryptorand.Read(token[:])
	lease := fmt.Sprintf("%d/%d/%s/%s", j.ID, j.Attempt, j.Worker, hex.EncodeToString(token[:]))
	why := fmt.Sprintf("superseded by attempt %d of job %d on worker %s", j.Attempt, j.ID, j.Worker)
	if d := j.Died; d != nil {
		why = fmt.Sprintf("worker %s stopped heartbeating during job %d's attempt %d; the job was taken again by %s (attempt %d)",
			d.Worker, j.ID, d.Attempt, j.Worker, j.Attempt)
	}
	n, err := st.TakeLease(context.Background(), j.ID, lease, fmt.Sprintf("%s attempt %d", j.Worker, j.Attempt), why)
	if err != nil {
		return "", err
	}
	if n > 0 {
		fmt.Fprintf(env.Stdout, "benchlab worker: job %d: %d run(s) of its earlier attempts marked superseded (kept, left out of reports)\n", j.ID, n)
	}
	return lease, nil
}

// partDone ends a part of a split experiment: the part that completes the
// experiment (the queue counts parts done atomically, so exactly one does)
// has the noise model learn the experiment, and the report and gate
// follow, as for a whole experiment; the others say how many parts are
// done.
func partDone(env Env, q *fleet.Queue, st *store.Store, path string, id int64, s spec.Spec, j *fleet.Started) error {
	ctx := context.Background()
	p := j.Args.Part
	done, err := q.PartDone(ctx, p.Experiment, j.ID)
	if err != nil {
		return err
	}
	if done < p.Of {
		fmt.Fprintf(env.Stdout, "benchlab: part %d of %d of experiment %d done; %d of %d parts have run\n", p.Repeat, p.Of, id, done, p.Of)
		return nil
	}
	if err := noise.LearnStored(ctx, st, id); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "benchlab: part %d of %d of experiment %d done; every part has run: the report\n", p.Repeat, p.Of, id)
	return jobReport(env, path, id, s)
}
