package store

import (
	"context"
	"fmt"
)

// Batch is a set of stored experiments with their runs and measured step
// results, each as Experiment, Runs and Results give it, but for what is
// not the measure itself, which it leaves out: warm-ups and actions, and
// the results' histograms, error samples, facts, efficiency and 1-second
// series. It is what the noise history learns from ten thousand runs at
// once.
type Batch struct {
	// Experiments are oldest first.
	Experiments []Experiment
	// Runs maps an experiment ID to its runs, oldest first.
	Runs map[int64][]Run
	// Results maps a run ID to its measured step results (neither warm-ups
	// nor actions), in sequence order: their identity, status, counts,
	// latency and role (no histogram, error samples, facts, efficiency,
	// database size or profile: what the noise history needs).
	Results map[int64][]Result
}

// batchIDs is how many experiment IDs one statement of ReadBatch names:
// far under the bound on placeholders of either backend.
const batchIDs = 256

// ReadBatch reads experiments ids (those that exist) with their runs and
// step results in three statements per batchIDs experiments, where reading
// them one by one costs one statement per run: learning the noise history
// of 10,000 copied runs that way took 8 s.
func (s *Store) ReadBatch(ctx context.Context, ids []int64) (*Batch, error) {
	b := &Batch{Runs: map[int64][]Run{}, Results: map[int64][]Result{}}
	for len(ids) > 0 {
		n := min(len(ids), batchIDs)
		if err := s.readBatch(ctx, b, ids[:n]); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return b, nil
}

// readBatch adds experiments ids to b.
func (s *Store) readBatch(ctx context.Context, b *Batch, ids []int64) error {
	in := "(" + marks(len(ids)) + ")"
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	exps, err := s.experiments(ctx, `SELECT id, name, base, preset, spec, targets, created FROM experiments
		WHERE id IN `+in+` ORDER BY id`, args...)
	if err != nil {
		return err
	}
	b.Experiments = append(b.Experiments, exps...)
	rows, err := s.q().QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE experiment_id IN `+in+` ORDER BY id`, args...)
	if err != nil {
		return fmt.Errorf("read runs: %w", err)
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return err
	}
	for _, r := range runs {
		b.Runs[r.ExperimentID] = append(b.Runs[r.ExperimentID], r)
	}
	results, err := s.results(ctx, false, `warm = 0 AND action = 0 AND run_id IN (SELECT id FROM runs WHERE experiment_id IN `+in+`)`, args...)
	if err != nil {
		return fmt.Errorf("read results of %d experiments from %d: %w", len(ids), ids[0], err)
	}
	for _, r := range results {
		b.Results[r.RunID] = append(b.Results[r.RunID], r)
	}
	return nil
}
