package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"benchlab/internal/engine"
	"benchlab/internal/report"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// quickstartSpec compares SQLite's WAL with synchronous=NORMAL (base) against
// the rollback journal with synchronous=FULL over the whole suite.
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
`

// QuickstartReport is where quickstart writes its Markdown report by default.
const QuickstartReport = "quickstart-report.md"

func runQuickstart(env Env, args []string) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	storeFlag := fs.String("store", "", "results database: a SQLite file or a postgres:// URL (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	out := fs.String("o", QuickstartReport, "report file (Markdown)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.Stdout, "Usage: benchlab quickstart [-o report.md] [--store file]\n\n"+
				"Runs the whole sysbench suite on SQLite, WAL+synchronous=NORMAL (base) against\n"+
				"rollback journal+synchronous=FULL, with the smoke preset (about 2 minutes).")
			return errHelp
		}
		return usagef("%v", err)
	}
	s, err := spec.Parse([]byte(quickstartSpec), "quickstart spec", "")
	if err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	id, err := execute(env, s, *storeFlag, runner.ExperimentOptions{})
	if id != 0 {
		html := strings.TrimSuffix(*out, filepath.Ext(*out)) + ".html"
		if html == *out {
			html = ""
		}
		var extra []string
		if html != "" {
			extra = append(extra, html)
		}
		if rerr := printAndWriteReport(env, storePath(env, *storeFlag), id, *out, "", extra...); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// printAndWriteReport prints the text report of experiment id and, when path
// is set, writes it to path too.
func printAndWriteReport(env Env, storeFile string, id int64, path, format string, more ...string) error {
	d, err := loadData(storeFile, id)
	if err != nil {
		return err
	}
	r := report.Build(d)
	fmt.Fprintln(env.Stdout)
	if err := report.WriteText(env.Stdout, r, report.TextOptions{Color: isTerminal(env.Stdout)}); err != nil {
		return err
	}
	if path == "" {
		return nil
	}
	if err := writeReportFile(d, r, path, format); err != nil {
		return err
	}
	abs, _ := filepath.Abs(path)
	fmt.Fprintf(env.Stdout, "\nReport written to %s\n", abs)
	for _, p := range more {
		if err := writeReportFile(d, r, p, ""); err != nil {
			return err
		}
		abs, _ := filepath.Abs(p)
		fmt.Fprintf(env.Stdout, "Report written to %s\n", abs)
	}
	return nil
}

func formatFor(path, format string) (string, error) {
	if format == "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".md", ".markdown":
			format = "markdown"
		case ".html", ".htm":
			format = "html"
		case ".json":
			format = "json"
		case ".csv":
			format = "csv"
		default:
			format = "text"
		}
	}
	switch format {
	case "text", "markdown", "html", "json", "csv":
		return format, nil
	}
	return "", usagef("flag --format: %q is not supported; want text, markdown, html, json or csv", format)
}

func writeReportFile(d *report.Data, r *report.Report, path, format string) error {
	format, err := formatFor(path, format)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report file: %w", err)
	}
	switch format {
	case "markdown":
		err = report.WriteMarkdown(f, r)
	case "html":
		err = report.WriteHTML(f, d, r)
	case "json":
		err = report.WriteJSON(f, d)
	case "csv":
		err = report.WriteCSV(f, d)
	case "csv-series":
		err = report.WriteSeriesCSV(f, d)
	default:
		err = report.WriteText(f, r, report.TextOptions{})
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}

func runReport(env Env, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	storeFlag := fs.String("store", "", "results database: a SQLite file or a postgres:// URL (default $BENCHLAB_STORE or ./"+store.DefaultPath+")")
	id := fs.Int64("experiment", 0, "experiment ID (default: the most recent)")
	format := fs.String("format", "", "text, markdown, html (one self-contained page with charts), json or csv (every result, machine-readable); default from the -o file name, else text")
	out := fs.String("o", "", "write to this file instead of standard output")
	color := fs.String("color", "auto", "terminal colours: auto, always or never")
	series := fs.Bool("series", false, "with csv: one line per 1-second interval instead of one per result")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.Stdout, "Usage: benchlab report [--experiment N] [--format text|markdown|html|json|csv [--series]] [-o file]")
			fs.SetOutput(env.Stdout)
			fs.PrintDefaults()
			return errHelp
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *id < 0 {
		return usagef("flag --experiment: %d is not allowed; want an ID from `benchlab runs`", *id)
	}
	f, err := formatFor(*out, *format)
	if err != nil {
		return err
	}
	*format = f
	if *series {
		if f != "csv" {
			return usagef("flag --series: only with --format csv (or -o file.csv); JSON holds the series already")
		}
		*format = "csv-series"
	}
	useColor := false
	switch *color {
	case "auto":
		useColor = *out == "" && isTerminal(env.Stdout)
	case "always":
		useColor = true
	case "never":
	default:
		return usagef("flag --color: %q is not allowed; want auto, always or never", *color)
	}
	d, err := loadData(storePath(env, *storeFlag), *id)
	if err != nil {
		return err
	}
	r := report.Build(d)
	if *out != "" {
		return writeReportFile(d, r, *out, *format)
	}
	switch *format {
	case "markdown":
		return report.WriteMarkdown(env.Stdout, r)
	case "html":
		return report.WriteHTML(env.Stdout, d, r)
	case "json":
		return report.WriteJSON(env.Stdout, d)
	case "csv":
		return report.WriteCSV(env.Stdout, d)
	case "csv-series":
		return report.WriteSeriesCSV(env.Stdout, d)
	}
	return report.WriteText(env.Stdout, r, report.TextOptions{Color: useColor})
}

func runRuns(env Env, args []string) error {
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	storeFlag := fs.String("store", "", "results database: a SQLite file or a postgres:// URL")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	path := storePath(env, *storeFlag)
	if err := storeExists(path); err != nil {
		return err
	}
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	exps, err := st.Experiments(ctx)
	if err != nil {
		return err
	}
	for _, e := range exps {
		fmt.Fprintf(env.Stdout, "experiment %d  %s  %s  preset=%s base=%s\n", e.ID, e.Created.Local().Format("2006-01-02 15:04:05"),
			e.Name, orNone(e.Preset), e.Base)
		runs, err := st.Runs(ctx, e.ID)
		if err != nil {
			return err
		}
		for _, r := range runs {
			fmt.Fprintf(env.Stdout, "  run %-4d %-20s %-8s %-10s repeat %d  %-11s %s\n", r.ID, r.Target, r.Engine,
				r.Version, r.Repeat, r.Status, r.Ended.Sub(r.Started).Round(1e9))
		}
	}
	return nil
}

func runList(env Env, args []string) error {
	w := env.Stdout
	fmt.Fprintln(w, "Engines:")
	for _, n := range engine.Names() {
		d, _ := engine.Lookup(n)
		fmt.Fprintf(w, "  %-10s %s\n", n, d.Summary())
		for _, s := range d.Settings() {
			fmt.Fprintf(w, "      %-20s %s (default %s)\n", s.Name, s.Doc, s.Default)
		}
	}
	fmt.Fprintln(w, "\nSuites and tests:")
	for _, n := range workload.Names() {
		s, _ := workload.Lookup(n)
		fmt.Fprintf(w, "  %-10s %s\n", n, s.Summary())
		group := ""
		for _, t := range s.Tests() {
			if t.Group != group {
				fmt.Fprintf(w, "    %s:\n", t.Group)
				group = t.Group
			}
			fmt.Fprintf(w, "      %-24s %s\n", t.Name, t.Summary)
		}
	}
	fmt.Fprintln(w, "\nPresets:")
	for _, p := range []string{"smoke", "credible", "cached", "io-bound"} {
		fmt.Fprintf(w, "  %-10s %s\n", p, spec.Presets[p])
	}
	fmt.Fprintf(w, "  %-10s %s\n", "(none)", "faithful defaults: METHOD.md durations (600 s reads, 900 s writes, 60 s scan warm-up)")
	return nil
}

// storeExists checks that a results file exists before a command that only
// reads it opens it (which would create it); a PostgreSQL store is checked
// by connecting.
func storeExists(path string) error {
	if store.IsPostgres(path) {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return usagef("no results database at %s (run an experiment first, or give --store)", path)
	}
	return nil
}

// loadData reads experiment id (0: the most recent) with its runs, results
// and intervals from the results database at path. A missing file or
// experiment is a usage error.
func loadData(path string, id int64) (*report.Data, error) {
	if err := storeExists(path); err != nil {
		return nil, err
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	d, err := report.Load(context.Background(), st, id, true)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usagef("%v", err)
	}
	return d, err
}
