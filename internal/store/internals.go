package store

import (
	"context"
	"fmt"
)

// The engine's internals per second (engine.InternalsReader, read by the
// runner once a second during a measured step) are kept in a table of
// their own, one row per series and second, beside the 1-second intervals:
// any engine's names fit without a schema change.

// EngineSeries is one engine counter or gauge over a measured step's
// seconds: a counter (Gauge false) as its rate per second, a gauge as its
// value at the end of each second. Name is the engine's own
// ("status.Innodb_checkpoint_age", "pg_stat_wal.wal_bytes").
type EngineSeries struct {
	Name   string
	Gauge  bool
	Points []EnginePoint
}

// EnginePoint is one second of an EngineSeries; Sec counts as
// Interval.Sec does, from the end of the warm-up.
type EnginePoint struct {
	Sec   int
	Value float64
}

// Unit is the series' unit as the report shows it: "/s" for a counter's
// rate, "" for a gauge.
func (e EngineSeries) Unit() string {
	if e.Gauge {
		return ""
	}
	return "/s"
}

// saveInternals writes r.Internals for r's row, replacing any stored
// before.
func saveInternals(ctx context.Context, b bound, r *Result) error {
	if len(r.Internals) == 0 {
		return nil
	}
	if _, err := b.ExecContext(ctx, `DELETE FROM engine_series WHERE result_id = ?`, r.ID); err != nil {
		return fmt.Errorf("store engine series of %s: %w", r.Test, err)
	}
	ins, err := b.PrepareContext(ctx, `INSERT INTO engine_series (result_id, name, gauge, sec, value) VALUES (?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("store engine series of %s: %w", r.Test, err)
	}
	defer ins.Close()
	return insertSeries(ctx, ins, r.ID, r.Test, r.Internals)
}

// AppendInternals adds the points of a begun result's engine series that
// it lacks (by name and second), in one transaction, so that a run killed
// midway keeps them as it keeps its intervals (AppendIntervals); the
// result's SaveResult later writes them all again.
func (s *Store) AppendInternals(ctx context.Context, resultID int64, test string, series []EngineSeries) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if len(series) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store engine series of %s: %w", test, err)
	}
	defer tx.Rollback()
	ins, err := s.tx(tx).PrepareContext(ctx, `INSERT INTO engine_series (result_id, name, gauge, sec, value) VALUES (?,?,?,?,?)
		ON CONFLICT (result_id, name, sec) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("store engine series of %s: %w", test, err)
	}
	defer ins.Close()
	if err := insertSeries(ctx, ins, resultID, test, series); err != nil {
		return err
	}
	return tx.Commit()
}

// insertSeries runs ins for every point of series.
func insertSeries(ctx context.Context, ins prepared, resultID int64, test string, series []EngineSeries) error {
	for _, s := range series {
		gauge := 0
		if s.Gauge {
			gauge = 1
		}
		for _, p := range s.Points {
			if _, err := ins.ExecContext(ctx, resultID, s.Name, gauge, p.Sec, p.Value); err != nil {
				return fmt.Errorf("store engine series %s of %s: %w", s.Name, test, err)
			}
		}
	}
	return nil
}

// loadInternals reads r's engine series, by name, each by second.
func (s *Store) loadInternals(ctx context.Context, r *Result) error {
	rows, err := s.q().QueryContext(ctx, `SELECT name, gauge, sec, value FROM engine_series
		WHERE result_id = ? ORDER BY name, sec`, r.ID)
	if err != nil {
		return fmt.Errorf("read engine series of result %d: %w", r.ID, err)
	}
	defer rows.Close()
	r.Internals = nil
	for rows.Next() {
		var name string
		var gauge int
		var p EnginePoint
		if err := rows.Scan(&name, &gauge, &p.Sec, &p.Value); err != nil {
			return fmt.Errorf("read engine series of result %d: %w", r.ID, err)
		}
		if n := len(r.Internals); n == 0 || r.Internals[n-1].Name != name {
			r.Internals = append(r.Internals, EngineSeries{Name: name, Gauge: gauge == 1})
		}
		last := &r.Internals[len(r.Internals)-1]
		last.Points = append(last.Points, p)
	}
	return rows.Err()
}
