package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// busySnooze is how long a job fetched while the machine runs another one
// waits before any machine may take it again. A worker listens on several
// queues (any, its host's, its kinds'), each of which may hand it a job,
// but runs one experiment at a time.
const busySnooze = 10 * time.Second

// pollEvery is how often a worker with Once looks for jobs left.
const pollEvery = time.Second

// Options configure a worker.
type Options struct {
	// Host is this machine's host name: the worker takes the jobs queued
	// for it by name (HostQueue), and records it on the jobs it runs.
	Host string
	// ID names the worker (River's client ID): its host name and process ID.
	ID string
	// Kinds are the kinds of machine this one is: it takes the jobs queued
	// for them (KindQueue), besides those for any machine and for Host.
	Kinds []string
	// Class describes the machine (CPU model, cores, memory, kernel): the
	// parts of a split experiment run on machines of one class.
	Class string
	// MaxJobs, when positive, stops the worker after that many jobs.
	MaxJobs int
	// Once stops the worker when no job is left that it could take.
	Once bool
	// Out receives a line as each job starts and ends; Log River's
	// warnings and errors.
	Out, Log io.Writer
	// Run runs a job's experiment. Its context ends when the worker is
	// stopped (the job then goes back to the queue whatever Run returns),
	// when the job times out (Args.Timeout), or when it is cancelled
	// (Queue.Cancel; the job is then cancelled whatever error Run returns). A nil error completes the
	// job; an error marked Failed fails it for good; any other error
	// fails this attempt, and River takes the job again later (at most
	// MaxAttempts attempts).
	Run func(ctx context.Context, j *Started) error
}

// Started is a job a worker took.
type Started struct {
	ID      int64
	Args    Args
	Attempt int
	// Worker and Host are the worker's ID and host name (Options).
	Worker, Host string
	// Experiment records the ID of the job's experiment on the job as soon
	// as the experiment is stored, so `benchlab jobs` shows it while it
	// runs.
	Experiment func(id int64)
	// Died, when not nil, is the attempt before this one, whose worker
	// stopped heartbeating: its experiment keeps what it measured, and Run
	// marks the runs it left running.
	Died *Died
}

// Died is an attempt whose worker died while it ran.
type Died struct {
	Worker     string
	Experiment int64
	Attempt    int
}

func (d *Died) kept() string {
	if d.Experiment == 0 {
		return "it had stored no experiment"
	}
	return fmt.Sprintf("its experiment %d keeps what it measured", d.Experiment)
}

// Summary is what a worker did.
type Summary struct {
	// Done counts the jobs it ran to an end (completed, failed or
	// cancelled).
	Done int
	// Requeued are the jobs it was running when stopped, back in the queue.
	Requeued []int64
}

// worker is the River worker of Kind: one experiment at a time.
type worker struct {
	river.WorkerDefaults[Args]
	q   *Queue
	opt Options
	// pool's connections name the worker (workerPool); client is its River
	// client on it. Every write of the worker to a job goes through them.
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]

	mu sync.Mutex
	// busy: an experiment runs; closed: take no more jobs (stopping, or
	// MaxJobs reached); stopping: the worker was told to stop.
	busy, closed, stopping bool
	// job is the job running (0: none), for the heartbeat; stopJob stops
	// its experiment when the worker is cut off from the store (fence).
	job     int64
	stopJob context.CancelCauseFunc
	sum     Summary
	// full is closed when MaxJobs jobs are done.
	full chan struct{}
}

// Timeout is the job's own timeout (Args.Timeout), which River's rescuer
// also reads: a job still marked running past it is taken again. For a job
// another worker runs and that worker has not heartbeat within
// HeartbeatBound, it is a nanosecond: the rescuer takes the job again at
// once. A failed look at the heartbeats leaves the job alone.
func (w *worker) Timeout(job *river.Job[Args]) time.Duration {
	full := job.Args.Timeout()
	n := len(job.AttemptedBy)
	if n == 0 || job.AttemptedBy[n-1] == w.opt.ID {
		return full
	}
	ctx, cancel := context.WithTimeout(context.Background(), HeartbeatBound/2)
	defer cancel()
	ok, known, err := alive(ctx, w.pool, job.AttemptedBy[n-1])
	if err != nil {
		fmt.Fprintf(w.opt.Log, "benchlab worker: job %d: %v\n", job.ID, err)
		return full
	}
	if known && !ok {
		return time.Nanosecond
	}
	return full
}

// take claims the machine for a job; false and how long to snooze the job
// when it cannot.
func (w *worker) take() (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return false, 0
	case w.busy:
		return false, busySnooze
	}
	w.busy = true
	return true, 0
}

// running records the job the worker runs (0: none) for its heartbeat.
func (w *worker) running(id int64) {
	w.mu.Lock()
	w.job = id
	w.mu.Unlock()
}

