package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"benchlab/internal/engine"
	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/stale"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// This file is benchlab runs (the stored runs, newest first, and pruning) and
// benchlab list (engines and suites).

func newRunsCmd(env Env) *cobra.Command {
	var storeFlag string
	var limit, offset int
	var prune bool
	cmd := &cobra.Command{
		Use:   "runs [--store DB] [--limit N] [--offset M]",
		Short: "list stored runs, newest first, under their experiments",
		Long: "Lists the newest runs (50 by default) under their experiments, newest first;\n" +
			"--offset skips the newest M runs to page back, --limit 0 lists all.",
		Args: noArgs,
		RunE: body(func(*cobra.Command, []string) error {
			if prune {
				return pruneRuns(env, storeFlag)
			}
			return runRuns(env, storeFlag, limit, offset)
		}),
	}
	cmd.Flags().BoolVar(&prune, "prune", false, "mark runs whose process is gone as abandoned, and remove work dirs whose owner is gone")
	addStoreFlag(cmd.Flags(), &storeFlag)
	cmd.Flags().IntVar(&limit, "limit", defaultRunsLimit, "runs to list (0: all)")
	cmd.Flags().IntVar(&offset, "offset", 0, "newest runs to skip (the next page starts at offset+limit)")
	return cmd
}

// defaultRunsLimit is how many runs `runs` lists unless told otherwise.
const defaultRunsLimit = 50

func runRuns(env Env, storeFlag string, limit, offset int) error {
	if limit < 0 {
		return usagef("flag --limit: %d is negative; want a number of runs, or 0 for all", limit)
	}
	if offset < 0 {
		return usagef("flag --offset: %d is negative; want a number of runs to skip", offset)
	}
	path := storePath(env, storeFlag)
	st, err := openExisting(env, path)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	runs, total, err := st.RecentRuns(ctx, limit, offset)
	if err != nil {
		return err
	}
	// Experiments newest first, each with its listed runs oldest first.
	byExp := map[int64][]store.Run{}
	var order []int64
	for _, r := range runs {
		if _, ok := byExp[r.ExperimentID]; !ok {
			order = append(order, r.ExperimentID)
		}
		byExp[r.ExperimentID] = append(byExp[r.ExperimentID], r)
	}
	if len(runs) == 0 && offset == 0 {
		// Experiments without runs (a run refused before it started).
		exps, err := st.Experiments(ctx)
		if err != nil {
			return err
		}
		for _, e := range exps {
			order = append(order, e.ID)
		}
	}
	for _, id := range order {
		e, err := st.Experiment(ctx, id)
		if err != nil {
			return err
		}
		// Names and versions are stored strings: escaped, they cannot
		// send the terminal control sequences (report.Printable).
		p := report.Printable
		printWrapped(env.Stdout, "experiment %d  %s  %s  preset=%s base=%s", e.ID, e.Created.Local().Format("2006-01-02 15:04:05"),
			p(e.Name), p(orNone(e.Preset)), p(e.Base))
		rs := byExp[id]
		for i := len(rs) - 1; i >= 0; i-- {
			r := rs[i]
			status, took := runState(r)
			printWrapped(env.Stdout, "  run %-4d %-20s %-8s %-10s repeat %d  %-11s %s", r.ID, p(r.Target), p(r.Engine),
				p(r.Version), r.Repeat, p(status), p(took))
		}
	}
	if shown := len(runs); offset > 0 || offset+shown < total {
		next := ""
		if offset+shown < total {
			next = fmt.Sprintf("; --offset %d for the next page", offset+shown)
		}
		fmt.Fprintf(env.Stdout, "(runs %d-%d of %d, newest first%s, --limit 0 for all)\n", min(offset+1, total),
			offset+shown, total, next)
	}
	return nil
}

