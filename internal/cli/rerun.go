package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"benchlab/internal/runner"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// runRerun runs a stored experiment again from its manifest: the completed
// spec as stored and the same seed, so the new experiment draws the same data
// and the same random choices.
func newRerunCmd(env Env) *cobra.Command {
	var storeFlag, out, format, color string
	var id int64
	var yes, dryRun, skipSpace bool
	cmd := &cobra.Command{
		Use:   "rerun [--experiment N] [-o report]",
		Short: "run a stored experiment again from its stored spec and seed",
		Long:  "Runs a stored experiment again from its stored spec and seed.",
		Args:  noArgs,
		RunE: body(func(*cobra.Command, []string) error {
			return runRerun(env, storeFlag, id, reportOut{path: out, format: format, color: color},
				planCheck{yes: yes, dryRun: dryRun, skipSpace: skipSpace})
		}),
	}
	fs := cmd.Flags()
	addStoreFlag(fs, &storeFlag)
	fs.Int64Var(&id, "experiment", 0, "experiment to run again (default: the most recent)")
	addReportOutFlags(fs, &out, &format, &color)
	fs.BoolVarP(&yes, "yes", "y", false, "run a plan of more than an hour without asking")
	fs.BoolVar(&dryRun, "dry-run", false, "print the plan and exit without running")
	fs.BoolVar(&skipSpace, "skip-space-check", false, "run even when the suite's estimate of its data exceeds the free space of the data dirs' filesystem, or an embedded engine's per-connection caches the available memory")
	return cmd
}

func runRerun(env Env, storeFlag string, idFlag int64, ro reportOut, pc planCheck) error {
	id := &idFlag
	if err := ro.check(); err != nil {
		return err
	}
	path := storePath(env, storeFlag)
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	exp, err := st.Experiment(context.Background(), *id)
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return usagef("%v", err)
		}
		return err
	}
	runs, err := st.Runs(context.Background(), exp.ID)
	st.Close()
	if err != nil {
		return err
	}
	for _, r := range runs {
		if src := store.ParseManifest(r.Manifest).Import; src != nil {
			return usagef("experiment %d was imported from %s output (%s, ...), not run by benchlab: there is no spec to run again; "+
				"run the tool again and import its new output, or write a spec for `benchlab run`", exp.ID, src.Tool, src.File)
		}
	}
	s, err := spec.ParseStored([]byte(exp.Spec), fmt.Sprintf("experiment %d's stored spec", exp.ID))
	if err != nil {
		return err
	}
	// Each repeat runs again with the seed it had; runs stored before
	// per-repeat seeds all used the experiment seed.
	repeatSeeds := map[int]uint64{}
	for _, r := range runs {
		m := store.ParseManifest(r.Manifest)
		s.Seed = m.Seed
		if m.RepeatSeed != 0 {
			repeatSeeds[r.Repeat] = m.RepeatSeed
		} else {
			repeatSeeds[r.Repeat] = m.Seed
		}
	}
	for i := range s.Targets {
		// Stored DSNs have no password: it comes from the environment.
		s.Targets[i].DSN = server.DropRedacted(s.Targets[i].DSN)
	}
	s.Getenv = env.Getenv
	if err := s.Validate(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "benchlab: running experiment %d (%s) again with seed %d and each repeat's stored seed\n",
		exp.ID, exp.Name, s.Seed)
	for _, n := range s.Workload.StoredNotes() {
		printWrapped(env.Stdout, "benchlab: experiment %d was %s; this run cannot do the same", exp.ID, n)
	}
	newID, err := execute(env, s, path, runner.ExperimentOptions{RepeatSeeds: repeatSeeds}, pc)
	if newID != 0 {
		if rerr := printAndWriteReport(env, path, newID, ro); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
