package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"benchlab/internal/fleet"
	"benchlab/internal/report"
)

// This file is benchlab jobs (the queue's jobs and workers) and benchlab
// cancel.

func newJobsCmd(env Env) *cobra.Command {
	var storeFlag string
	var limit int
	cmd := &cobra.Command{
		Use:   "jobs [--store postgres://...] [--limit N]",
		Short: "list the lab's queued, running and finished jobs, newest first (needs a PostgreSQL --store)",
		Args:  noArgs,
		RunE: body(func(*cobra.Command, []string) error {
			return runJobs(env, storeFlag, limit)
		}),
	}
	addStoreFlag(cmd.Flags(), &storeFlag)
	cmd.Flags().IntVar(&limit, "limit", defaultRunsLimit, "jobs to list (0: all)")
	return cmd
}

func runJobs(env Env, storeFlag string, limit int) error {
	path := storePath(env, storeFlag)
	if err := needPostgres(path); err != nil {
		return err
	}
	if limit < 0 {
		return usagef("flag --limit: %d is negative; want a number of jobs, or 0 for all", limit)
	}
	ctx := context.Background()
	q, err := fleet.Open(ctx, path, redactedShown(path))
	if err != nil {
		return err
	}
	defer q.Close()
	jobs, err := q.Jobs(ctx, limit)
	if err != nil {
		return err
	}
	workers, err := q.Workers(ctx)
	if err != nil {
		return err
	}
	if err := printWorkers(env, workers); err != nil {
		return err
	}
	if len(jobs) == 0 {
		fmt.Fprintln(env.Stdout, "no jobs queued")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tSPEC\tFOR\tHOST\tEXPERIMENT\tQUEUED\tSTARTED\tENDED\tATTEMPTS\tNOTE")
	for _, j := range jobs {
		exp, earlier := "-", j.Output.Earlier
		switch {
		case (j.Output.Outcome == fleet.OutcomeInterrupted || j.Output.Outcome == fleet.OutcomeCutOff) &&
			(j.State == "queued" || j.State == "retrying") && j.Output.Experiment != 0:
			// Its experiment was an attempt; the next one makes another.
			earlier = append(earlier, j.Output.Experiment)
		case j.Output.Experiment != 0:
			exp = fmt.Sprint(j.Output.Experiment)
		}
		if len(earlier) > 0 {
			exp += fmt.Sprintf(" (earlier %s)", joinIDs(earlier))
		}
		note := ""
		switch {
		case j.Output.Outcome == fleet.OutcomeInterrupted:
			note = fmt.Sprintf("interrupted on %s (worker stopped); queued again", j.Output.Host)
		case j.Output.Outcome == fleet.OutcomeCutOff:
			note = fmt.Sprintf("stopped on %s, cut off from the store; to be taken again", j.Output.Host)
		case j.State != "running" && j.Output.Outcome == fleet.OutcomeRunning:
			note = fmt.Sprintf("worker %s stopped heartbeating; taken again", j.Output.Worker)
		case j.Output.Error != "":
			note = j.Output.Error
		case len(j.Errors) > 0:
			note = j.Errors[len(j.Errors)-1]
		}
		host, started := j.Output.Host, j.Started
		if j.State == "queued" {
			// Taken before, by a worker since stopped (the note says so)
			// or one busy with another job.
			host, started = "", time.Time{}
		}
		if j.Priority == fleet.PriorityHigh {
			note = strings.TrimSpace("priority " + note)
		}
		// Names, hosts and errors are stored strings: escaped
		// (report.Printable), they cannot drive the terminal.
		p := report.Printable
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n", j.ID, p(j.State), p(j.Args.Name), j.Args.Placement,
			p(orDash(host)), exp, clock(j.Created), clock(started), clock(j.Ended), j.Attempt, fleet.MaxAttempts,
			p(firstLine(note)))
	}
	return tw.Flush()
}

// printWorkers lists the workers heard from in the last day and their last
// heartbeat, before the jobs.
func printWorkers(env Env, ws []fleet.WorkerState) error {
	if len(ws) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tHOST\tSTATE\tLAST HEARTBEAT\tJOB\tSTARTED")
	for _, w := range ws {
		state := "alive"
		switch {
		case w.Stopped:
			state = "stopped"
		case !w.Alive:
			state = fmt.Sprintf("silent (over %s: its job is taken again)", fleet.HeartbeatBound)
		}
		job := "-"
		if w.Job != 0 {
			job = fmt.Sprint(w.Job)
		}
		p := report.Printable
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s ago\t%s\t%s\n", p(w.ID), p(w.Host), state, w.Since.Round(time.Second), job, clock(w.Started))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout)
	return nil
}

func newCancelCmd(env Env) *cobra.Command {
	var storeFlag string
	cmd := &cobra.Command{
		Use:   "cancel JOB... [--store postgres://...]",
		Short: "cancel queued or running jobs of the lab (needs a PostgreSQL --store)",
		Long: "Cancels jobs by the IDs queue printed (jobs lists them). A queued job never runs. A running job's\n" +
			"worker stops its experiment as Ctrl-C stops a run (the results so far stay in the store, the servers\n" +
			"are stopped) and marks the job cancelled, then goes on to its next job.",
		Example: "  benchlab cancel 12 13 --store postgres://lab@db/benchlab",
		RunE: body(func(_ *cobra.Command, args []string) error {
			return runCancel(env, storeFlag, args)
		}),
	}
	addStoreFlag(cmd.Flags(), &storeFlag)
	return cmd
}

func runCancel(env Env, storeFlag string, args []string) error {
	path := storePath(env, storeFlag)
	if err := needPostgres(path); err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("no job given; want the IDs of the jobs to cancel, as queue printed them (benchlab jobs lists them)")
	}
	ids := make([]int64, len(args))
	for i, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return usagef("argument %q is not a job ID; want a positive number, as queue printed it (benchlab jobs lists them)", a)
		}
		ids[i] = id
	}
	ctx := context.Background()
	q, err := fleet.Open(ctx, path, redactedShown(path))
	if err != nil {
		return err
	}
	defer q.Close()
	var refused []string
	for _, id := range ids {
		j, err := q.Cancel(ctx, id)
		switch {
		case errors.Is(err, fleet.ErrNoJob):
			refused = append(refused, fmt.Sprintf("job %d: no such job in the queue (benchlab jobs lists them)", id))
		case errors.Is(err, fleet.ErrFinished):
			refused = append(refused, fmt.Sprintf("job %d (%s) has already ended: %s; nothing to cancel", id, report.Printable(j.Args.Name), j.State))
		case err != nil:
			return err
		case j.State == "running":
			fmt.Fprintf(env.Stdout, "job %d (%s) runs on %s: asked its worker to stop it; the results measured so far stay in the store (experiment %d)\n",
				id, report.Printable(j.Args.Name), report.Printable(orDash(j.Output.Host)), j.Output.Experiment)
		default:
			fmt.Fprintf(env.Stdout, "job %d (%s) cancelled before it ran\n", id, report.Printable(j.Args.Name))
		}
	}
	if len(refused) > 0 {
		return usagef("%s", strings.Join(refused, "; "))
	}
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clock is a job's time in local time, "-" when not yet.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