// runState is a run's status as `runs` shows it: a run stored as running
// whose process (pid on this host) is gone is "abandoned"; and how long it
// took, or for a run still going how long it has been going.
func runState(r store.Run) (status, took string) {
	status = r.Status
	if src := store.ParseManifest(r.Manifest).Import; src != nil {
		return status, "imported from " + src.File
	}
	if r.Status != store.StatusRunning {
		if r.Ended.IsZero() || r.Ended.Before(r.Started) {
			return status, "-"
		}
		return status, r.Ended.Sub(r.Started).Round(time.Second).String()
	}
	m := store.ParseManifest(r.Manifest)
	if stale.Gone(m.Host.Hostname, m.PID) {
		return store.StatusAbandoned, fmt.Sprintf("- (pid %d on %s is gone; runs --prune marks it)", m.PID, m.Host.Hostname)
	}
	return status, fmt.Sprintf("%s so far", time.Since(r.Started).Round(time.Second))
}

// pruneRuns marks every run whose process is gone as abandoned and removes
// the work dirs of dead owners from the temp dir.
func pruneRuns(env Env, storeFlag string) error {
	path := storePath(env, storeFlag)
	st, err := openExisting(env, path)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	runs, _, err := st.RecentRuns(ctx, 0, 0)
	if err != nil {
		return err
	}
	marked := 0
	for _, r := range runs {
		if r.Status != store.StatusRunning {
			continue
		}
		m := store.ParseManifest(r.Manifest)
		if !stale.Gone(m.Host.Hostname, m.PID) {
			continue
		}
		r.Status, r.Ended = store.StatusAbandoned, r.Started
		r.Error = fmt.Sprintf("abandoned: benchlab process %d on %s ended without finishing the run", m.PID, m.Host.Hostname)
		if err := st.FinishRun(ctx, &r); err != nil {
			return err
		}
		marked++
		fmt.Fprintf(env.Stdout, "run %d (%s, experiment %d) marked abandoned: process %d on %s is gone\n", r.ID, report.Printable(r.Target),
			r.ExperimentID, m.PID, report.Printable(m.Host.Hostname))
	}
	removed, err := stale.SweepWorkDirs(os.TempDir())
	for _, d := range removed {
		fmt.Fprintf(env.Stdout, "removed work dir %s (its benchlab process is gone)\n", d)
	}
	fmt.Fprintf(env.Stdout, "prune: %d run(s) marked abandoned, %d work dir(s) removed\n", marked, len(removed))
	return err
}

func newListCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list engines, suites and tests",
		Args:  noArgs,
		RunE:  body(func(*cobra.Command, []string) error { return runList(env) }),
	}
}

func runList(env Env) error {
	w := env.Stdout
	fmt.Fprintln(w, "Engines:")
	for _, n := range engine.Names() {
		d, _ := engine.Lookup(n)
		printHanging(w, fmt.Sprintf("  %-10s ", n), d.Summary())
		for _, s := range d.Settings() {
			printHanging(w, fmt.Sprintf("      %-20s ", s.Name), fmt.Sprintf("%s (default %s)", s.Doc, s.Default))
		}
	}
	fmt.Fprintln(w, "\nSuites and tests:")
	for _, n := range workload.Names() {
		s, _ := workload.Lookup(n)
		printHanging(w, fmt.Sprintf("  %-10s ", n), s.Summary())
		group := ""
		for _, t := range s.Tests() {
			if t.Group != group {
				fmt.Fprintf(w, "    %s:\n", t.Group)
				group = t.Group
			}
			printHanging(w, fmt.Sprintf("      %-24s ", t.Name), t.Summary)
		}
	}
	fmt.Fprintln(w, "\nPresets:")
	all := spec.AllPresets()
	for _, p := range spec.PresetNames() {
		printHanging(w, fmt.Sprintf("  %-10s ", p), all[p])
	}
	printHanging(w, fmt.Sprintf("  %-10s ", "(none)"), "faithful defaults: docs/method.md durations (600 s reads, 900 s writes, 60 s scan warm-up)")
	return nil
}