// Work runs one job through Options.Run and records its outcome on it.
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	ok, snooze := w.take()
	if !ok {
		return river.JobSnooze(snooze)
	}
	if p := job.Args.Part; p != nil {
		class, by, err := w.q.claimClass(ctx, p.Experiment, w.opt.Class, w.opt.Host)
		if err == nil && class != w.opt.Class {
			err = fmt.Errorf("part %d of %d of experiment %d runs on machines like %s (%s); this one is %s",
				p.Repeat, p.Of, p.Experiment, by, class, w.opt.Class)
		}
		if err != nil {
			w.mu.Lock()
			w.busy = false
			w.mu.Unlock()
			fmt.Fprintf(w.opt.Out, "benchlab worker: job %d left for another machine: %v\n", job.ID, err)
			return river.JobSnooze(busySnooze)
		}
	}
	var prev Output
	if o := job.Output(); len(o) > 0 {
		_ = json.Unmarshal(o, &prev)
	}
	w.running(job.ID)
	out := Output{Host: w.opt.Host, Worker: w.opt.ID, Outcome: OutcomeRunning, Earlier: prev.Earlier}
	// An attempt that never recorded its end: its worker died (killed, or
	// its machine lost) and the job was taken again.
	var died *Died
	if prev.Outcome == OutcomeRunning && prev.Worker != "" && prev.Worker != w.opt.ID {
		died = &Died{Worker: prev.Worker, Experiment: prev.Experiment, Attempt: job.Attempt - 1}
	}
	if prev.Experiment != 0 && !slices.Contains(out.Earlier, prev.Experiment) {
		out.Earlier = append(out.Earlier, prev.Experiment)
	}
	bg := context.WithoutCancel(ctx)
	update := func() {
		if _, err := w.client.JobUpdate(bg, job.ID, &river.JobUpdateParams{Output: out}); err != nil {
			fmt.Fprintf(w.opt.Log, "benchlab worker: job %d: recording its progress: %v\n", job.ID, err)
		}
	}
	update()
	fmt.Fprintf(w.opt.Out, "benchlab worker: job %d (%s, for %s, attempt %d of %d) taken by %s\n",
		job.ID, job.Args.Name, job.Args.Placement, job.Attempt, job.MaxAttempts, w.opt.ID)
	if died != nil {
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d: worker %s stopped heartbeating during attempt %d; %s\n",
			job.ID, died.Worker, died.Attempt, died.kept())
	}
	// The run's context also ends when the worker is cut off from the
	// store (fence).
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	w.mu.Lock()
	w.stopJob = stopRun
	w.mu.Unlock()
	err := w.opt.Run(runCtx, &Started{ID: job.ID, Args: job.Args, Attempt: job.Attempt, Worker: w.opt.ID, Host: w.opt.Host,
		Died: died, Experiment: func(id int64) { out.Experiment = id; update() }})

	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy, w.job, w.stopJob = false, 0, nil
	exp := "no experiment"
	if out.Experiment != 0 {
		exp = fmt.Sprintf("experiment %d", out.Experiment)
	}
	var ret error
	switch {
	case err != nil && errors.Is(context.Cause(runCtx), errCutOff):
		// If this attempt still holds the job, River takes it again later;
		// if another attempt took it over, the guard drops this end.
		out.Outcome, out.Error = OutcomeCutOff, err.Error()
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d stopped, cut off from the store (%s kept); its next attempt, here or on another machine, runs it again\n", job.ID, exp)
		ret = fmt.Errorf("attempt %d stopped: %w", job.Attempt, errCutOff)
	case err != nil && w.stopping && ctx.Err() != nil:
		out.Outcome, out.Error = OutcomeInterrupted, err.Error()
		w.sum.Requeued = append(w.sum.Requeued, job.ID)
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d interrupted (%s kept); back in the queue\n", job.ID, exp)
		ret = river.JobSnooze(0)
	case err != nil && errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely):
		// benchlab cancel: River marks the job cancelled for good.
		out.Outcome, out.Error = OutcomeCancelled, "cancelled with benchlab cancel while it ran"
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d cancelled (%s kept)\n", job.ID, exp)
		ret = err
	case err == nil:
		out.Outcome = OutcomeOK
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d completed: %s\n", job.ID, exp)
	case isFailed(err):
		out.Outcome, out.Error = OutcomeFailed, err.Error()
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d failed (%s): %v\n", job.ID, exp, err)
		ret = river.JobCancel(err)
	default:
		out.Outcome, out.Error = OutcomeError, err.Error()
		fmt.Fprintf(w.opt.Out, "benchlab worker: job %d: attempt %d failed (%s), to be taken again: %v\n", job.ID, job.Attempt, exp, err)
		ret = err
	}
	if rerr := river.RecordOutput(ctx, out); rerr != nil {
		fmt.Fprintf(w.opt.Log, "benchlab worker: job %d: recording its outcome: %v\n", job.ID, rerr)
	}
	if out.Outcome != OutcomeInterrupted {
		w.sum.Done++
		if w.opt.MaxJobs > 0 && w.sum.Done >= w.opt.MaxJobs && !w.closed {
			w.closed = true
			close(w.full)
		}
	}
	return ret
}

