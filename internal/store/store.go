// Package store keeps every experiment, run, step result and 1-second
// interval in a results database: a SQLite file by default.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3" for database/sql
)

// DefaultPath is the results database used when no --store flag or
// BENCHLAB_STORE variable names another.
const DefaultPath = "benchlab.db"

// Store is an open results database.
type Store struct {
	db   *sql.DB
	path string // the file, or the PostgreSQL URL without its password
	pg   bool
	// id names the store in its journal: the file's absolute path, or
	// path for PostgreSQL.
	id string
	// journal: SaveResult and FinishRun keep what the store refuses
	// (Journal); timeout bounds each write of a run.
	journal bool
	timeout time.Duration
	// replayed are the journals Open stored.
	replayed []Replayed
}

// q runs statements on the database.
func (s *Store) q() bound { return bound{q: s.db, pg: s.pg} }

// tx runs statements in tx.
func (s *Store) tx(tx *sql.Tx) bound { return bound{q: tx, pg: s.pg} }

// schema is applied in order; schemaVersion records how far a file has got.
var schema = []string{
	`CREATE TABLE experiments (
		id INTEGER PRIMARY KEY, name TEXT NOT NULL, base TEXT NOT NULL, preset TEXT NOT NULL,
		spec TEXT NOT NULL, targets TEXT NOT NULL, created TEXT NOT NULL)`,
	`CREATE TABLE runs (
		id INTEGER PRIMARY KEY, experiment_id INTEGER NOT NULL REFERENCES experiments(id),
		target TEXT NOT NULL, engine TEXT NOT NULL, version TEXT NOT NULL, repeat INTEGER NOT NULL,
		status TEXT NOT NULL, error TEXT NOT NULL, started TEXT NOT NULL, ended TEXT NOT NULL,
		manifest TEXT NOT NULL)`,
	`CREATE TABLE results (
		id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL,
		test TEXT NOT NULL, family TEXT NOT NULL, grp TEXT NOT NULL, threads INTEGER NOT NULL,
		warm INTEGER NOT NULL, action INTEGER NOT NULL, metric TEXT NOT NULL, rows_per_op INTEGER NOT NULL,
		status TEXT NOT NULL, started TEXT NOT NULL, seconds REAL NOT NULL,
		events INTEGER NOT NULL, statements INTEGER NOT NULL, errors INTEGER NOT NULL, rows INTEGER NOT NULL,
		lat_mean_ns INTEGER NOT NULL, lat_p50_ns INTEGER NOT NULL, lat_p95_ns INTEGER NOT NULL,
		lat_p99_ns INTEGER NOT NULL, lat_p999_ns INTEGER NOT NULL, lat_max_ns INTEGER NOT NULL,
		histogram BLOB, error_samples TEXT NOT NULL)`,
	`CREATE TABLE intervals (
		result_id INTEGER NOT NULL REFERENCES results(id), sec INTEGER NOT NULL, seconds REAL NOT NULL,
		events INTEGER NOT NULL, statements INTEGER NOT NULL, errors INTEGER NOT NULL, rows INTEGER NOT NULL,
		p95_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL, PRIMARY KEY (result_id, sec))`,
	`CREATE INDEX runs_experiment ON runs(experiment_id)`,
	`CREATE INDEX results_run ON results(run_id)`,
	// Per-operation efficiency (CPU, IO and context switches per operation,
	// docs/measurement.md). NULL means not measured,
	// -1 not readable; a result whose eff_seconds is NULL has no efficiency.
	`ALTER TABLE results ADD COLUMN eff_seconds REAL`,
	`ALTER TABLE results ADD COLUMN server_cpu_s REAL`,
	`ALTER TABLE results ADD COLUMN client_cpu_s REAL`,
	`ALTER TABLE results ADD COLUMN server_read_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN server_write_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN server_read_calls INTEGER`,
	`ALTER TABLE results ADD COLUMN server_write_calls INTEGER`,
	`ALTER TABLE results ADD COLUMN client_read_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN client_write_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN client_read_calls INTEGER`,
	`ALTER TABLE results ADD COLUMN client_write_calls INTEGER`,
	`ALTER TABLE results ADD COLUMN device TEXT`,
	`ALTER TABLE results ADD COLUMN dev_reads INTEGER`,
	`ALTER TABLE results ADD COLUMN dev_writes INTEGER`,
	`ALTER TABLE results ADD COLUMN dev_read_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN dev_write_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN server_cs INTEGER`,
	`ALTER TABLE results ADD COLUMN client_cs INTEGER`,
	`ALTER TABLE results ADD COLUMN server_peak_rss_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN client_peak_rss_bytes INTEGER`,
	`ALTER TABLE results ADD COLUMN machine_cpu_s REAL`,
	`ALTER TABLE results ADD COLUMN machine_busy_s REAL`,
	`ALTER TABLE results ADD COLUMN machine_steal_s REAL`,
	`ALTER TABLE results ADD COLUMN db_bytes INTEGER`,
	`ALTER TABLE intervals ADD COLUMN server_cpu_s REAL`,
	`ALTER TABLE intervals ADD COLUMN client_cpu_s REAL`,
	`ALTER TABLE intervals ADD COLUMN steal_pct REAL`,
	`ALTER TABLE intervals ADD COLUMN foreign_pct REAL`,
	// Steps with several roles (roles.go).
	`ALTER TABLE results ADD COLUMN role TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE results ADD COLUMN primary_role INTEGER NOT NULL DEFAULT 1`,
	`ALTER TABLE results ADD COLUMN target_rate REAL NOT NULL DEFAULT 0`,
	`ALTER TABLE results ADD COLUMN svc_p50_ns INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE results ADD COLUMN svc_p95_ns INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE results ADD COLUMN svc_p99_ns INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE results ADD COLUMN svc_max_ns INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE results ADD COLUMN svc_mean_ns INTEGER NOT NULL DEFAULT 0`,
	// Named facts of a step (roles.go).
	`ALTER TABLE results ADD COLUMN facts TEXT NOT NULL DEFAULT ''`,
	// The host's noise model (noise.go): run-to-run variance of each test.
	`CREATE TABLE noise (
		experiment_id INTEGER NOT NULL REFERENCES experiments(id), host TEXT NOT NULL, engine TEXT NOT NULL,
		test TEXT NOT NULL, threads INTEGER NOT NULL, config TEXT NOT NULL,
		runs INTEGER NOT NULL, df INTEGER NOT NULL, log_var REAL NOT NULL,
		PRIMARY KEY (experiment_id, host, engine, test, threads, config))`,
	`CREATE INDEX noise_key ON noise(host, engine, test, threads)`,
	// Experiments the noise model has learned (with or without entries).
	`CREATE TABLE noise_learned (experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id))`,
	// CPU profiles of measured steps (run --profile; profiles.go): folded
	// stacks, gzip-compressed, or why none were taken.
	`CREATE TABLE profiles (
		result_id INTEGER PRIMARY KEY REFERENCES results(id), hz INTEGER NOT NULL, samples INTEGER NOT NULL,
		note TEXT NOT NULL, folded_gz BLOB)`,
	// Each second's CPU speed (the speed probes' mean rate in it).
	`ALTER TABLE intervals ADD COLUMN cpu_speed REAL`,
	// Journal entries stored by a replay (journal.go), so none is stored
	// twice.
	`CREATE TABLE pending_applied (key TEXT PRIMARY KEY, at TEXT NOT NULL)`,
	// Off-CPU stacks of a profiled step (Profile.OffCPU), gzip-compressed.
	`ALTER TABLE profiles ADD COLUMN offcpu_gz BLOB`,
	// The engine's counters and gauges per second of a measured step
	// (internals.go).
	`CREATE TABLE engine_series (
		result_id INTEGER NOT NULL REFERENCES results(id), name TEXT NOT NULL, gauge INTEGER NOT NULL,
		sec INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (result_id, name, sec))`,
	// Each result's headline as its producer computed it (headline.go),
	// so that reading it needs no suite's metric; NULL in older rows.
	`ALTER TABLE results ADD COLUMN headline REAL`,
	`ALTER TABLE results ADD COLUMN unit TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE results ADD COLUMN direction INTEGER NOT NULL DEFAULT 0`,
	// The queued job a run belongs to and the lease of the attempt that
	// made it, and each job's lease: the attempt whose runs count
	// (lease.go).
	`ALTER TABLE runs ADD COLUMN job INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE runs ADD COLUMN lease TEXT NOT NULL DEFAULT ''`,
	`CREATE INDEX runs_job ON runs(job)`,
	`CREATE TABLE job_leases (job INTEGER PRIMARY KEY, lease TEXT NOT NULL, holder TEXT NOT NULL)`,
}

