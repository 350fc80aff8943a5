package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/store"
)

// reportOut is where a command that runs an experiment writes its report:
// the terminal (with colours per --color) and optionally a file.
type reportOut struct {
	path, format, color string
	// more are further files, each in the format of its name.
	more []string
}

// addReportOutFlags adds -o/--output, --format and --color.
func addReportOutFlags(fs *pflag.FlagSet, out, format, color *string) {
	fs.StringVarP(out, "output", "o", "", "also write the report to this file")
	fs.StringVar(format, "format", "", "format of the -o file: text, markdown, html, json or csv (default from the file name)")
	addColorFlag(fs, color)
}

// check validates the flags before anything runs: the format, the colour,
// and that the report file can be created.
func (ro reportOut) check() error {
	if ro.format != "" && ro.path == "" {
		return usagef("flag --format: sets the format of the -o file; give -o FILE too (or use `benchlab report --format %s` afterwards)", ro.format)
	}
	if _, err := useColor(Env{Getenv: func(string) string { return "" }}, io.Discard, ro.color); err != nil {
		return err
	}
	for _, p := range append([]string{ro.path}, ro.more...) {
		if p == "" {
			continue
		}
		if _, err := formatFor(p, ro.format); err != nil {
			return err
		}
		if err := checkWritable("-o", p); err != nil {
			return err
		}
	}
	return nil
}

// printAndWriteReport prints the text report of experiment id and, when
// ro.path is set, writes it there too.
func printAndWriteReport(env Env, storeFile string, id int64, ro reportOut) error {
	d, err := loadData(env, storeFile, id)
	if err != nil {
		return err
	}
	r := report.Build(d)
	fmt.Fprintln(env.Stdout)
	color, err := useColor(env, env.Stdout, ro.color)
	if err != nil {
		return err
	}
	if err := report.WriteText(env.Stdout, r, report.TextOptions{Color: color}); err != nil {
		return err
	}
	if ro.path == "" {
		return nil
	}
	if err := writeReportFile(d, r, ro.path, ro.format); err != nil {
		return err
	}
	abs, _ := filepath.Abs(ro.path)
	fmt.Fprintf(env.Stdout, "\nReport written to %s\n", abs)
	for _, p := range ro.more {
		if err := writeReportFile(d, r, p, ""); err != nil {
			return err
		}
		abs, _ := filepath.Abs(p)
		fmt.Fprintf(env.Stdout, "Report written to %s\n", abs)
	}
	return nil
}

// checkWritable checks that a file can be created at path, without leaving
// one behind: its directory exists, is a directory and is writable.
func checkWritable(flagName, path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return usagef("flag %s: directory %s of %s does not exist", flagName, dir, path)
	}
	if !fi.IsDir() {
		return usagef("flag %s: %s is not a directory (in %s)", flagName, dir, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("flag %s: %s is a directory; want a file name", flagName, path)
	}
	f, err := os.CreateTemp(dir, ".benchlab-writable-*")
	if err != nil {
		return usagef("flag %s: directory %s is not writable: %v", flagName, dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
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
		case ".parquet":
			format = "parquet"
		case ".prom":
			format = "prometheus"
		case ".hlog", ".hdr":
			format = "hdr"
		default:
			format = "text"
		}
	}
	format = strings.ToLower(format)
	switch format {
	case "text", "markdown", "html", "json", "csv", "prometheus", "hdr", "hdr-percentiles":
		return format, nil
	case "md":
		return "markdown", nil
	case "openmetrics", "prom":
		return "prometheus", nil
	case "parquet":
		return "", usagef("flag --format: Parquet is not supported (benchlab has no Parquet writer); want text, markdown, html, json or csv")
	}
	return "", usagef("flag --format: %q is not supported; want text, markdown, html, json, csv, prometheus, hdr or hdr-percentiles", format)
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
	case "text":
		err = report.WriteText(f, r, report.TextOptions{})
	default:
		err = writeFormat(f, format, []*report.Data{d}, false)
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
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// reportFlags are the flags of `benchlab report`.
type reportFlags struct {
	store, format, out, color, name string
	id                              int64
	series, engineSeries, all       bool
	// folded, test, target and threads are --folded and the step it takes.
	folded, test, target string
	threads              int
}

func newReportCmd(env Env) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report [--experiment N | --all | --name GLOB] [--format FORMAT [--series]] [-o file]",
		Short: "print or write the report of a stored experiment, or export results for other tools",
		Long: "Prints or writes the report of a stored experiment (text, markdown, html), or exports results\n" +
			"for other tools: json and csv (every result; --series: one line per second with its wall-clock time;\n" +
			"--engine-series: one line per second of each engine counter or gauge),\n" +
			"prometheus (OpenMetrics/Prometheus text of each result's summary), hdr (HdrHistogram interval log of\n" +
			"each result's latency histogram) and hdr-percentiles (HdrHistogram percentile distributions).\n" +
			"Exports take --all or --name to cover several experiments. Format names are case-insensitive;\n" +
			"Parquet is not supported.",
		Example: "  benchlab report --all --format csv -o all.csv\n  benchlab report --format prometheus -o benchlab.prom\n" +
			"  benchlab report --format hdr -o latency.hlog\n  benchlab report --folded pq.folded --test point-query --target v2",
		Args: noArgs,
		RunE: body(func(*cobra.Command, []string) error { return runReport(env, f) }),
	}
	fs := cmd.Flags()
	addStoreFlag(fs, &f.store)
	fs.Int64Var(&f.id, "experiment", 0, "experiment ID (default: the most recent)")
	fs.BoolVar(&f.all, "all", false, "exports: every stored experiment")
	fs.StringVar(&f.name, "name", "", "exports: the experiments whose name matches this glob (e.g. 'sqlite-*')")
	fs.StringVar(&f.format, "format", "", "text, markdown, html, json, csv, prometheus, hdr or hdr-percentiles; default from the -o file name, else text")
	fs.StringVarP(&f.out, "output", "o", "", "write to this file instead of standard output")
	addColorFlag(fs, &f.color)
	fs.BoolVar(&f.series, "series", false, "with csv: one line per 1-second interval (with its wall-clock time) instead of one per result")
	fs.BoolVar(&f.engineSeries, "engine-series", false, "with csv: one line per second of each engine counter or gauge (engine internals per second) instead of one per result")
	fs.StringVar(&f.folded, "folded", "", "write the CPU profile (run --profile) of one test as folded stacks to this file (- for standard output), summed over its repeats, for flame graph tools; with --test")
	fs.StringVar(&f.test, "test", "", "with --folded: the test")
	fs.StringVar(&f.target, "target", "", "with --folded: the target (default: the base)")
	fs.IntVar(&f.threads, "threads", 0, "with --folded: the thread count, when the test ran with several")
	return cmd
}