// Work runs a worker until ctx ends (a signal: the running experiment
// stops and its job goes back to the queue), MaxJobs jobs are done, or,
// with Once, no job is left that it could take. It returns what it did.
func (q *Queue) Work(ctx context.Context, opt Options) (Summary, error) {
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	w := &worker{q: q, opt: opt, full: make(chan struct{})}
	names := w.queues()
	queues := map[string]river.QueueConfig{}
	for _, n := range names {
		queues[n] = river.QueueConfig{MaxWorkers: 1}
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, river.Worker[Args](w)); err != nil {
		return Summary{}, fmt.Errorf("worker: %w", err)
	}
	pool, err := workerPool(ctx, q.pool, opt.ID)
	if err != nil {
		return Summary{}, fmt.Errorf("worker: %w", err)
	}
	defer pool.Close()
	w.pool = pool
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		ID:      opt.ID,
		Queues:  queues,
		Workers: workers,
		Schema:  Schema,
		// Each job has its own timeout (worker.Timeout); the rescuer looks
		// at jobs running for RescueAfter or more and takes again those
		// past their own timeout or whose worker stopped heartbeating.
		JobTimeout:                  -1,
		RescueStuckJobsAfter:        RescueAfter,
		MaxAttempts:                 MaxAttempts,
		CompletedJobRetentionPeriod: retention,
		CancelledJobRetentionPeriod: retention,
		DiscardedJobRetentionPeriod: retention,
		Logger:                      quietLogger(opt.Log),
	})
	if err != nil {
		return Summary{}, fmt.Errorf("worker: %w", err)
	}
	w.client = client
	// The first heartbeat before any job is taken; then one every
	// HeartbeatEvery until the worker stops.
	first := time.Now()
	if err := beat(ctx, pool, opt.ID, opt.Host, 0); err != nil {
		return Summary{}, fmt.Errorf("worker: %w", err)
	}
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		w.heartbeat(beatCtx, first, func(err error) { fmt.Fprintf(opt.Log, "benchlab worker: %v\n", err) })
	}()
	defer func() {
		stopBeats()
		<-beats
		if err := stopped(context.Background(), pool, opt.ID); err != nil {
			fmt.Fprintf(opt.Log, "benchlab worker: record its stop: %v\n", err)
		}
	}()
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return Summary{}, fmt.Errorf("worker: start: %w", err)
	}
	fmt.Fprintf(opt.Out, "benchlab worker: %s takes jobs for any machine, host %s%s, one at a time, from %s\n",
		opt.ID, opt.Host, kindsLine(opt.Kinds), q.shown)
	stop := func(cancel bool) (Summary, error) {
		w.mu.Lock()
		w.closed = true
		w.stopping = cancel
		w.mu.Unlock()
		var err error
		if cancel {
			err = client.StopAndCancel(context.Background())
		} else {
			err = client.Stop(context.Background())
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			return w.sum, fmt.Errorf("worker: stop: %w", err)
		}
		return w.sum, nil
	}
	var tick <-chan time.Time
	if opt.Once {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return stop(true)
		case <-w.full:
			return stop(false)
		case <-tick:
			w.mu.Lock()
			busy := w.busy
			w.mu.Unlock()
			if busy {
				continue
			}
			n, err := q.pending(ctx, names, opt.ID, opt.Class)
			if err != nil {
				fmt.Fprintf(opt.Log, "benchlab worker: %v\n", err)
				continue
			}
			if n == 0 {
				return stop(false)
			}
		}
	}
}

// queues are the River queues the worker takes jobs from.
func (w *worker) queues() []string {
	names := []string{AnyQueue, HostQueue(w.opt.Host)}
	for _, k := range w.opt.Kinds {
		if q := KindQueue(k); !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	return names
}

func kindsLine(kinds []string) string {
	if len(kinds) == 0 {
		return ""
	}
	return fmt.Sprintf(" and kinds %v", kinds)
}

// pending counts the jobs of the queues that a worker could still take:
// available ones, those due within a few seconds (snoozed while a machine
// was busy, or waiting for a retry), and those it has just taken; parts of
// split experiments pinned to another class of machine do not count.
func (q *Queue) pending(ctx context.Context, queues []string, worker, class string) (int, error) {
	var n int
	err := q.pool.QueryRow(ctx, `SELECT count(*) FROM `+Schema+`.river_job
		WHERE kind = $1 AND queue = ANY($2) AND ((state = 'available'
			OR (state IN ('scheduled', 'retryable') AND scheduled_at <= now() + $3 * interval '1 second'))
			AND NOT EXISTS (SELECT 1 FROM `+classesTable+` c
				WHERE c.experiment = (args->'part'->>'experiment')::bigint AND c.class <> $5)
			OR (state = 'running' AND attempted_by[cardinality(attempted_by)] = $4))`,
		Kind, queues, (busySnooze + 5*time.Second).Seconds(), worker, class).Scan(&n)
	if err != nil && !errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("jobs left: %w", err)
	}
	return n, err
}