// Open opens or creates the results database at path (a SQLite file, or a
// postgres:// URL for a database shared by a lab) and brings its schema up
// to date.
//
// Results that a run could not store (Journal) are stored first, and their
// journal removed (Replayed).
func Open(path string) (*Store, error) {
	var s *Store
	var err error
	if IsPostgres(path) {
		s, err = openPostgres(path)
	} else {
		s, err = openSQLite(path)
	}
	if err != nil {
		return nil, err
	}
	if err := s.replay(context.Background()); err != nil {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", s.path, err)
	}
	return s, nil
}

// Path returns the file the store lives in, or its PostgreSQL URL with the
// password hidden.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

const timeFormat = time.RFC3339Nano

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// CreateExperiment stores e and sets its ID.
func (s *Store) CreateExperiment(ctx context.Context, e *Experiment) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if e.Created.IsZero() {
		e.Created = time.Now()
	}
	err := s.q().QueryRowContext(ctx, `INSERT INTO experiments (name, base, preset, spec, targets, created) VALUES (?,?,?,?,?,?) RETURNING id`,
		e.Name, e.Base, e.Preset, e.Spec, strings.Join(e.Targets, "\n"), fmtTime(e.Created)).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("store experiment: %w", err)
	}
	return nil
}

// CreateRun stores r (status running unless set) and sets its ID. A run of
// a queued job (r.Job) whose attempt no longer holds the job's lease is
// stored superseded, and ErrSuperseded returned (lease.go).
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if r.Status == "" {
		r.Status = StatusRunning
	}
	if r.Job != 0 {
		return s.createLeasedRun(ctx, r)
	}
	return createRun(ctx, s.q(), r)
}

