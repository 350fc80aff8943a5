// Package cli is benchlab's command line: it parses flags, binds them to a
// spec, and calls the runner, store and report packages. It holds no
// benchmark logic of its own.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Exit codes. ExitFailure is also a failed run: a target that failed to
// start or load, lost or hung its server, or failed a test's error policy
// (workload.max_error_rate), so a script can tell a failing target from a
// measured one without reading the store.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitRegression  = 3
	ExitInterrupted = 130
)

// Version is benchlab's release version.
const Version = "0.1.0-dev"

// commit is set at build time with -ldflags "-X benchlab/internal/cli.commit=...".
var commit string

// Env is what a command may touch of the outside world, so that tests can run
// commands in-process.
type Env struct {
	Stdout, Stderr io.Writer
	// Stdin is read to confirm a long run when it and Stdout are a
	// terminal; nil never asks.
	Stdin  io.Reader
	Getenv func(string) string
	// Signals delivers interrupt requests; nil means SIGINT and SIGTERM.
	Signals <-chan os.Signal
	// Exit ends the process at once (a second Ctrl-C); nil means os.Exit.
	Exit func(int)
	// OutputLost delivers SIGPIPE and SIGHUP: the output was closed (benchlab
	// run | head) or the terminal went away. A run then stops as one
	// interrupt stops it. Nil watches nothing.
	OutputLost <-chan os.Signal
}

// OSEnv returns the environment of the real process. It takes SIGPIPE and
// SIGHUP for the rest of the process's life, so that a write to a closed
// output fails instead of killing benchlab before it cleans up.
func OSEnv() Env {
	lost := make(chan os.Signal, 1)
	signal.Notify(lost, syscall.SIGPIPE, syscall.SIGHUP)
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Getenv: os.Getenv, Exit: os.Exit, OutputLost: lost}
}

// usageError is a bad flag or argument; it exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// cmdError marks an error returned by a command's body, as opposed to one
// from parsing its flags and arguments (always a usage error).
type cmdError struct{ err error }

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// body adapts a command's function to cobra, tagging its errors as the
// command's own.
func body(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			return &cmdError{err}
		}
		return nil
	}
}

// newRoot builds the command tree for one call of Main; commands reach the
// injected environment through env.
func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "benchlab",
		Short:         "find database performance regressions",
		Long:          "benchlab " + Version + ": find database performance regressions.\n\nRuns benchmark experiments against database engines, stores every run, and reports the differences.",
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetVersionTemplate("benchlab {{.Version}}\n")
	// Flag help wraps at the terminal width the rest of the output keeps.
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(lineWidth) })
	root.SetUsageTemplate(strings.NewReplacer(".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags").Replace(root.UsageTemplate()))
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.HiddenDefaultCmd = false
	root.AddCommand(
		newQuickstartCmd(env),
		newPlanCmd(env),
		newRunCmd(env),
		newRerunCmd(env),
		newImportCmd(env),
		newReportCmd(env),
		newCompareCmd(env),
		newHistoryCmd(env),
		newCalibrateCmd(env),
		newRunsCmd(env),
		newCopyCmd(env),
		newQueueCmd(env),
		newWorkerCmd(env),
		newJobsCmd(env),
		newCancelCmd(env),
		newListCmd(env),
		newInstallCmd(env),
		newVersionsCmd(env),
		newVersionCmd(env),
	)
	for _, c := range root.Commands() {
		// Every command answers --version, as the root does.
		c.Version = root.Version
	}
	return root
}

// Main runs the command line args (without the program name) and returns the
// process exit code.
func Main(env Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Exit == nil {
		env.Exit = os.Exit
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if len(args) > 0 && args[0] == ferretdb.ServeCommand {
		// Not a command of the help: benchlab re-executed as the FerretDB
		// server of a ferretdb target.
		return ferretdb.Serve(args[1:], env.Stderr)
	}
	root := newRoot(env)
	root.SetArgs(longFlagsCompat(root, args))
	cmd, err := root.ExecuteC()
	name := "benchlab"
	if cmd != nil && cmd != root {
		name = "benchlab " + cmd.Name()
	}
	var ce *cmdError
	if err != nil && !errors.As(err, &ce) {
		// Flags, arguments and unknown commands.
		msg := err.Error()
		if !strings.Contains(msg, "benchlab") && cmd != nil {
			msg += fmt.Sprintf("; run `%s --help`", cmd.CommandPath())
		}
		printError(env.Stderr, name, msg)
		return ExitUsage
	}
	if ce != nil {
		err = ce.err
	}
	return exitCode(env, name, err)
}

// longFlagsCompat rewrites the single-dash long flags of Go's flag package
// (-threads 2), which earlier benchlab versions took, to their GNU form
// (--threads 2), when the name is a long flag of the command being run.
func longFlagsCompat(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && cmd.Flags().Lookup(name) != nil {
				out[i] = "-" + a
			}
		}
	}
	return out
}

// flagError turns pflag's errors into usage errors and adds the nearest flag
// name to an unknown one ("did you mean --threads?").
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if s := nearestFlag(cmd, name); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return usagef("%s", msg)
}

// nearestFlag returns the command's flag name closest to name (at most two
// edits away, or a prefix of it), or "".
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && d > 1 {
			d = 1
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func exitCode(env Env, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue), spec.IsInvalid(err), errors.Is(err, store.ErrNotStore), errors.Is(err, store.ErrCorrupt):
		printError(env.Stderr, name, err.Error())
		return ExitUsage
	case errors.Is(err, errRegression):
		printError(env.Stderr, name, err.Error())
		return ExitRegression
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(env.Stderr, "%s: interrupted; the results measured so far are stored\n", name)
		return ExitInterrupted
	}
	printError(env.Stderr, name, err.Error())
	return ExitFailure
}

var errInterrupted = errors.New("interrupted")

// noArgs refuses positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q; %s takes flags only", args[0], cmd.CommandPath())
	}
	return nil
}

// storeFlagDoc is the help of every --store flag.
const storeFlagDoc = "results database: a SQLite file or a postgres:// URL (default $BENCHLAB_STORE or ./" + store.DefaultPath + ")"

// addStoreFlag adds the --store flag every command that reads or writes
// results has.
func addStoreFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "store", "", storeFlagDoc)
}

// addColorFlag adds --color: auto (a terminal and no NO_COLOR), always or never.
func addColorFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "color", "auto", "terminal colours: auto, always or never")
}

// useColor decides colours for output to w from a --color value; auto
// means a terminal and no NO_COLOR in the environment.
func useColor(env Env, w io.Writer, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "auto":
		return isTerminal(w) && env.Getenv("NO_COLOR") == "", nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, usagef("flag --color: %q is not allowed; want auto, always or never", v)
}

func newVersionCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print benchlab's version",
		Args:  noArgs,
		RunE: body(func(*cobra.Command, []string) error {
			fmt.Fprintf(env.Stdout, "benchlab %s\n", versionLine())
			return nil
		}),
	}
}

func versionLine() string {
	b := buildInfo()
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}

func buildInfo() store.BuildInfo {
	b := store.BuildInfo{Version: Version, Commit: commit, GoVersion: runtime.Version()}
	if b.Commit == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					b.Commit = s.Value
				}
			}
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// storePath picks the results database: the flag, then BENCHLAB_STORE, then
// the default file in the current directory.
func storePath(env Env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := strings.TrimSpace(env.Getenv("BENCHLAB_STORE")); v != "" {
		return v
	}
	return store.DefaultPath
}
