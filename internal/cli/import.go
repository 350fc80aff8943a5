package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"benchlab/internal/importer"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// importFlags are the flags of `benchlab import`.
type importFlags struct {
	tool, engine, test, name, base, store string
	targets                               []string
	threads                               int
	sequence                              bool
}

func newImportCmd(env Env) *cobra.Command {
	f := &importFlags{}
	cmd := &cobra.Command{
		Use:   "import --tool sysbench|dbbench|pgbench|fio --target NAME=FILE[,FILE...] [--target NAME=...]...",
		Short: "store other tools' output files (sysbench, db_bench, pgbench, fio JSON) as an experiment, one run per file",
		Long: "Reads output files of sysbench 1.0.20 or RocksDB's db_bench and stores them as one experiment:\n" +
			"each --target NAME=FILE,FILE,... is a target, each file one run of it (several files: repeats),\n" +
			"so that report, compare and the exports work on them as on benchlab's own runs.\n" +
			"With one target, the files may follow as arguments: --target pg15 a.txt b.txt.\n" +
			"A file may be a pattern, expanded in name order: --target pg15='pg15.*.txt'.\n" +
			"A sysbench file's test is --test, or its file name without extension and repeat number\n" +
			"(point-query.2.txt: point-query); db_bench's results are named by their benchmarks.",
		Example: "  benchlab import --tool sysbench --target pg15=ps.1.txt,ps.2.txt --target pg16=ps16.1.txt,ps16.2.txt --test point-query\n" +
			"  benchlab import --tool dbbench --target v7.8=a.log,b.log --target v8.0=c.log,d.log",
		RunE: body(func(_ *cobra.Command, args []string) error { return runImport(env, f, args) }),
	}
	fs := cmd.Flags()
	fs.StringVar(&f.tool, "tool", "", "the tool whose output the files hold: sysbench, dbbench, pgbench or fio (its JSON)")
	fs.StringArrayVar(&f.targets, "target", nil, "a target and its files, NAME=FILE[,FILE...] (a FILE may be a pattern: 'pg15.*.txt'); repeat for each target (the first is the base)")
	fs.StringVar(&f.base, "base", "", "the target the others are compared with (default: the first)")
	fs.StringVar(&f.engine, "engine", "", "the engine every target ran (postgres, mariadb, ...; default db_bench for dbbench files, none for sysbench)")
	fs.StringVar(&f.test, "test", "", "sysbench, pgbench, fio: the test every file ran (default: from each file's name)")
	fs.IntVar(&f.threads, "threads", 0, "the thread count the files ran; db_bench does not print it (default: the threads of its interval reports, else 1); a sysbench file that disagrees is refused")
	fs.BoolVar(&f.sequence, "sequence", false, "the targets are releases in order: report and compare locate where along them each metric changed")
	fs.StringVar(&f.name, "experiment-name", "", "the experiment's name (default: \"import <tool>\")")
	addStoreFlag(fs, &f.store)
	return cmd
}

// targetNameRE is what a target's name may hold, as in a spec.
var targetNameRE = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

// parseImportTargets reads the --target flags and the file arguments.
func parseImportTargets(flags, args []string) ([]importer.Target, error) {
	if len(flags) == 0 {
		return nil, usagef("flag --target: missing; want --target NAME=FILE[,FILE...] for each target")
	}
	var out []importer.Target
	for _, v := range flags {
		name, list, hasFiles := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !targetNameRE.MatchString(name) {
			return nil, usagef("flag --target: %q; want NAME=FILE[,FILE...] with a name of letters, digits and . _ + -", v)
		}
		t := importer.Target{Name: name}
		if hasFiles {
			for _, f := range strings.Split(list, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				if !strings.ContainsAny(f, "*?[") {
					t.Files = append(t.Files, f)
					continue
				}
				// A pattern the shell did not expand (it is inside the
				// flag's value): its matches, in name order.
				m, err := filepath.Glob(f)
				if err != nil || len(m) == 0 {
					return nil, usagef("flag --target: %q matches no file; want NAME=FILE[,FILE...], a pattern matching files", v)
				}
				t.Files = append(t.Files, m...)
			}
			if len(t.Files) == 0 {
				return nil, usagef("flag --target: %q lists no file; want NAME=FILE[,FILE...]", v)
			}
		}
		if slices.ContainsFunc(out, func(o importer.Target) bool { return o.Name == name }) {
			return nil, usagef("flag --target: target %q given twice; list all its files in one --target %s=FILE,FILE", name, name)
		}
		out = append(out, t)
	}
	if len(args) > 0 {
		if len(out) != 1 || len(out[0].Files) > 0 {
			return nil, usagef("argument %q: files as arguments belong to the one --target NAME without '='; "+
				"with several targets, give each its files: --target NAME=FILE,FILE", args[0])
		}
		out[0].Files = args
	}
	for _, t := range out {
		if len(t.Files) == 0 {
			return nil, usagef("flag --target: target %q has no file; want --target %s=FILE[,FILE...]", t.Name, t.Name)
		}
	}
	return out, nil
}

