package fleet

import (
	"context"
	"fmt"
)

// classesTable pins each split experiment to the class of machine its
// first part started on, so that parts judged against each other ran on
// alike machines.
const classesTable = Schema + ".experiment_class"

const createClasses = `CREATE TABLE IF NOT EXISTS ` + classesTable + ` (
	experiment BIGINT PRIMARY KEY, class TEXT NOT NULL, host TEXT NOT NULL,
	parts_done INTEGER NOT NULL DEFAULT 0)`

// claimClass records class as the machine class of experiment exp when no
// part of it has started yet, and returns the class it has (this one, or
// the one an earlier part set) and the host that set it.
func (q *Queue) claimClass(ctx context.Context, exp int64, class, host string) (string, string, error) {
	var got, by string
	err := q.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO `+classesTable+` (experiment, class, host) VALUES ($1, $2, $3)
			ON CONFLICT (experiment) DO NOTHING RETURNING class, host)
		SELECT class, host FROM ins UNION ALL SELECT class, host FROM `+classesTable+` WHERE experiment = $1 LIMIT 1`,
		exp, class, host).Scan(&got, &by)
	if err != nil {
		return "", "", fmt.Errorf("machine class of experiment %d: %w", exp, err)
	}
	return got, by, nil
}

// addDoneJobs records which jobs a split experiment's parts_done counts,
// so that a part run again (its attempt taken over) counts once.
const addDoneJobs = `ALTER TABLE ` + classesTable + ` ADD COLUMN IF NOT EXISTS done_jobs BIGINT[] NOT NULL DEFAULT '{}'`

// PartDone counts job, a part of split experiment exp, as done and returns
// how many of its parts are done, this one included. The count is one
// atomic update, so of parts ending at once exactly one sees the last
// count; a job counted already (a part run again by a later attempt, its
// earlier attempt's runs superseded) is not counted twice, and sees the
// count as it is.
func (q *Queue) PartDone(ctx context.Context, exp, job int64) (int, error) {
	var n int
	err := q.pool.QueryRow(ctx, `UPDATE `+classesTable+` SET
			parts_done = parts_done + CASE WHEN $2 = ANY(done_jobs) THEN 0 ELSE 1 END,
			done_jobs = CASE WHEN $2 = ANY(done_jobs) THEN done_jobs ELSE array_append(done_jobs, $2) END
		WHERE experiment = $1 RETURNING parts_done`, exp, job).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("parts of experiment %d done: %w", exp, err)
	}
	return n, nil
}