// multiFormats are the formats that can hold several experiments.
var multiFormats = map[string]bool{"json": true, "csv": true, "csv-series": true, "csv-engine": true, "prometheus": true, "hdr": true, "hdr-percentiles": true}

func runReport(env Env, f *reportFlags) error {
	if f.id < 0 {
		return usagef("flag --experiment: %d is not allowed; want an ID from `benchlab runs`", f.id)
	}
	if f.folded != "" || f.test != "" || f.target != "" || f.threads != 0 {
		return writeFolded(env, f)
	}
	format, err := formatFor(f.out, f.format)
	if err != nil {
		return err
	}
	if f.series {
		if format != "csv" {
			return usagef("flag --series: only with --format csv (or -o file.csv); JSON holds the series already")
		}
		format = "csv-series"
	}
	if f.engineSeries {
		if format != "csv" || f.series {
			return usagef("flag --engine-series: only with --format csv (or -o file.csv), without --series; JSON holds the engine series already")
		}
		format = "csv-engine"
	}
	many := f.all || f.name != ""
	if many && f.id != 0 {
		return usagef("flag --experiment: give one experiment or --all/--name, not both")
	}
	if many && !multiFormats[format] {
		return usagef("flag --all/--name: for the exports (json, csv, prometheus, hdr, hdr-percentiles); %s reports one experiment", format)
	}
	if f.name != "" {
		if _, err := path.Match(f.name, ""); err != nil {
			return usagef("flag --name: %q is not a glob pattern: %v", f.name, err)
		}
	}
	colored, err := useColor(env, env.Stdout, f.color)
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := checkWritable("-o", f.out); err != nil {
			return err
		}
		colored = false
	}
	var ds []*report.Data
	if many {
		if ds, err = loadMany(env, storePath(env, f.store), f.name); err != nil {
			return err
		}
	} else {
		d, err := loadData(env, storePath(env, f.store), f.id)
		if err != nil {
			return err
		}
		ds = []*report.Data{d}
	}
	w := env.Stdout
	var file *os.File
	if f.out != "" {
		if file, err = os.Create(f.out); err != nil {
			return fmt.Errorf("report file: %w", err)
		}
		w = file
	}
	err = writeFormat(w, format, ds, colored)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// writeFolded writes one test's folded stacks (report --folded).
func writeFolded(env Env, f *reportFlags) error {
	switch {
	case f.folded == "":
		return usagef("flags --test, --target and --threads: only with --folded FILE")
	case f.test == "":
		return usagef("flag --folded: give the test with --test (e.g. --test point-query)")
	case f.all || f.name != "" || f.out != "" || f.format != "" || f.series || f.engineSeries:
		return usagef("flag --folded: writes one test's stacks; not with --all, --name, -o, --format, --series or --engine-series")
	case f.threads < 0:
		return usagef("flag --threads: %d is not allowed; want a thread count >= 1", f.threads)
	}
	d, err := loadData(env, storePath(env, f.store), f.id)
	if err != nil {
		return err
	}
	text, _, err := report.Folded(d, f.test, f.target, f.threads)
	if err != nil {
		return usagef("flag --folded: %v", err)
	}
	if f.folded == "-" {
		_, err = env.Stdout.Write(text)
		return err
	}
	if err := os.WriteFile(f.folded, text, 0o644); err != nil {
		return fmt.Errorf("folded stacks: %w", err)
	}
	return nil
}