// createRun is CreateRun on b.
func createRun(ctx context.Context, b bound, r *Run) error {
	err := b.QueryRowContext(ctx, `INSERT INTO runs (experiment_id, target, engine, version, repeat, status, error, started, ended, manifest, job, lease)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`, r.ExperimentID, r.Target, r.Engine, r.Version, r.Repeat, r.Status, r.Error,
		fmtTime(r.Started), fmtTime(r.Ended), r.Manifest, r.Job, r.Lease).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	return nil
}

// FinishRun records the final status, version, manifest and end time of r.
// When the store fails and Journal was called, r is kept in the journal
// (PendingError). A run of a queued job whose attempt no longer holds the
// job's lease stays superseded (r.Status is set so), and ErrSuperseded is
// returned (lease.go).
func (s *Store) FinishRun(ctx context.Context, r *Run) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	var err error
	if r.Job == 0 {
		err = finishRun(ctx, s.q(), r)
	} else {
		err = s.finishRunTx(ctx, r)
	}
	if err != nil && s.journal && !errors.Is(err, ErrSuperseded) {
		return s.keep(err, pendingEntry{Run: r})
	}
	return err
}

// finishRunTx is finishRun in a transaction of its own.
func (s *Store) finishRunTx(ctx context.Context, r *Run) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store run %d: %w", r.ID, err)
	}
	defer tx.Rollback()
	ferr := finishRun(ctx, s.tx(tx), r)
	if ferr != nil && !errors.Is(ferr, ErrSuperseded) {
		return ferr
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store run %d: %w", r.ID, err)
	}
	return ferr
}

