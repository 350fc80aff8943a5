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
	experiment BIGINT PRIMARY KEY, class TEXT NOT NULL, host TEXT NOT NULL)`

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