// loadMany loads every stored experiment whose name matches the glob
// (every one when it is empty), oldest first.
func loadMany(env Env, storeFile, glob string) ([]*report.Data, error) {
	st, err := openExisting(env, storeFile)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ctx := context.Background()
	if err := learnBeforeReport(ctx, st); err != nil {
		return nil, err
	}
	exps, err := st.Experiments(ctx)
	if err != nil {
		return nil, err
	}
	var ds []*report.Data
	for i := len(exps) - 1; i >= 0; i-- {
		e := exps[i]
		if ok, _ := path.Match(glob, e.Name); glob != "" && !ok {
			continue
		}
		d, err := report.Load(ctx, st, e.ID, true)
		if err != nil {
			return nil, fmt.Errorf("experiment %d: %w", e.ID, err)
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return nil, usagef("flag --name: no stored experiment matches %q (see `benchlab runs`)", glob)
	}
	return ds, nil
}

// writeFormat writes experiments ds in format; the reports (text,
// markdown, html) take one experiment.
func writeFormat(w io.Writer, format string, ds []*report.Data, color bool) error {
	switch format {
	case "json":
		if len(ds) == 1 {
			return report.WriteJSON(w, ds[0])
		}
		return writeJSONMany(w, ds)
	case "csv", "csv-series", "csv-engine":
		write := map[string]func(io.Writer, *report.Data) error{"csv": report.WriteCSV, "csv-series": report.WriteSeriesCSV,
			"csv-engine": report.WriteEngineSeriesCSV}[format]
		for i, d := range ds {
			var b bytes.Buffer
			if err := write(&b, d); err != nil {
				return err
			}
			out := b.Bytes()
			if i > 0 { // one header for all experiments
				if nl := bytes.IndexByte(out, '\n'); nl >= 0 {
					out = out[nl+1:]
				}
			}
			if _, err := w.Write(out); err != nil {
				return err
			}
		}
		return nil
	case "prometheus":
		return report.WritePrometheus(w, ds)
	case "hdr":
		return report.WriteHDRLog(w, ds)
	case "hdr-percentiles":
		return report.WriteHDRPercentiles(w, ds)
	}
	d := ds[0]
	r := report.Build(d)
	switch format {
	case "markdown":
		return report.WriteMarkdown(w, r)
	case "html":
		return report.WriteHTML(w, d, r)
	}
	return report.WriteText(w, r, report.TextOptions{Color: color})
}

// writeJSONMany writes several experiments' JSON documents as one:
// {"experiments": [doc, ...]}.
func writeJSONMany(w io.Writer, ds []*report.Data) error {
	docs := make([]json.RawMessage, len(ds))
	for i, d := range ds {
		var b bytes.Buffer
		if err := report.WriteJSON(&b, d); err != nil {
			return err
		}
		docs[i] = bytes.TrimSpace(b.Bytes())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Experiments []json.RawMessage `json:"experiments"`
	}{docs})
}

// openExisting opens the results database at path for a command that only
// reads it: a missing results file is a usage error, not a new empty file
// (which opening would create); a PostgreSQL store is checked by connecting.
// A journal that opening stored is named on env.Stderr.
func openExisting(env Env, path string) (*store.Store, error) {
	if !store.IsPostgres(path) {
		if _, err := os.Stat(path); err != nil {
			return nil, usagef("no results database at %s (run an experiment first, or give --store)", path)
		}
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	printReplayed(env, st)
	return st, nil
}

// learnBeforeReport teaches the noise model the experiments it has not
// learned (stored before the model existed, or by a benchlab that did not
// learn on import), as an explicit step before the report: report.Load
// only reads. A store with nothing to learn is not written to, so a
// read-only store reports.
func learnBeforeReport(ctx context.Context, st *store.Store) error {
	if err := noise.Backfill(ctx, st); err != nil {
		return fmt.Errorf("learn the noise history of %s before the report: %w", st.Path(), err)
	}
	return nil
}

// loadData reads experiment id (0: the most recent) with its runs, results
// and intervals from the results database at path. A missing file or
// experiment is a usage error.
func loadData(env Env, path string, id int64) (*report.Data, error) {
	st, err := openExisting(env, path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := learnBeforeReport(context.Background(), st); err != nil {
		return nil, err
	}
	d, err := report.Load(context.Background(), st, id, true)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usagef("%v", err)
	}
	return d, err
}