// finishRun is FinishRun on b: a run of a queued job (b then being a
// transaction) is checked against the job's lease under a lock on it
// first, and a run already superseded keeps that status and its error.
func finishRun(ctx context.Context, b bound, r *Run) error {
	held := true
	if r.Job != 0 {
		var err error
		if held, err = runLeaseHeld(ctx, b, r.ID); err != nil {
			return fmt.Errorf("store run %d: %w", r.ID, err)
		}
	}
	status := r.Status
	if !held {
		status = StatusSuperseded
	}
	_, err := b.ExecContext(ctx, `UPDATE runs SET
			status = CASE WHEN status = ? THEN status ELSE ? END,
			error = CASE WHEN status = ? THEN error ELSE ? END,
			version=?, ended=?, manifest=? WHERE id=?`,
		StatusSuperseded, status, StatusSuperseded, r.Error, r.Version, fmtTime(r.Ended), r.Manifest, r.ID)
	if err != nil {
		return fmt.Errorf("store run %d: %w", r.ID, err)
	}
	if !held {
		r.Status = StatusSuperseded
		return fmt.Errorf("store run %d: %w", r.ID, ErrSuperseded)
	}
	return nil
}

// SaveResult stores one step result with its intervals, in one transaction.
// A result begun with BeginResult (r.ID set) is updated in place, and only
// the intervals not already appended are added. When the store fails and
// Journal was called, r is kept in the journal (PendingError).
func (s *Store) SaveResult(ctx context.Context, r *Result) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	err := s.saveResult(ctx, r)
	if err != nil && s.journal {
		return s.keep(err, pendingEntry{Result: r})
	}
	return err
}

// saveResult is SaveResult without the journal.
func (s *Store) saveResult(ctx context.Context, r *Result) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store result %s: %w", r.Test, err)
	}
	defer tx.Rollback()
	id := r.ID
	if err := writeResult(ctx, s.tx(tx), r); err != nil {
		r.ID = id // a row inserted by the failed transaction is gone
		return err
	}
	if err := tx.Commit(); err != nil {
		r.ID = id
		return fmt.Errorf("store result %s: %w", r.Test, err)
	}
	return nil
}

