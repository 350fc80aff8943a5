package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// Copied is what CopyExperiment did.
type Copied struct {
	// Experiment is the experiment's id in the destination: a new one, or
	// the one an earlier copy made (Existing).
	Experiment int64
	Existing   bool
	// Runs and Results were written now; KeptRuns and KeptResults were
	// already there from an earlier copy and left alone.
	Runs, Results         int
	KeptRuns, KeptResults int
}

// CopyExperiment copies experiment id of src, with its runs, results and
// 1-second series, into s, and says what it wrote.
//
// A copy is idempotent: an experiment already copied (same name, spec and
// creation time) is not copied again; its runs are matched by their
// content (RunKey) and only runs and results missing from it are added,
// so a second copy writes nothing and a copy that failed part way is
// completed by the next one. The source is only read.
func (s *Store) CopyExperiment(ctx context.Context, src *Store, id int64) (Copied, error) {
	var c Copied
	e, err := src.Experiment(ctx, id)
	if err != nil {
		return c, err
	}
	rs, err := src.Runs(ctx, e.ID)
	if err != nil {
		return c, err
	}
	have, err := s.copyOf(ctx, e)
	if err != nil {
		return c, err
	}
	if have != nil {
		c.Experiment, c.Existing = have.id, true
	} else {
		e.ID = 0
		if err := s.CreateExperiment(ctx, &e); err != nil {
			return c, err
		}
		c.Experiment = e.ID
		have = &copied{id: e.ID, runs: map[string]Run{}}
	}
	for _, r := range rs {
		res, err := src.Results(ctx, r.ID, true)
		if err != nil {
			return c, err
		}
		key := RunKey(r)
		// A copy is a record, not an attempt of a job: its status is
		// copied as it is, without the source's leases.
		r.Job, r.Lease = 0, ""
		old, ok := have.runs[key]
		dst := old.ID
		kept := map[resultKey]bool{}
		if ok {
			c.KeptRuns++
			// A run copied while it ran ends in a later copy.
			if old.Status != r.Status || !sameTime(old.Ended, r.Ended) || old.Manifest != r.Manifest || old.Version != r.Version || old.Error != r.Error {
				r.ID, r.ExperimentID = dst, c.Experiment
				if err := s.FinishRun(ctx, &r); err != nil {
					return c, err
				}
			}
			old, err := s.Results(ctx, dst, false)
			if err != nil {
				return c, err
			}
			for _, o := range old {
				kept[keyOf(o)] = true
			}
		} else {
			// CreateRun stores the run as it is; FinishRun writes what a run
			// gets when it ends (status, version, manifest, end time).
			r.ID, r.ExperimentID = 0, c.Experiment
			if err := s.CreateRun(ctx, &r); err != nil {
				return c, err
			}
			if err := s.FinishRun(ctx, &r); err != nil {
				return c, err
			}
			dst = r.ID
			c.Runs++
		}
		for i := range res {
			if kept[keyOf(res[i])] {
				c.KeptResults++
				continue
			}
			res[i].ID, res[i].RunID = 0, dst
			if err := s.SaveResult(ctx, &res[i]); err != nil {
				return c, fmt.Errorf("run %d: %w", dst, err)
			}
			c.Results++
		}
	}
	return c, nil
}

// copied is an experiment of the destination that an earlier copy made:
// its id and its runs by content key.
type copied struct {
	id   int64
	runs map[string]Run
}

// copyOf finds the experiment an earlier copy of e made in s, or nil. An
// experiment is the same when its name, spec and creation time are.
func (s *Store) copyOf(ctx context.Context, e Experiment) (*copied, error) {
	exps, err := s.experiments(ctx, `SELECT id, name, base, preset, spec, targets, created FROM experiments WHERE name = ? ORDER BY id`, e.Name)
	if err != nil {
		return nil, err
	}
	for _, x := range exps {
		if x.Spec != e.Spec || !sameTime(x.Created, e.Created) {
			continue
		}
		rs, err := s.Runs(ctx, x.ID)
		if err != nil {
			return nil, err
		}
		c := &copied{id: x.ID, runs: map[string]Run{}}
		for _, r := range rs {
			c.runs[RunKey(r)] = r
		}
		return c, nil
	}
	return nil, nil
}

// RunKey is a run's content key: the same run copied into any store has
// the same key, whatever id it gets there, and keeps it when it ends (what
// a run gets at its end, status, version, manifest and end time, is left
// out, so a copy of a run still going is completed by a later copy). Times
// count to the millisecond, the precision every store keeps.
func RunKey(r Run) string {
	h := sha256.New()
	for _, f := range []string{r.Target, r.Engine, strconv.Itoa(r.Repeat), millis(r.Started)} {
		h.Write([]byte(strconv.Itoa(len(f))))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// resultKey names a result within its run.
type resultKey struct {
	seq, threads int
	test, role   string
}

func keyOf(r Result) resultKey {
	return resultKey{seq: r.Seq, threads: r.Threads, test: r.Test, role: r.Role.Name}
}

func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func sameTime(a, b time.Time) bool { return a.UnixMilli() == b.UnixMilli() }
