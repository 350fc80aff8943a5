package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"benchlab/internal/store"
)

// runCopy copies experiments from one results database to another, for
// example local SQLite results into a lab's shared PostgreSQL store.
func runCopy(env Env, args []string) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "results database to copy from (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	to := fs.String("to", "", "results database to copy into: a SQLite file or a postgres:// URL (required)")
	id := fs.Int64("experiment", 0, "the experiment to copy (default: all of them, oldest first)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(env.Stdout, "Usage: benchlab copy [--from DB] --to DB [--experiment N]")
			return errHelp
		}
		return usagef("%v", err)
	}
	if *to == "" {
		return usagef("flag --to: missing; want the results database to copy into (a file or a postgres:// URL)")
	}
	src := storePath(env, *from)
	if src == *to {
		return usagef("flag --to: %s is also the source", *to)
	}
	if err := storeExists(src); err != nil {
		return err
	}
	in, err := store.Open(src)
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
		nid, runs, results, err := out.CopyExperiment(ctx, in, x)
		if err != nil {
			return fmt.Errorf("copy experiment %d from %s to %s: %w", x, in.Path(), out.Path(), err)
		}
		fmt.Fprintf(env.Stdout, "experiment %d of %s -> experiment %d of %s: %d run(s), %d result(s)\n",
			x, in.Path(), nid, out.Path(), runs, results)
	}
	return nil
}
