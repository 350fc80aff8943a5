package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// NoiseKey identifies one test of the noise model: the same test at the
// same thread count on the same engine and host.
type NoiseKey struct {
	// Host is Host.ID() of the machine.
	Host   string
	Engine string
	// Test is suite/test, e.g. "sysbench/point-query".
	Test    string
	Threads int
}

// NoiseEntry is what one experiment taught the noise model about one key:
// the repeats of one configuration (Config: engine version and settings),
// the variance of their log throughput and its degrees of freedom.
type NoiseEntry struct {
	NoiseKey
	ExperimentID int64
	Config       string
	// Runs is the number of repeats, DF = Runs − 1.
	Runs, DF int
	// LogVar is the sample variance of log throughput over the repeats.
	LogVar float64
}

// SaveNoise replaces what experiment expID taught the noise model with
// entries, in one transaction, so learning an experiment twice changes
// nothing.
func (s *Store) SaveNoise(ctx context.Context, expID int64, entries []NoiseEntry) error {
	return s.SaveNoiseMany(ctx, map[int64][]NoiseEntry{expID: entries})
}

// noiseRows is how many rows one statement of SaveNoiseMany writes: 200
// noise entries are 1,800 placeholders, far under either backend's bound.
const noiseRows = 200

// SaveNoiseMany replaces what each experiment of learned (by ID) taught the
// noise model with its entries, as SaveNoise does, all in one transaction
// of a few statements: a store that has not learned a thousand copied
// experiments learns them in one commit and a few dozen statements, not a
// thousand commits and six thousand statements (one round trip each on
// PostgreSQL).
func (s *Store) SaveNoiseMany(ctx context.Context, learned map[int64][]NoiseEntry) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store noise model: %w", err)
	}
	defer tx.Rollback()
	b := s.tx(tx)
	ids := slices.Sorted(maps.Keys(learned))
	var entries []NoiseEntry
	for _, id := range ids {
		for _, e := range learned[id] {
			e.ExperimentID = id
			entries = append(entries, e)
		}
	}
	for c := range slices.Chunk(ids, noiseRows) {
		args := make([]any, len(c))
		for i, id := range c {
			args[i] = id
		}
		if _, err := b.ExecContext(ctx, `DELETE FROM noise WHERE experiment_id IN (`+marks(len(c))+`)`, args...); err != nil {
			return fmt.Errorf("store noise model of experiments %d-%d: %w", c[0], c[len(c)-1], err)
		}
		if _, err := b.ExecContext(ctx, `INSERT INTO noise_learned (experiment_id) VALUES `+placeholders(len(c), 1)+`
			ON CONFLICT DO NOTHING`, args...); err != nil {
			return fmt.Errorf("store noise model of experiments %d-%d: %w", c[0], c[len(c)-1], err)
		}
	}
	for c := range slices.Chunk(entries, noiseRows) {
		args := make([]any, 0, 9*len(c))
		for _, e := range c {
			args = append(args, e.ExperimentID, e.Host, e.Engine, e.Test, e.Threads, e.Config, e.Runs, e.DF, e.LogVar)
		}
		if _, err := b.ExecContext(ctx, `INSERT INTO noise (experiment_id, host, engine, test, threads, config, runs, df, log_var)
			VALUES `+placeholders(len(c), 9), args...); err != nil {
			return fmt.Errorf("store noise model of experiments %d-%d: %w", c[0].ExperimentID, c[len(c)-1].ExperimentID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store noise model: %w", err)
	}
	return nil
}

// NoiseHistory returns every entry of key, except those of the experiments
// exclude (the experiments being judged must not be their own prior).
func (s *Store) NoiseHistory(ctx context.Context, key NoiseKey, exclude ...int64) ([]NoiseEntry, error) {
	q := `SELECT experiment_id, config, runs, df, log_var FROM noise
		WHERE host = ? AND engine = ? AND test = ? AND threads = ?`
	args := []any{key.Host, key.Engine, key.Test, key.Threads}
	if len(exclude) > 0 {
		q += ` AND experiment_id NOT IN (` + marks(len(exclude)) + `)`
		for _, id := range exclude {
			args = append(args, id)
		}
	}
	rows, err := s.q().QueryContext(ctx, q+` ORDER BY experiment_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read noise model of %s: %w", key.Test, err)
	}
	defer rows.Close()
	var out []NoiseEntry
	for rows.Next() {
		e := NoiseEntry{NoiseKey: key}
		if err := rows.Scan(&e.ExperimentID, &e.Config, &e.Runs, &e.DF, &e.LogVar); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Unlearned lists the experiments the noise model has not learned yet
// (stored before it existed, or copied from another store), oldest first.
func (s *Store) Unlearned(ctx context.Context) ([]int64, error) {
	rows, err := s.q().QueryContext(ctx, `SELECT id FROM experiments
		WHERE id NOT IN (SELECT experiment_id FROM noise_learned) ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read experiments the noise model has not learned: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// marks is n '?' placeholders, comma separated.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// placeholders is rows parenthesised groups of cols placeholders each,
// comma separated, for a VALUES list: "(?,?),(?,?)" for 2 rows of 2.
func placeholders(rows, cols int) string {
	return strings.TrimSuffix(strings.Repeat("("+marks(cols)+"),", rows), ",")
}
