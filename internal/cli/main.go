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

	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Exit codes.
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
	Getenv         func(string) string
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
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Exit: os.Exit, OutputLost: lost}
}

// usageError is a bad flag or argument; it exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

type command struct {
	name, summary string
	run           func(env Env, args []string) error
}

func commands() []command {
	return []command{
		{"quickstart", "run the sysbench suite on two SQLite configurations (smoke preset) and write a report", runQuickstart},
		{"run", "run an experiment from a spec file and/or flags", runRun},
		{"rerun", "run a stored experiment again from its stored spec and seed", runRerun},
		{"report", "print or write the report of a stored experiment", runReport},
		{"compare", "judge targets against the base with significance tests; gate on regressions", runCompare},
		{"runs", "list stored experiments and runs", runRuns},
		{"copy", "copy stored experiments into another results database (a lab's shared PostgreSQL store)", runCopy},
		{"list", "list engines, suites and tests", runList},
		{"install", "fetch a PostgreSQL or MariaDB release from Maven Central into the versions dir", runInstall},
		{"versions", "list the installed server versions", runVersions},
		{"version", "print benchlab's version", runVersion},
	}
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
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.Stdout)
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(env, c.name, c.run(env, args[1:]))
		}
	}
	fmt.Fprintf(env.Stderr, "benchlab: unknown command %q; run `benchlab help` for the list\n", args[0])
	return ExitUsage
}

func exitCode(env Env, cmd string, err error) int {
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	switch {
	case errors.Is(err, errHelp):
		return ExitOK
	case errors.As(err, &ue), spec.IsInvalid(err):
		fmt.Fprintf(env.Stderr, "benchlab %s: %v\n", cmd, err)
		return ExitUsage
	case errors.Is(err, errRegression):
		fmt.Fprintf(env.Stderr, "benchlab %s: %v\n", cmd, err)
		return ExitRegression
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(env.Stderr, "benchlab %s: interrupted; the results measured so far are stored\n", cmd)
		return ExitInterrupted
	}
	fmt.Fprintf(env.Stderr, "benchlab %s: %v\n", cmd, err)
	return ExitFailure
}

var (
	errHelp        = errors.New("help shown")
	errInterrupted = errors.New("interrupted")
)

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "benchlab %s: find database performance regressions\n\nUsage: benchlab <command> [flags]\n\nCommands:\n", Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `benchlab <command> --help` for a command's flags.")
}

func runVersion(env Env, args []string) error {
	b := buildInfo()
	fmt.Fprintf(env.Stdout, "benchlab %s (commit %s, %s)\n", b.Version, b.Commit, b.GoVersion)
	return nil
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