// writeResult writes SaveResult's statements on b. A begun result whose row
// is gone is inserted anew.
func writeResult(ctx context.Context, b bound, r *Result) error {
	samples, _ := json.Marshal(r.ErrorSamples)
	l := r.Latency
	vals := []any{r.RunID, r.Seq, r.Test, r.Family, r.Group, r.Threads, r.Warm, r.Action, r.Metric, r.RowsPerOp,
		r.Status, fmtTime(r.Started), r.Seconds, r.Events, r.Statements, r.Errors, r.Rows,
		int64(l.Mean), int64(l.P50), int64(l.P95), int64(l.P99), int64(l.P999), int64(l.Max), r.Histogram, string(samples)}
	updated := int64(0)
	if r.ID != 0 {
		res, err := b.ExecContext(ctx, `UPDATE results SET (`+resultColumns+`)
		= (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?`, append(vals, r.ID)...)
		if err != nil {
			return fmt.Errorf("store result %s: %w", r.Test, err)
		}
		if updated, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("store result %s: %w", r.Test, err)
		}
	}
	if updated == 0 {
		if err := b.QueryRowContext(ctx, `INSERT INTO results (`+resultColumns+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`, vals...).Scan(&r.ID); err != nil {
			return fmt.Errorf("store result %s: %w", r.Test, err)
		}
	}
	if err := saveEfficiency(ctx, b, r); err != nil {
		return err
	}
	if err := saveRole(ctx, b, r); err != nil {
		return err
	}
	if err := saveHeadline(ctx, b, r); err != nil {
		return err
	}
	if err := saveProfile(ctx, b, r); err != nil {
		return err
	}
	if err := saveInternals(ctx, b, r); err != nil {
		return err
	}
	return insertIntervals(ctx, b, r.ID, r.Test, r.Intervals)
}

// resultColumns are the results columns SaveResult and BeginResult write.
const resultColumns = `run_id, seq, test, family, grp, threads, warm, action, metric, rows_per_op,
		status, started, seconds, events, statements, errors, rows,
		lat_mean_ns, lat_p50_ns, lat_p95_ns, lat_p99_ns, lat_p999_ns, lat_max_ns, histogram, error_samples`

// BeginResult stores a step's result before the step has run, with status
// running, and sets r.ID, so that its 1-second series can be appended while
// the step goes on (AppendIntervals): a run killed in its third hour keeps
// the first two. SaveResult later completes the same row.
func (s *Store) BeginResult(ctx context.Context, r *Result) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if r.ID != 0 {
		return fmt.Errorf("store result %s: already begun (id %d)", r.Test, r.ID)
	}
	begun := *r
	begun.Status, begun.Intervals = StatusRunning, nil
	begun.Eff, begun.Histogram, begun.Internals = nil, nil, nil
	if err := s.saveResult(ctx, &begun); err != nil {
		return err
	}
	r.ID = begun.ID
	return nil
}

// AppendIntervals adds 1-second intervals to a begun result, in one
// transaction; intervals already stored (by second) are left as they are.
func (s *Store) AppendIntervals(ctx context.Context, resultID int64, test string, ivs []Interval) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if len(ivs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store intervals of %s: %w", test, err)
	}
	defer tx.Rollback()
	if err := insertIntervals(ctx, s.tx(tx), resultID, test, ivs); err != nil {
		return err
	}
	return tx.Commit()
}

// UpdateProgress stores a running result's measured part so far (r.ID, set
// by BeginResult): its seconds, events, latency percentiles and histogram,
// leaving its status running, so that a run killed midway keeps the latency
// of what it measured.
func (s *Store) UpdateProgress(ctx context.Context, r *Result) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	l := r.Latency
	_, err := s.q().ExecContext(ctx, `UPDATE results SET seconds=?, events=?, lat_mean_ns=?, lat_p50_ns=?, lat_p95_ns=?,
		lat_p99_ns=?, lat_p999_ns=?, lat_max_ns=?, histogram=? WHERE id=?`,
		r.Seconds, r.Events, int64(l.Mean), int64(l.P50), int64(l.P95), int64(l.P99), int64(l.P999), int64(l.Max), r.Histogram, r.ID)
	if err != nil {
		return fmt.Errorf("store progress of %s: %w", r.Test, err)
	}
	return nil
}

// insertIntervals stores intervals of result id, skipping seconds it has.
func insertIntervals(ctx context.Context, b bound, id int64, test string, ivs []Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	ins, err := b.PrepareContext(ctx, `INSERT INTO intervals (result_id, sec, seconds, events, statements, errors, rows, p95_ns, max_ns,
		server_cpu_s, client_cpu_s, steal_pct, foreign_pct, cpu_speed)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (result_id, sec) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("store intervals of %s: %w", test, err)
	}
	defer ins.Close()
	for _, iv := range ivs {
		load := []any{nil, nil, nil, nil, nil}
		if l := iv.Load; l != nil {
			var speed any
			if l.CPUSpeed > 0 {
				speed = l.CPUSpeed
			}
			load = []any{nullF(l.ServerCPU), nullF(l.ClientCPU), nullF(l.StealPct), nullF(l.ForeignPct), speed}
		}
		if _, err := ins.ExecContext(ctx, append([]any{id, iv.Sec, iv.Seconds, iv.Events, iv.Statements, iv.Errors, iv.Rows,
			int64(iv.P95), int64(iv.Max)}, load...)...); err != nil {
			return fmt.Errorf("store interval %d of %s: %w", iv.Sec, test, err)
		}
	}
	return nil
}
