package store

import (
	"context"
	"fmt"
)

// StepRate is what one earlier completed result of a step wrote: Rows in
// Seconds, with the spec of its experiment (which names the suite).
type StepRate struct {
	ExperimentID int64
	Spec         string
	Rows         int64
	Seconds      float64
}

// StepRates returns, newest first, up to limit completed results of the
// step named test on engine that wrote rows (loads, for the plan's
// estimate of their time).
func (s *Store) StepRates(ctx context.Context, engine, test string, limit int) ([]StepRate, error) {
	rows, err := s.q().QueryContext(ctx, `SELECT e.id, e.spec, res.rows, res.seconds
		FROM results res JOIN runs r ON res.run_id = r.id JOIN experiments e ON r.experiment_id = e.id
		WHERE r.engine = ? AND res.test = ? AND res.status = ? AND res.rows > 0 AND res.seconds > 0
		ORDER BY res.id DESC LIMIT ?`, engine, test, StatusOK, limit)
	if err != nil {
		return nil, fmt.Errorf("read earlier %s results of %s: %w", test, engine, err)
	}
	defer rows.Close()
	var out []StepRate
	for rows.Next() {
		var r StepRate
		if err := rows.Scan(&r.ExperimentID, &r.Spec, &r.Rows, &r.Seconds); err != nil {
			return nil, fmt.Errorf("read earlier %s results of %s: %w", test, engine, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