func runImport(env Env, f *importFlags, args []string) error {
	if f.tool == "" {
		return usagef("flag --tool: missing; want sysbench, dbbench, pgbench or fio")
	}
	tool, ok := importer.LookupTool(f.tool)
	if !ok {
		return usagef("flag --tool: %q is not a tool benchlab imports; want sysbench, dbbench, pgbench or fio", f.tool)
	}
	if f.threads < 0 || f.threads > spec.MaxThreads {
		return usagef("flag --threads: %d is not allowed; want the thread count the files ran, 1 to %d", f.threads, spec.MaxThreads)
	}
	if f.test != "" && tool == importer.DBBench {
		return usagef("flag --test: db_bench's results are named by their benchmarks; --test is for sysbench files")
	}
	targets, err := parseImportTargets(f.targets, args)
	if err != nil {
		return err
	}
	base := f.base
	if base == "" {
		base = targets[0].Name
	} else if !slices.ContainsFunc(targets, func(t importer.Target) bool { return t.Name == base }) {
		return usagef("flag --base: %q is not a target; want one of %s", base, strings.Join(targetNames(targets), ", "))
	}
	engine := f.engine
	if engine == "" && tool == importer.DBBench {
		engine = "db_bench"
	}
	now := time.Now().UTC()
	var runs []importer.Run
	files := map[string]string{} // sha256 -> file
	for _, t := range targets {
		for _, file := range t.Files {
			r, err := readImport(tool, file, importer.Options{Test: f.test, Threads: f.threads}, now)
			if err != nil {
				return err
			}
			if first, dup := files[r.Source.SHA256]; dup {
				return usagef("%s: the same bytes as %s; each file must be a run of its own", file, first)
			}
			files[r.Source.SHA256] = file
			r.Target = t.Name
			runs = append(runs, r)
		}
	}
	if err := importer.CheckCells(runs, targets); err != nil {
		return usagef("%v", err)
	}
	name := f.name
	if name == "" {
		name = "import " + tool
	}
	st, err := store.Open(storePath(env, f.store))
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := importer.Store(context.Background(), st, importer.Experiment{Name: name, Tool: tool, Engine: engine,
		Base: base, Sequence: f.sequence, Targets: targets, Runs: runs, Benchlab: buildInfo()})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "benchlab: imported %d %s file(s) as experiment %d (%s): %s; base %s\n", len(runs), tool, id, name,
		importSummary(targets), base)
	fmt.Fprintf(env.Stdout, "benchlab: `benchlab report --experiment %d` and `benchlab compare --experiment %d` read it\n", id, id)
	return nil
}

// readImport reads and parses one file.
func readImport(tool, file string, o importer.Options, now time.Time) (importer.Run, error) {
	data, err := readImportFile(tool, file)
	if err != nil {
		return importer.Run{}, err
	}
	out, err := importer.Parse(tool, file, data, o)
	if err != nil {
		var ie *importer.Error
		if errors.As(err, &ie) {
			return importer.Run{}, usagef("%v", err)
		}
		return importer.Run{}, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	sum := sha256.Sum256(data)
	return importer.Run{Out: out, Source: store.ImportSource{Tool: tool, File: abs, SHA256: hex.EncodeToString(sum[:]),
		ToolVersion: out.Version, Imported: now}}, nil
}

// readImportFile reads one file through importer.ReadInput: at most
// importer.MaxInputBytes, and none of a binary file past its first NUL.
func readImportFile(tool, file string) ([]byte, error) {
	fh, err := os.Open(file)
	if err != nil {
		// Missing, unreadable: the argument is wrong.
		return nil, usagef("%v; want a file of %s output", err, tool)
	}
	defer fh.Close()
	data, err := importer.ReadInput(file, tool, fh)
	var ie *importer.Error
	switch {
	case errors.As(err, &ie):
		return nil, usagef("%v", err)
	case err != nil:
		// A directory reads as an error too: the argument is wrong.
		return nil, usagef("%v; want a file of %s output", err, tool)
	}
	return data, nil
}

func targetNames(ts []importer.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// importSummary says how many runs each target has: "pg15 x2, pg16 x2".
func importSummary(ts []importer.Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s x%d", t.Name, len(t.Files))
	}
	return strings.Join(parts, ", ")
}
