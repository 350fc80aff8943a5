package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A queued job may run more than once at a time: a worker cut off from
// the store runs on for a while after its job was taken again. The store
// keeps one result set per job with a lease per job (table job_leases):
// each attempt takes it as it starts (TakeLease), which marks the runs of
// every earlier attempt superseded, and a run is created and finished only
// under a lock on the lease and only while its attempt holds it; the run
// of an attempt that lost it is stored superseded. So of two attempts
// whose writes cross, the later one's runs count and the earlier one's,
// whenever they arrive (journal replays included), do not. docs/lab.md
// says how the queue itself refuses a superseded attempt's late end.

// ErrSuperseded is returned for a write of a run whose attempt no longer
// holds its job's lease: the run is stored superseded.
var ErrSuperseded = errors.New("superseded: a later attempt of its job holds the job's lease")

// TakeLease makes lease the lease of job, held by holder (the worker and
// attempt, for messages), and marks every run of the job stored so far
// superseded, with why as its error. It returns how many runs it marked.
func (s *Store) TakeLease(ctx context.Context, job int64, lease, holder, why string) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("lease of job %d: %w", job, err)
	}
	defer tx.Rollback()
	b := s.tx(tx)
	// The upsert waits for the runs being written under the old lease
	// (runLeaseHeld's shared lock); the update below then sees them.
	if _, err := b.ExecContext(ctx, `INSERT INTO job_leases (job, lease, holder) VALUES (?, ?, ?)
		ON CONFLICT (job) DO UPDATE SET lease = excluded.lease, holder = excluded.holder`, job, lease, holder); err != nil {
		return 0, fmt.Errorf("lease of job %d: %w", job, err)
	}
	res, err := b.ExecContext(ctx, `UPDATE runs SET status = ?, error = ? WHERE job = ? AND lease <> ? AND status <> ?`,
		StatusSuperseded, why, job, lease, StatusSuperseded)
	if err != nil {
		return 0, fmt.Errorf("lease of job %d: supersede earlier runs: %w", job, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("lease of job %d: %w", job, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("lease of job %d: %w", job, err)
	}
	return int(n), nil
}

// leaseHeld says whether lease is job's lease, taking a shared lock on the
// lease's row (PostgreSQL) until b's transaction ends, so that TakeLease
// waits for the write it guards. A job without a lease row has none
// taken yet: its runs are held.
func leaseHeld(ctx context.Context, b bound, job int64, lease string) (bool, error) {
	q := `SELECT lease FROM job_leases WHERE job = ?`
	if b.pg {
		q += ` FOR SHARE`
	}
	var cur string
	err := b.QueryRowContext(ctx, q, job).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("lease of job %d: %w", job, err)
	}
	return cur == lease, nil
}

// runLeaseHeld is leaseHeld for the stored run id (true for a run of no
// job).
func runLeaseHeld(ctx context.Context, b bound, id int64) (bool, error) {
	var job int64
	var lease string
	err := b.QueryRowContext(ctx, `SELECT job, lease FROM runs WHERE id = ?`, id).Scan(&job, &lease)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && job == 0) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return leaseHeld(ctx, b, job, lease)
}

// createLeasedRun is CreateRun for a run of a queued job: in one
// transaction with the lease checked, superseded when lost.
func (s *Store) createLeasedRun(ctx context.Context, r *Run) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	defer tx.Rollback()
	b := s.tx(tx)
	held, err := leaseHeld(ctx, b, r.Job, r.Lease)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	if !held {
		r.Status, r.Error = StatusSuperseded, ErrSuperseded.Error()
	}
	if err := createRun(ctx, b, r); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	if !held {
		return fmt.Errorf("store run %d: %w", r.ID, ErrSuperseded)
	}
	return nil
}
