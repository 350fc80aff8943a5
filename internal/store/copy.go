package store

import (
	"context"
	"fmt"
)

// CopyExperiment copies experiment id of src, with its runs, results and
// 1-second series, into s under new ids, and returns the new experiment's
// id with the runs and results copied. Nothing in s is changed by a copy
// that fails part way except the rows written so far, which a failed copy
// reports; the source is only read.
func (s *Store) CopyExperiment(ctx context.Context, src *Store, id int64) (newID int64, runs, results int, err error) {
	e, err := src.Experiment(ctx, id)
	if err != nil {
		return 0, 0, 0, err
	}
	rs, err := src.Runs(ctx, e.ID)
	if err != nil {
		return 0, 0, 0, err
	}
	e.ID = 0
	if err := s.CreateExperiment(ctx, &e); err != nil {
		return 0, 0, 0, err
	}
	for _, r := range rs {
		res, err := src.Results(ctx, r.ID, true)
		if err != nil {
			return e.ID, runs, results, err
		}
		// CreateRun stores the run as it is; FinishRun writes what a run
		// gets when it ends (status, version, manifest, end time).
		r.ID, r.ExperimentID = 0, e.ID
		if err := s.CreateRun(ctx, &r); err != nil {
			return e.ID, runs, results, err
		}
		if err := s.FinishRun(ctx, &r); err != nil {
			return e.ID, runs, results, err
		}
		runs++
		for i := range res {
			res[i].ID, res[i].RunID = 0, r.ID
			if err := s.SaveResult(ctx, &res[i]); err != nil {
				return e.ID, runs, results, fmt.Errorf("run %d: %w", r.ID, err)
			}
			results++
		}
	}
	return e.ID, runs, results, nil
}
