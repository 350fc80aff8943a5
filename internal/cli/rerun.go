package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"benchlab/internal/runner"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// runRerun runs a stored experiment again from its manifest: the completed
// spec as stored and the same seed, so the new experiment draws the same data
// and the same random choices.
func runRerun(env Env, args []string) error {
	fs := flag.NewFlagSet("rerun", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	storeFlag := fs.String("store", "", "results database: a SQLite file or a postgres:// URL (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	id := fs.Int64("experiment", 0, "experiment to run again (default: the most recent)")
	out := fs.String("o", "", "also write the report to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.Stdout, "Usage: benchlab rerun [--experiment N] [-o report]\n\n"+
				"Runs a stored experiment again from its stored spec and seed.")
			return errHelp
		}
		return usagef("%v", err)
	}
	path := storePath(env, *storeFlag)
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
	s, err := spec.Parse([]byte(exp.Spec), fmt.Sprintf("experiment %d's stored spec", exp.ID), "")
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		s.Seed = store.ParseManifest(runs[0].Manifest).Seed
	}
	for i := range s.Targets {
		// Stored DSNs have no password: it comes from the environment.
		s.Targets[i].DSN = server.DropRedacted(s.Targets[i].DSN)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "benchlab: running experiment %d (%s) again with seed %d\n", exp.ID, exp.Name, s.Seed)
	newID, err := execute(env, s, path, runner.ExperimentOptions{})
	if newID != 0 {
		if rerr := printAndWriteReport(env, path, newID, *out, ""); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
