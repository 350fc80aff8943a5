package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"benchlab/internal/noise"
	"benchlab/internal/store"
)

// runCopy copies experiments from one results database to another, for
// example local SQLite results into a lab's shared PostgreSQL store.
func newCopyCmd(env Env) *cobra.Command {
	var from, to string
	var id int64
	cmd := &cobra.Command{
		Use:     "copy --to DB [--store DB] [--experiment N]",
		Short:   "copy stored experiments into another results database (a lab's shared PostgreSQL store)",
		Example: "  benchlab copy --store benchlab.db --to postgres://lab@db/benchlab",
		Args:    noArgs,
		RunE:    body(func(*cobra.Command, []string) error { return runCopy(env, from, to, id) }),
	}
	fs := cmd.Flags()
	fs.StringVar(&from, "store", "", "results database to copy from (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	fs.StringVar(&from, "from", "", "the same as --store")
	fs.StringVar(&to, "to", "", "results database to copy into: a SQLite file or a postgres:// URL (required)")
	fs.Int64Var(&id, "experiment", 0, "the experiment to copy (default: all of them, oldest first)")
	return cmd
}

func runCopy(env Env, fromFlag, toFlag string, idFlag int64) error {
	to, id := &toFlag, &idFlag
	if *to == "" {
		return usagef("flag --to: missing; want the results database to copy into (a file or a postgres:// URL)")
	}
	src := storePath(env, fromFlag)
	if src == *to {
		return usagef("flag --to: %s is also the source", *to)
	}
	in, err := openExisting(env, src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := store.Open(*to)
	if err != nil {
		return err
	}
	defer out.Close()
	ctx := context.Background()
	ids := []int64{*id}
	if *id == 0 {
		exps, err := in.Experiments(ctx)
		if err != nil {
			return err
		}
		ids = ids[:0]
		for i := len(exps) - 1; i >= 0; i-- {
			ids = append(ids, exps[i].ID)
		}
	}
	for _, x := range ids {
		c, err := out.CopyExperiment(ctx, in, x)
		if err != nil {
			return fmt.Errorf("copy experiment %d from %s to %s: %w", x, in.Path(), out.Path(), err)
		}
		fmt.Fprintf(env.Stdout, "experiment %d of %s -> experiment %d of %s: %s\n", x, in.Path(), c.Experiment, out.Path(), copyLine(c))
	}
	// The noise model learns the copies now, as it learns a run when it is
	// stored, so that the first report on the copy does not learn them all.
	if err := noise.Backfill(ctx, out); err != nil {
		return fmt.Errorf("copy: learn the noise history of the copies in %s: %w", out.Path(), err)
	}
	return nil
}

// copyLine says what a copy wrote and what an earlier copy had already.
func copyLine(c store.Copied) string {
	line := fmt.Sprintf("%d run(s), %d result(s)", c.Runs, c.Results)
	if c.Existing {
		if c.Runs == 0 && c.Results == 0 {
			return fmt.Sprintf("already there (%d run(s), %d result(s)), nothing copied", c.KeptRuns, c.KeptResults)
		}
		line += fmt.Sprintf(" added to the earlier copy (%d run(s) and %d result(s) already there)", c.KeptRuns, c.KeptResults)
	}
	return line
}
