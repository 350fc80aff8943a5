package cli

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"benchlab/internal/runner"
	"benchlab/internal/spec"
)

// This file is benchlab quickstart: the sysbench suite on two SQLite
// configurations, run and reported in one command.

// quickstartSpec compares SQLite's WAL with synchronous=NORMAL (base) against
// the rollback journal with synchronous=FULL over the whole suite, one
// target after the other: with one repeat no verdict is drawn, so taking
// turns would buy nothing, and the quickstart shows every figure, per-op
// CPU and IO included, which interleaved results leave out.
const quickstartSpec = `name = "quickstart-sqlite-sync"
base = "wal-normal"
preset = "smoke"

[[target]]
name = "wal-normal"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "normal"

[[target]]
name = "delete-full"
engine = "sqlite"
[target.settings]
journal_mode = "delete"
synchronous = "full"

[workload]
suite = "sysbench"
threads = [1]
report_interval = "0s"
interleave = "off"
`

// QuickstartReport is where quickstart writes its Markdown report by default.
const QuickstartReport = "quickstart-report.md"

func newQuickstartCmd(env Env) *cobra.Command {
	var storeFlag string
	ro := reportOut{}
	cmd := &cobra.Command{
		Use:   "quickstart [-o report.md] [--store file]",
		Short: "run the sysbench suite on two SQLite configurations (smoke preset) and write a report",
		Long: "Runs the whole sysbench suite on SQLite, WAL+synchronous=NORMAL (base) against\n" +
			"rollback journal+synchronous=FULL, with the smoke preset (about 2 minutes).",
		Args: noArgs,
		RunE: body(func(*cobra.Command, []string) error { return runQuickstart(env, storeFlag, ro) }),
	}
	addStoreFlag(cmd.Flags(), &storeFlag)
	addReportOutFlags(cmd.Flags(), &ro.path, &ro.format, &ro.color)
	cmd.Flags().Lookup("output").DefValue = QuickstartReport
	ro.path = QuickstartReport
	return cmd
}

func runQuickstart(env Env, storeFlag string, ro reportOut) error {
	if err := ro.check(); err != nil {
		return err
	}
	s, err := spec.Parse([]byte(quickstartSpec), "quickstart spec", "")
	if err != nil {
		return err
	}
	s.Getenv = env.Getenv
	if err := s.Validate(); err != nil {
		return err
	}
	id, err := execute(env, s, storeFlag, runner.ExperimentOptions{}, planCheck{yes: true})
	if id != 0 {
		if ro.path != "" {
			if html := strings.TrimSuffix(ro.path, filepath.Ext(ro.path)) + ".html"; html != ro.path {
				ro.more = append(ro.more, html)
			}
		}
		if rerr := printAndWriteReport(env, storePath(env, storeFlag), id, ro); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
