package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// River completes a job from whichever attempt reports its end: its
// completer sets the state of any running job, without looking at the
// attempt, and merges the attempt's output into the job's at any state.
// So a worker cut off from the store, whose job was taken again, would on
// reconnecting overwrite the attempt that took over. The guard is a
// trigger of benchlab's own on River's job table: every connection of a
// worker names the worker (the session setting benchlab.worker, set as it
// connects), and an update from a worker that does not hold the job (the
// job not running, or its latest attempt another worker's) that would end
// it or change its output is dropped and recorded in refusedTable.
// River's rescuer, which ends other workers' jobs on purpose, bumps the
// job's rescue count and passes; so do processes that are no worker
// (queue, cancel, jobs).

// workerSetting is the session setting naming the worker of a connection.
const workerSetting = "benchlab.worker"

// refusedTable records the writes the guard dropped.
const refusedTable = Schema + ".refused_write"

const createRefused = `CREATE TABLE IF NOT EXISTS ` + refusedTable + ` (
	id BIGSERIAL PRIMARY KEY, job BIGINT NOT NULL, worker TEXT NOT NULL, at timestamptz NOT NULL DEFAULT now(),
	job_state TEXT NOT NULL, job_attempt INTEGER NOT NULL, held_by TEXT NOT NULL, wanted_state TEXT NOT NULL)`

// guardBody is the trigger function's body; migrate replaces the function
// when the stored body differs.
const guardBody = `
DECLARE
	w text := coalesce(current_setting('` + workerSetting + `', true), '');
	holder text := coalesce(OLD.attempted_by[cardinality(OLD.attempted_by)], '');
BEGIN
	IF w = '' OR (OLD.state = 'running' AND holder = w) THEN
		RETURN NEW;
	END IF;
	IF NEW.metadata -> 'river:rescue_count' IS DISTINCT FROM OLD.metadata -> 'river:rescue_count' THEN
		RETURN NEW;
	END IF;
	IF (OLD.state = 'running' AND NEW.state <> 'running')
			OR NEW.metadata -> 'output' IS DISTINCT FROM OLD.metadata -> 'output' THEN
		INSERT INTO ` + refusedTable + ` (job, worker, job_state, job_attempt, held_by, wanted_state)
			VALUES (OLD.id, w, OLD.state::text, OLD.attempt, holder, NEW.state::text);
		RETURN NULL;
	END IF;
	RETURN NEW;
END`

// createGuard creates or updates the guard's function and trigger, on a
// connection holding the migration lock.
func createGuard(ctx context.Context, conn *pgxpool.Conn) error {
	var body string
	err := conn.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'guard_attempt' AND pronamespace = $1::regnamespace`,
		Schema).Scan(&body)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("guard of attempts: %w", err)
	}
	if body != guardBody {
		if _, err := conn.Exec(ctx, `CREATE OR REPLACE FUNCTION `+Schema+`.guard_attempt() RETURNS trigger
			LANGUAGE plpgsql AS $guard$`+guardBody+`$guard$`); err != nil {
			return fmt.Errorf("guard of attempts: %w", err)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = 'guard_attempt'
		AND tgrelid = $1::regclass`, Schema+".river_job").Scan(&n); err != nil {
		return fmt.Errorf("guard of attempts: %w", err)
	}
	if n == 0 {
		if _, err := conn.Exec(ctx, `CREATE TRIGGER guard_attempt BEFORE UPDATE ON `+Schema+`.river_job
			FOR EACH ROW WHEN (OLD.kind = '`+Kind+`') EXECUTE FUNCTION `+Schema+`.guard_attempt()`); err != nil {
			return fmt.Errorf("guard of attempts: %w", err)
		}
	}
	return nil
}

// workerPool is a pool on pool's database whose connections name worker
// id (workerSetting), for the guard.
func workerPool(ctx context.Context, pool *pgxpool.Pool, id string) (*pgxpool.Pool, error) {
	cfg := pool.Config().Copy()
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `SELECT set_config($1, $2, false)`, workerSetting, id)
		return err
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("worker's connections: %w", err)
	}
	return p, nil
}

// Refused is a write of a worker to a job that the guard dropped: the
// worker no longer held the job.
type Refused struct {
	Job    int64
	Worker string
	// JobState and JobAttempt are the job's state and attempt then, and
	// HeldBy the worker of its latest attempt; Wanted the state the write
	// would have set.
	JobState   string
	JobAttempt int
	HeldBy     string
	Wanted     string
}

// Refused lists the writes the guard dropped for job, oldest first.
func (q *Queue) Refused(ctx context.Context, job int64) ([]Refused, error) {
	rows, err := q.pool.Query(ctx, `SELECT job, worker, job_state, job_attempt, held_by, wanted_state
		FROM `+refusedTable+` WHERE job = $1 ORDER BY id`, job)
	if err != nil {
		return nil, fmt.Errorf("refused writes of job %d: %w", job, err)
	}
	defer rows.Close()
	var out []Refused
	for rows.Next() {
		var r Refused
		if err := rows.Scan(&r.Job, &r.Worker, &r.JobState, &r.JobAttempt, &r.HeldBy, &r.Wanted); err != nil {
			return nil, fmt.Errorf("refused writes of job %d: %w", job, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
