// Package fleet is a lab's queue of experiments, kept in its shared
// PostgreSQL results store with River (github.com/riverqueue/river):
// `benchlab queue` stores a validated spec as a job, and `benchlab worker`,
// on each benchmark machine, takes jobs one at a time and runs them. The
// package owns River: its schema and migrations, the placement of jobs on
// queues, the retry policy and the worker's loop. How an experiment runs is
// its caller's (Options.Run): the command line runs it as `benchlab run`
// does.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Schema is the PostgreSQL schema that holds River's tables, apart from
// the results store's own tables (in the connection's search path, public
// by default).
const Schema = "benchlab_queue"

// Kind is the River job kind of a queued experiment.
const Kind = "benchlab_experiment"

// AnyQueue is the River queue of jobs any machine may run.
const AnyQueue = "any"

// MaxAttempts is how many times a job may start: a job whose machine died
// (the worker process gone, its job still marked running past its timeout)
// is taken again, at most twice; a job whose experiment failed never is
// (Failed).
const MaxAttempts = 3

// Priorities: River runs lower numbers first.
const (
	PriorityNormal = 2
	PriorityHigh   = 1
)

// MinTimeout is the shortest timeout queue's --timeout takes.
const MinTimeout = time.Minute

// RescueAfter is how long a job runs before River's rescuer looks at it:
// the job is then taken again if its worker stopped heartbeating
// (HeartbeatBound) or its own timeout has passed (worker.Timeout).
const RescueAfter = HeartbeatBound

// migrationLock is the advisory lock key that serialises benchlab processes
// migrating River's schema in one database.
const migrationLock = 0x62656e6368717565 // "benchque"

// retention is how long finished jobs stay listed (River's job cleaner);
// their experiments stay in the results store for good.
const retention = 90 * 24 * time.Hour

// Args is a queued experiment: a River job's arguments.
type Args struct {
	// Spec is the completed spec as TOML, as stored with experiments
	// (defaults, preset and flags applied; DSN passwords left out).
	Spec string `json:"spec"`
	// Name is the experiment's name, for listings.
	Name string `json:"name"`
	// Placement says which machines may run it.
	Placement Placement `json:"placement"`
	// PlannedSeconds is the plan's length (timeplan.Of): the job's
	// timeout is derived from it (Timeout).
	PlannedSeconds float64 `json:"planned_s"`
	// TimeoutSeconds, when positive, is the job's timeout as queue's
	// --timeout gave it.
	TimeoutSeconds float64 `json:"timeout_s,omitempty"`
	// WaitQuietSeconds and FlushEverySeconds are run's --wait-quiet and
	// --flush-every (0: not given); SkipSpaceCheck its --skip-space-check.
	WaitQuietSeconds  float64 `json:"wait_quiet_s,omitempty"`
	FlushEverySeconds float64 `json:"flush_every_s,omitempty"`
	SkipSpaceCheck    bool    `json:"skip_space_check,omitempty"`
	// QueuedBy is the host name of the machine that queued it.
	QueuedBy string `json:"queued_by,omitempty"`
	// Part, when set, makes the job one part of an experiment split over
	// the lab's machines (queue --split).
	Part *Part `json:"part,omitempty"`
}

