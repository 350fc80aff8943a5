package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// This file reads the store back: experiments, runs, results and their
// 1-second intervals.

// ErrNotFound is returned when an experiment or run does not exist.
var ErrNotFound = errors.New("not found")

// Experiments lists experiments, newest first.
func (s *Store) Experiments(ctx context.Context) ([]Experiment, error) {
	return s.experiments(ctx, `SELECT id, name, base, preset, spec, targets, created FROM experiments ORDER BY id DESC`)
}

// Experiment returns one experiment by ID; id 0 means the most recent.
func (s *Store) Experiment(ctx context.Context, id int64) (Experiment, error) {
	q := `SELECT id, name, base, preset, spec, targets, created FROM experiments WHERE id = ?`
	args := []any{id}
	if id == 0 {
		q = `SELECT id, name, base, preset, spec, targets, created FROM experiments ORDER BY id DESC LIMIT 1`
		args = nil
	}
	es, err := s.experiments(ctx, q, args...)
	if err != nil {
		return Experiment{}, err
	}
	if len(es) == 0 {
		if id == 0 {
			return Experiment{}, fmt.Errorf("no experiment stored in %s: %w", s.path, ErrNotFound)
		}
		return Experiment{}, fmt.Errorf("experiment %d in %s: %w", id, s.path, ErrNotFound)
	}
	return es[0], nil
}

