package importer

import (
	"context"
	"fmt"
	"os"
	"slices"

	"benchlab/internal/noise"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// This file stores an import: the files read, checked against each other,
// as one experiment of the store.

// Suite is the suite an imported experiment's stored spec names: no
// suite of that name is registered, so nothing can run it (rerun refuses
// it before that, from the runs' manifests).
const Suite = "imported"

// Target is one target of an import and the files of its runs (several:
// repeats).
type Target struct {
	Name  string
	Files []string
}

// Run is one file read: its target, its run's results and where they came
// from.
type Run struct {
	Target string
	Out    *Output
	Source store.ImportSource
}

// Experiment is what one import stores.
type Experiment struct {
	Name, Tool string
	// Engine is what every target ran ("" for none); Base the target the
	// others are compared with.
	Engine, Base string
	// Sequence: the targets are releases in order (spec sequence).
	Sequence bool
	Targets  []Target
	Runs     []Run // in the targets' order
	// Benchlab is the build that imported them, for the manifests.
	Benchlab store.BuildInfo
}

// CheckCells refuses targets whose files ran different cells (a test at
// a thread count): a cell some target lacks would have nothing to compare
// with, so the files or the flags are wrong. Repeats may differ.
func CheckCells(runs []Run, targets []Target) error {
	type cell struct {
		test    string
		threads int
	}
	cells := map[string]map[cell]string{} // target -> cell -> the first file with it
	for _, r := range runs {
		if cells[r.Target] == nil {
			cells[r.Target] = map[cell]string{}
		}
		for _, res := range r.Out.Results {
			c := cell{res.Test, res.Threads}
			if _, ok := cells[r.Target][c]; !ok {
				cells[r.Target][c] = r.Source.File
			}
		}
	}
	for _, a := range targets {
		for _, b := range targets {
			for c, file := range cells[a.Name] {
				if _, ok := cells[b.Name][c]; !ok {
					return &Error{File: file, Msg: fmt.Sprintf("%s at %d threads, which no file of target %s has; every "+
						"target needs the same tests at the same thread counts (--test names a sysbench file's test, "+
						"--threads db_bench's)", c.test, c.threads, b.Name)}
				}
			}
		}
	}
	return nil
}

// Store stores e in st and returns its ID: a spec that names the imported
// suite, the targets, tests, thread counts and repeats; one run per file
// with its results and the manifest that says where it came from. The
// noise model learns the runs as it learns benchlab's own.
func Store(ctx context.Context, st *store.Store, e Experiment) (int64, error) {
	name, base, engine, targets, runs := e.Name, e.Base, e.Engine, e.Targets, e.Runs
	sp := spec.Default()
	sp.Name, sp.Base, sp.Sequence = name, base, e.Sequence
	sp.Workload.Suite = Suite
	sp.Workload.Tests, sp.Workload.Threads = nil, nil
	repeats := 0
	for _, t := range targets {
		sp.Targets = append(sp.Targets, spec.Target{Name: t.Name, Engine: engine})
		repeats = max(repeats, len(t.Files))
	}
	sp.Workload.Repeats = repeats
	for _, r := range runs {
		for _, res := range r.Out.Results {
			if !slices.Contains(sp.Workload.Tests, res.Test) {
				sp.Workload.Tests = append(sp.Workload.Tests, res.Test)
			}
			if !slices.Contains(sp.Workload.Threads, res.Threads) {
				sp.Workload.Threads = append(sp.Workload.Threads, res.Threads)
			}
		}
	}
	slices.Sort(sp.Workload.Threads)
	exp := &store.Experiment{Name: name, Base: base, Spec: sp.TOML(), Targets: names(targets), Created: runs[0].Source.Imported}
	if err := st.CreateExperiment(ctx, exp); err != nil {
		return 0, err
	}
	repeat := map[string]int{}
	for _, r := range runs {
		repeat[r.Target]++
		when := r.Out.Date
		if when.IsZero() {
			// A sysbench output has no date: the file's modification time
			// is the nearest thing to when the run ended.
			if fi, err := os.Stat(r.Source.File); err == nil {
				when = fi.ModTime()
			}
		}
		src := r.Source
		m := store.Manifest{Benchlab: e.Benchlab, Experiment: name, Spec: exp.Spec, Repeat: repeat[r.Target],
			Import: &src, Started: when.UTC(), Ended: when.UTC(), Status: store.StatusOK}
		m.Target.Name, m.Target.Engine = r.Target, engine
		m.Engine.Version = r.Out.EngineVersion
		run := &store.Run{ExperimentID: exp.ID, Target: r.Target, Engine: engine, Version: r.Out.EngineVersion,
			Repeat: repeat[r.Target], Status: store.StatusOK, Started: when, Ended: when, Manifest: m.JSON()}
		if err := st.CreateRun(ctx, run); err != nil {
			return exp.ID, err
		}
		for i := range r.Out.Results {
			res := r.Out.Results[i]
			res.RunID, res.Seq, res.Started = run.ID, i, when
			if err := st.SaveResult(ctx, &res); err != nil {
				return exp.ID, err
			}
		}
	}
	// The noise model learns the imported repeats now, as it learns a run
	// when it is stored: the report only reads.
	if err := noise.LearnStored(ctx, st, exp.ID); err != nil {
		return exp.ID, fmt.Errorf("import: %w", err)
	}
	return exp.ID, nil
}

func names(ts []Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