// Part is one job of an experiment split by repeat: it runs every target of
// its repeat, side by side on one machine as an interleaved experiment
// does, into the experiment queue stored for all the parts. The parts of
// one experiment run on machines of one class (Options.Class): the first
// part to start sets it.
type Part struct {
	Experiment int64 `json:"experiment"`
	Repeat     int   `json:"repeat"`
	Of         int   `json:"of"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return Kind }

// Timeout is how long the job may run: TimeoutSeconds when given, else
// twice its plan and a quarter of an hour, at least an hour. Past it the
// worker stops the experiment (the job fails), and a job still marked
// running whose worker is gone is taken again.
func (a Args) Timeout() time.Duration {
	if a.TimeoutSeconds > 0 {
		return time.Duration(a.TimeoutSeconds * float64(time.Second))
	}
	d := 2*time.Duration(a.PlannedSeconds*float64(time.Second)) + 15*time.Minute
	return max(d, time.Hour)
}

// Placement is the constraint on the machines that may run a job: a kind of
// machine (the worker's --queue), one host by name, or neither (any).
type Placement struct {
	HostKind string `json:"host_kind,omitempty"`
	Host     string `json:"host,omitempty"`
}

// Queue is the River queue the placement's jobs go to.
func (p Placement) Queue() string {
	switch {
	case p.HostKind != "":
		return KindQueue(p.HostKind)
	case p.Host != "":
		return HostQueue(p.Host)
	}
	return AnyQueue
}

// String says where the job may run, for people.
func (p Placement) String() string {
	switch {
	case p.HostKind != "":
		return "kind " + p.HostKind
	case p.Host != "":
		return "host " + p.Host
	}
	return "any"
}

// Where says where the job may run, in a sentence.
func (p Placement) Where() string {
	switch {
	case p.HostKind != "":
		return "a machine of kind " + p.HostKind
	case p.Host != "":
		return "host " + p.Host
	}
	return "any machine"
}

// KindQueue is the River queue of the jobs for machines of one kind.
func KindQueue(kind string) string { return "kind-" + kind }

// HostQueue is the River queue of the jobs for one host: its name in lower
// case, dots as underscores (River's queue names have no dots).
func HostQueue(host string) string {
	return "host-" + strings.ReplaceAll(strings.ToLower(host), ".", "_")
}

// queueName is River's rule for queue names.
var queueName = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// CheckKind checks a kind of machine (--host-kind, a worker's --queue):
// lower-case letters and digits, single hyphens or underscores between
// them, at most 59 characters.
func CheckKind(kind string) error {
	if !queueName.MatchString(kind) || len(KindQueue(kind)) > 64 {
		return fmt.Errorf("%q is not a kind of machine; want lower-case letters and digits with single hyphens or underscores between them, at most 59 characters, e.g. nvme-16c", kind)
	}
	return nil
}

// CheckHost checks a host name (--host).
func CheckHost(host string) error {
	if q := HostQueue(host); !queueName.MatchString(q) || len(q) > 64 {
		return fmt.Errorf("%q is not a host name; want letters, digits, dots and single hyphens, at most 59 characters, as hostname prints it", host)
	}
	return nil
}

// Output is what a worker records on a job (River's job output): the
// experiment it produced and where it ran.
type Output struct {
	// Experiment is the ID of the experiment of the latest attempt in the
	// results store.
	Experiment int64 `json:"experiment,omitempty"`
	// Host is the host name of the machine that took the job; Worker the
	// worker (host name and process ID).
	Host   string `json:"host,omitempty"`
	Worker string `json:"worker,omitempty"`
	// Outcome is running, ok, failed, interrupted (back in the queue),
	// error (taken again later), cut-off (stopped, its worker cut off from
	// the store) or cancelled (Queue.Cancel).
	Outcome string `json:"outcome,omitempty"`
	// Error is why the experiment did not complete.
	Error string `json:"error,omitempty"`
	// Earlier are the experiments of earlier attempts: interrupted, or left
	// when their machine died; their partial results stay in the store.
	Earlier []int64 `json:"earlier,omitempty"`
}

// Outcomes recorded in Output.Outcome.
const (
	OutcomeRunning     = "running"
	OutcomeOK          = "ok"
	OutcomeFailed      = "failed"
	OutcomeInterrupted = "interrupted"
	OutcomeError       = "error"
	// OutcomeCancelled: `benchlab cancel` stopped the job while it ran.
	OutcomeCancelled = "cancelled"
	// OutcomeCutOff: its worker stopped it, no heartbeat having reached the
	// store for HeartbeatBound (Fencing in heartbeat.go).
	OutcomeCutOff = "cut-off"
)

// Queue is a connection to the lab's queue.
type Queue struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	shown  string
}

// Open connects to the queue in the PostgreSQL database of dsn (the
// results store's URL), creating River's schema and tables on first use.
// shown is the URL without its password, for messages.
func Open(ctx context.Context, dsn, shown string) (*Queue, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("queue in %s: %s", shown, strings.ReplaceAll(err.Error(), dsn, shown))
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue in %s: %s", shown, strings.ReplaceAll(err.Error(), dsn, shown))
	}
	// A client without queues inserts and lists jobs only.
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: Schema, Logger: quietLogger(io.Discard)})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue client: %w", err)
	}
	return &Queue{pool: pool, client: client, shown: shown}, nil
}

// Close closes the queue's connections.
func (q *Queue) Close() { q.pool.Close() }

// migrate brings River's schema up to date under an advisory lock, so that
// workers starting together migrate once. River's migrations run each in
// its own transaction (one adds an enum value that the next uses).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("lock the queue's schema: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLock))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+Schema); err != nil {
		return fmt.Errorf("create schema %s: %w", Schema, err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: Schema, Logger: quietLogger(io.Discard)})
	if err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	for _, t := range []string{createWorkers, createClasses, addDoneJobs, createRefused} {
		if _, err := conn.Exec(ctx, t); err != nil {
			return fmt.Errorf("queue tables: %w", err)
		}
	}
	return createGuard(ctx, conn)
}

// quietLogger writes River's warnings and errors to w as benchlab's own
// lines (lineHandler).
func quietLogger(w io.Writer) *slog.Logger {
	return slog.New(&lineHandler{w: w, mu: &sync.Mutex{}})
}

// lineHandler writes a log record as one line, "benchlab worker: queue:
// message (key=value, ...)", instead of slog's key=value text with times
// and levels, so River's warnings read like the worker's other lines.
type lineHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("benchlab worker: queue: ")
	if r.Level >= slog.LevelError {
		b.WriteString("error: ")
	}
	b.WriteString(r.Message)
	var kv []string
	add := func(a slog.Attr) bool {
		if a.Key != "" {
			kv = append(kv, a.Key+"="+a.Value.String())
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(kv) > 0 {
		b.WriteString(" (" + strings.Join(kv, ", ") + ")")
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineHandler{w: h.w, mu: h.mu, attrs: append(slices.Clip(h.attrs), as...)}
}

// WithGroup keeps the group's attributes flat: the lines are for people.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }

// InsertParts queues the parts of a split experiment at once (all or
// none) and returns their IDs.
func (q *Queue) InsertParts(ctx context.Context, parts []Args, priority bool) ([]int64, error) {
	prio := PriorityNormal
	if priority {
		prio = PriorityHigh
	}
	params := make([]river.InsertManyParams, len(parts))
	for i, a := range parts {
		params[i] = river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{Queue: a.Placement.Queue(), Priority: prio, MaxAttempts: MaxAttempts}}
	}
	res, err := q.client.InsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("queue in %s: insert: %w", q.shown, err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

// Insert queues a job and returns its ID.
func (q *Queue) Insert(ctx context.Context, a Args, priority bool) (int64, error) {
	prio := PriorityNormal
	if priority {
		prio = PriorityHigh
	}
	res, err := q.client.Insert(ctx, a, &river.InsertOpts{Queue: a.Placement.Queue(), Priority: prio, MaxAttempts: MaxAttempts})
	if err != nil {
		return 0, fmt.Errorf("queue in %s: insert: %w", q.shown, err)
	}
	return res.Job.ID, nil
}

// Job is a queued experiment as `benchlab jobs` lists it.
type Job struct {
	ID   int64
	Args Args
	// State is queued, running, completed, failed, retrying (after an
	// error, taken again later) or cancelled.
	State    string
	Priority int
	Attempt  int
	Output   Output
	// Errors are the errors of the attempts, oldest first.
	Errors  []string
	Created time.Time
	// Started is when the latest attempt began; Ended when the job
	// finished (zero while not).
	Started, Ended time.Time
}

// Jobs lists the queue's jobs, newest first, at most limit (0: all).
func (q *Queue) Jobs(ctx context.Context, limit int) ([]Job, error) {
	var out []Job
	params := river.NewJobListParams().Kinds(Kind).OrderBy(river.JobListOrderByID, river.SortOrderDesc).
		States(rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
			rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled)
	for {
		page := 100
		if limit > 0 {
			page = min(page, limit-len(out))
		}
		res, err := q.client.JobList(ctx, params.First(page))
		if err != nil {
			return nil, fmt.Errorf("queue in %s: list jobs: %w", q.shown, err)
		}
		for _, r := range res.Jobs {
			out = append(out, jobOf(r))
		}
		if len(res.Jobs) < page || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		params = params.After(res.LastCursor)
	}
}

// ErrNoJob is returned by Cancel for an ID that is not a job of the queue.
var ErrNoJob = errors.New("no such job in the queue")

// ErrFinished is returned by Cancel for a job that has already ended
// (completed, failed or cancelled): it is left as it is.
var ErrFinished = errors.New("the job has already ended")

// Cancel cancels job id and returns it as it is afterwards. A queued job
// (or one waiting for another attempt) is cancelled at once and never
// runs. A running job stays running for the moment: its worker is told
// (through PostgreSQL's LISTEN/NOTIFY), stops the experiment as Ctrl-C
// stops a run (the results so far stay in the store, the servers are
// stopped, the work dir removed) and marks the job cancelled; the worker
// itself goes on to its next job. A job that has already ended is left as
// it is, with ErrFinished; an unknown ID gives ErrNoJob.
func (q *Queue) Cancel(ctx context.Context, id int64) (Job, error) {
	row, err := q.client.JobGet(ctx, id)
	if errors.Is(err, rivertype.ErrNotFound) || (err == nil && row.Kind != Kind) {
		return Job{}, fmt.Errorf("job %d: %w", id, ErrNoJob)
	}
	if err != nil {
		return Job{}, fmt.Errorf("queue in %s: job %d: %w", q.shown, id, err)
	}
	if row.FinalizedAt != nil {
		return jobOf(row), fmt.Errorf("job %d: %w", id, ErrFinished)
	}
	row, err = q.client.JobCancel(ctx, id)
	if err != nil {
		return Job{}, fmt.Errorf("queue in %s: cancel job %d: %w", q.shown, id, err)
	}
	j := jobOf(row)
	if j.State != "running" && j.State != "cancelled" {
		// It ended on its own in the meantime.
		return j, fmt.Errorf("job %d: %w", id, ErrFinished)
	}
	return j, nil
}

// jobOf reads a River job row.
func jobOf(r *rivertype.JobRow) Job {
	j := Job{ID: r.ID, Priority: r.Priority, Attempt: r.Attempt, Created: r.CreatedAt}
	_ = json.Unmarshal(r.EncodedArgs, &j.Args)
	if o := r.Output(); len(o) > 0 {
		_ = json.Unmarshal(o, &j.Output)
	}
	for _, e := range r.Errors {
		j.Errors = append(j.Errors, e.Error)
	}
	if r.AttemptedAt != nil {
		j.Started = *r.AttemptedAt
	}
	if r.FinalizedAt != nil {
		j.Ended = *r.FinalizedAt
	}
	switch r.State {
	case rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateScheduled:
		j.State = "queued"
	case rivertype.JobStateRunning:
		j.State = "running"
	case rivertype.JobStateCompleted:
		j.State = "completed"
	case rivertype.JobStateRetryable:
		j.State = "retrying"
	case rivertype.JobStateDiscarded:
		j.State = "failed"
	case rivertype.JobStateCancelled:
		j.State = "cancelled"
		if j.Output.Outcome == OutcomeFailed {
			j.State = "failed"
		}
	default:
		j.State = string(r.State)
	}
	return j
}

// failedError marks an experiment that failed: its job is not taken again.
type failedError struct{ err error }

func (e *failedError) Error() string { return e.err.Error() }
func (e *failedError) Unwrap() error { return e.err }

// Failed marks err, returned by Options.Run, as the failure of the
// experiment itself (a spec this machine cannot run, a benchmark that
// failed, a timeout): the job is marked failed and never taken again.
func Failed(err error) error { return &failedError{err} }

// isFailed tells a failure marked Failed.
func isFailed(err error) bool {
	var f *failedError
	return errors.As(err, &f)
}