func (s *Store) experiments(ctx context.Context, q string, args ...any) ([]Experiment, error) {
	rows, err := s.q().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read experiments: %w", err)
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		var e Experiment
		var targets, created string
		if err := rows.Scan(&e.ID, &e.Name, &e.Base, &e.Preset, &e.Spec, &targets, &created); err != nil {
			return nil, err
		}
		e.Targets = strings.Split(targets, "\n")
		e.Created = parseTime(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// runColumns are the runs columns scanRuns reads.
const runColumns = `id, experiment_id, target, engine, version, repeat, status, error, started, ended, manifest, job, lease`

// Runs lists the runs of an experiment (all experiments when 0), oldest first.
func (s *Store) Runs(ctx context.Context, experimentID int64) ([]Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs`
	var args []any
	if experimentID != 0 {
		q += ` WHERE experiment_id = ?`
		args = append(args, experimentID)
	}
	rows, err := s.q().QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return scanRuns(rows)
}

// scanRuns reads rows of runColumns and closes them.
func scanRuns(rows *sql.Rows) ([]Run, error) {
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started, ended string
		if err := rows.Scan(&r.ID, &r.ExperimentID, &r.Target, &r.Engine, &r.Version, &r.Repeat, &r.Status, &r.Error,
			&started, &ended, &r.Manifest, &r.Job, &r.Lease); err != nil {
			return nil, fmt.Errorf("read runs: %w", err)
		}
		r.Started, r.Ended = parseTime(started), parseTime(ended)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return out, nil
}

// RecentRuns returns up to limit runs, newest first, after skipping the
// newest offset, and how many runs the store holds; limit 0 means all.
func (s *Store) RecentRuns(ctx context.Context, limit, offset int) ([]Run, int, error) {
	var total int
	if err := s.q().QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count runs: %w", err)
	}
	q := `SELECT ` + runColumns + ` FROM runs ORDER BY id DESC`
	args := []any{}
	if limit > 0 {
		q += ` LIMIT ? OFFSET ?`
		args = append(args, limit, offset)
	} else if offset > 0 {
		q += ` OFFSET ?`
		args = append(args, offset)
		if !s.pg {
			q = strings.Replace(q, " OFFSET ?", " LIMIT -1 OFFSET ?", 1)
		}
	}
	rows, err := s.q().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("read runs: %w", err)
	}
	out, err := scanRuns(rows)
	return out, total, err
}

// Results returns the step results of a run in sequence order, with their
// intervals and engine series when withIntervals is set.
func (s *Store) Results(ctx context.Context, runID int64, withIntervals bool) ([]Result, error) {
	out, err := s.results(ctx, true, `run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("read results of run %d: %w", runID, err)
	}
	for i := range out {
		if err := s.loadProfile(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	if withIntervals {
		for i := range out {
			if out[i].Intervals, err = s.intervals(ctx, out[i].ID); err != nil {
				return nil, err
			}
			if err := s.loadInternals(ctx, &out[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// headColumns are the results columns of what a step measured: its
// identity, counts and latency. results reads them, then the role, and
// for a full result the histogram, error samples, facts and efficiency.
const headColumns = `id, run_id, seq, test, family, grp, threads, warm, action, metric, rows_per_op,
	status, started, seconds, events, statements, errors, rows,
	lat_mean_ns, lat_p50_ns, lat_p95_ns, lat_p99_ns, lat_p999_ns, lat_max_ns`

// results reads the results rows matching where (a condition with '?'
// placeholders for args), without intervals, ordered by run, sequence and
// threads: the results of one run are in the order Results gives them.
// Unless full, only the head columns and the role are read: the
// histogram, error samples, facts and efficiency stay empty. The
// histogram is most of a row's bytes (2.7 kB of a sysbench step's), and
// the columns after it cost reading past it.
func (s *Store) results(ctx context.Context, full bool, where string, args ...any) ([]Result, error) {
	cols := headColumns + `, ` + roleColumns + `, ` + headlineColumns
	if full {
		cols = headColumns + `, histogram, error_samples, ` + roleColumns + `, ` + headlineColumns + `, facts, ` + effColumns
	}
	rows, err := s.q().QueryContext(ctx, `SELECT `+cols+` FROM results WHERE `+where+
		` ORDER BY run_id, seq, threads`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		var r Result
		var started, samples, facts string
		var mean, p50, p95, p99, p999, mx int64
		var role roleRow
		var eff effRow
		dest := []any{&r.ID, &r.RunID, &r.Seq, &r.Test, &r.Family, &r.Group, &r.Threads, &r.Warm, &r.Action,
			&r.Metric, &r.RowsPerOp, &r.Status, &started, &r.Seconds, &r.Events, &r.Statements, &r.Errors, &r.Rows,
			&mean, &p50, &p95, &p99, &p999, &mx}
		if full {
			dest = append(dest, &r.Histogram, &samples)
		}
		var head headlineRow
		dest = append(append(dest, role.dest(&r)...), head.dest(&r)...)
		if full {
			dest = append(append(dest, &facts), eff.dest()...)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		r.Started = parseTime(started)
		r.Latency.Mean, r.Latency.P50, r.Latency.P95 = time.Duration(mean), time.Duration(p50), time.Duration(p95)
		r.Latency.P99, r.Latency.P999, r.Latency.Max = time.Duration(p99), time.Duration(p999), time.Duration(mx)
		role.apply(&r)
		head.apply(&r)
		if full {
			_ = json.Unmarshal([]byte(samples), &r.ErrorSamples)
			if facts != "" {
				if err := json.Unmarshal([]byte(facts), &r.Facts); err != nil {
					return nil, fmt.Errorf("read facts of result %d: %w", r.ID, err)
				}
			}
			eff.apply(&r)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) intervals(ctx context.Context, resultID int64) ([]Interval, error) {
	rows, err := s.q().QueryContext(ctx, `SELECT sec, seconds, events, statements, errors, rows, p95_ns, max_ns,
		server_cpu_s, client_cpu_s, steal_pct, foreign_pct, cpu_speed
		FROM intervals WHERE result_id = ? ORDER BY sec`, resultID)
	if err != nil {
		return nil, fmt.Errorf("read intervals: %w", err)
	}
	defer rows.Close()
	var out []Interval
	for rows.Next() {
		var iv Interval
		var p95, mx int64
		var load [5]sql.NullFloat64
		if err := rows.Scan(&iv.Sec, &iv.Seconds, &iv.Events, &iv.Statements, &iv.Errors, &iv.Rows, &p95, &mx,
			&load[0], &load[1], &load[2], &load[3], &load[4]); err != nil {
			return nil, err
		}
		iv.P95, iv.Max = time.Duration(p95), time.Duration(mx)
		if load[0].Valid || load[1].Valid || load[2].Valid || load[3].Valid || load[4].Valid {
			iv.Load = &IntervalLoad{ServerCPU: fromNullF(load[0]), ClientCPU: fromNullF(load[1]),
				StealPct: fromNullF(load[2]), ForeignPct: fromNullF(load[3]), CPUSpeed: load[4].Float64}
		}
		out = append(out, iv)
	}
	return out, rows.Err()
}
