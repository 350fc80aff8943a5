package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// HeartbeatEvery is how often a worker records in the queue that it is
// alive.
const HeartbeatEvery = 2 * time.Second

// HeartbeatBound is how long a worker may go unheard before its running
// job is taken for orphaned: River's rescuer, in any live worker, then puts
// the job back for another attempt instead of waiting for the job's own
// timeout. The rescuer looks every 30 seconds (River's interval), so a
// dead worker's job is taken again within about HeartbeatBound plus 30
// seconds plus a second of retry delay.
const HeartbeatBound = 15 * time.Second

// workersTable holds each worker's last heartbeat. Ages are computed by
// the database's clock, which every machine of a lab shares.
const workersTable = Schema + ".worker"

const createWorkers = `CREATE TABLE IF NOT EXISTS ` + workersTable + ` (
	id TEXT PRIMARY KEY, host TEXT NOT NULL, started_at timestamptz NOT NULL,
	beat_at timestamptz NOT NULL, job BIGINT NOT NULL DEFAULT 0, stopped_at timestamptz)`

// WorkerState is a worker as `benchlab jobs` lists it.
type WorkerState struct {
	ID, Host string
	// Job is the job it runs (0: none).
	Job int64
	// Since is how long ago its last heartbeat was, by the database's
	// clock; Started when it started.
	Since   time.Duration
	Started time.Time
	// Stopped: the worker ended normally; Alive: it is not stopped and its
	// last heartbeat is within HeartbeatBound.
	Stopped, Alive bool
}

// beat records that worker id of host is alive and runs job (0: none).
func beat(ctx context.Context, pool *pgxpool.Pool, id, host string, job int64) error {
	_, err := pool.Exec(ctx, `INSERT INTO `+workersTable+` (id, host, started_at, beat_at, job)
		VALUES ($1, $2, now(), now(), $3)
		ON CONFLICT (id) DO UPDATE SET beat_at = now(), job = EXCLUDED.job, stopped_at = NULL`, id, host, job)
	if err != nil {
		return fmt.Errorf("heartbeat of worker %s: %w", id, err)
	}
	return nil
}

// stopped records that worker id ended normally.
func stopped(ctx context.Context, pool *pgxpool.Pool, id string) error {
	_, err := pool.Exec(ctx, `UPDATE `+workersTable+` SET stopped_at = now(), job = 0 WHERE id = $1`, id)
	return err
}

// alive says whether worker id has been heard from within HeartbeatBound.
// known is false for a worker that never recorded a heartbeat (one of an
// older benchlab): its jobs wait for their own timeout, as before.
func alive(ctx context.Context, pool *pgxpool.Pool, id string) (ok, known bool, err error) {
	err = pool.QueryRow(ctx, `SELECT stopped_at IS NULL AND beat_at > now() - $2 * interval '1 second'
		FROM `+workersTable+` WHERE id = $1`, id, HeartbeatBound.Seconds()).Scan(&ok)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("heartbeat of worker %s: %w", id, err)
	}
	return ok, true, nil
}

// Workers lists the workers that heartbeat in the last day, most recently
// heard first.
func (q *Queue) Workers(ctx context.Context) ([]WorkerState, error) {
	rows, err := q.pool.Query(ctx, `SELECT id, host, job, started_at,
			extract(epoch FROM now() - beat_at), stopped_at IS NOT NULL
		FROM `+workersTable+` WHERE beat_at > now() - interval '1 day' ORDER BY beat_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("workers in %s: %w", q.shown, err)
	}
	defer rows.Close()
	var out []WorkerState
	for rows.Next() {
		var w WorkerState
		var since float64
		if err := rows.Scan(&w.ID, &w.Host, &w.Job, &w.Started, &since, &w.Stopped); err != nil {
			return nil, fmt.Errorf("workers in %s: %w", q.shown, err)
		}
		w.Since = time.Duration(since * float64(time.Second))
		w.Alive = !w.Stopped && w.Since < HeartbeatBound
		out = append(out, w)
	}
	return out, rows.Err()
}

// errCutOff is the cause with which a worker stops the experiment of a job
// when no heartbeat of its has reached the store for HeartbeatBound.
var errCutOff = errors.New("cut off from the store: no heartbeat reached it for " + HeartbeatBound.String())

// Fencing: the other workers take a job for orphaned once its worker has
// been unheard for HeartbeatBound (alive), by the store's clock from the
// last heartbeat it recorded. A worker counts the same bound from the
// moment it sent its last heartbeat that succeeded, which is no later than
// the store's record of it, so it stops its experiment (fence) before any
// other worker may take the job. The store's writes that make the results
// count check the attempt anyway (store's job leases, the queue's guard):
// stopping takes a moment, and a clock may run fast.

// heartbeat records the worker's heartbeat every HeartbeatEvery until ctx
// ends; job says which job it runs. A failed heartbeat is reported to log
// and retried at the next tick. When none has succeeded for
// HeartbeatBound since the one sent at last (the first at first), the
// running job's experiment is stopped (fence).
func (w *worker) heartbeat(ctx context.Context, last time.Time, log func(error)) {
	fence := time.AfterFunc(HeartbeatBound-time.Since(last), w.fence)
	defer fence.Stop()
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		job := w.job
		w.mu.Unlock()
		start := time.Now()
		bctx, cancel := context.WithTimeout(ctx, HeartbeatBound/2)
		err := beat(bctx, w.pool, w.opt.ID, w.opt.Host, job)
		cancel()
		switch {
		case err == nil:
			last = start
			fence.Reset(HeartbeatBound - time.Since(start))
		case ctx.Err() == nil:
			log(err)
			if time.Since(last) >= HeartbeatBound {
				w.fence() // a job taken after the timer fired
			}
		}
	}
}

// fence stops the running job's experiment, if any, as the worker has been
// cut off from the store for HeartbeatBound, and says so.
func (w *worker) fence() {
	w.mu.Lock()
	stop, job := w.stopJob, w.job
	w.stopJob = nil
	w.mu.Unlock()
	if stop == nil {
		return
	}
	fmt.Fprintf(w.opt.Out, "benchlab worker: job %d: no heartbeat has reached the store for %s, so other workers may take the job: "+
		"stopping its experiment (what it measured is kept: in the store, or in a journal that the next benchlab to open the store stores)\n",
		job, HeartbeatBound)
	stop(errCutOff)
}
