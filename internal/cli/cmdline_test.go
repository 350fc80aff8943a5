package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpOfEveryCommand asks every command for --help (and -h, and `help
// CMD`): each exits 0 and prints its usage line and flags on stdout.
func TestHelpOfEveryCommand(t *testing.T) {
	root := newRoot(Env{})
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	if len(names) < 11 {
		t.Fatalf("only %d commands: %v", len(names), names)
	}
	names = append(names, "completion", "help")
	for _, name := range names {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			code, out, stderr := run(t, Env{}, args...)
			if code != ExitOK || !strings.Contains(out, "Usage:") || !strings.Contains(out, "benchlab "+name) ||
				!strings.Contains(out, "--help") || stderr != "" {
				t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
			}
		}
	}
	// The commands under commands (completion bash, ...) too.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden {
				continue
			}
			path := strings.Fields(sub.CommandPath())[1:]
			code, out, stderr := run(t, Env{}, append(path, "--help")...)
			if code != ExitOK || !strings.Contains(out, "Usage:") || !strings.Contains(out, sub.CommandPath()) || stderr != "" {
				t.Errorf("%v --help: exit %d\n%s\n%s", path, code, out, stderr)
			}
			walk(sub)
		}
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
	// GNU-style flags as users type them, never Go's single-dash form.
	_, out, _ := run(t, Env{}, "run", "--help")
	for _, w := range []string{"--threads string", "--store string", "-o, --output", "--color", "tpcc", "custom",
		"Options of the tpcc suite:\n      --isolation", "      --max-tries", "      --warehouses", "Options of the insert suite:", "Connection to a running server",
		"--pgsql-host", "--mysql-port", "--rate float", "--events int", "--percentile", "--rand-type", "--warmup-time"} {
		if !strings.Contains(out, w) {
			t.Errorf("run --help lacks %q", w)
		}
	}
	if strings.Contains(out, "  -threads") {
		t.Errorf("run --help shows a single-dash long flag:\n%s", out)
	}
	for _, args := range [][]string{{}, {"help"}, {"--help"}} {
		code, out, _ := run(t, Env{}, args...)
		if code != ExitOK || !strings.Contains(out, "compare") || !strings.Contains(out, "completion") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
}

// TestVersionFlag checks --version on the root and on a command, and the
// version command.
func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"run", "--version"}, {"version"}, {"compare", "--version"}} {
		code, out, _ := run(t, Env{}, args...)
		if code != ExitOK || !strings.HasPrefix(out, "benchlab "+Version+" (commit ") {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
}

// TestDidYouMean checks that a mistyped command or flag exits 2 and names
// the nearest one.
func TestDidYouMean(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"comapre"}, "compare"},
		{[]string{"rnu"}, "run"},
		{[]string{"run", "--engine", "sqlite", "--thread", "2"}, "did you mean --threads?"},
		{[]string{"report", "--formt", "json"}, "did you mean --format?"},
		{[]string{"compare", "--experimnt", "1"}, "did you mean --experiment?"},
	}
	for _, c := range cases {
		code, out, stderr := run(t, Env{}, c.args...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) || out != "" {
			t.Errorf("%v: exit %d stderr %q stdout %q, want %d naming %q", c.args, code, stderr, out, ExitUsage, c.want)
		}
	}
}

// TestSingleDashLongFlags checks that Go-style flags (-threads) of earlier
// versions still parse, as their GNU form.
func TestSingleDashLongFlags(t *testing.T) {
	code, _, stderr := run(t, Env{}, "run", "-engine", "sqlite", "-threads", "x", "--store", filepath.Join(t.TempDir(), "r.db"))
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "--threads") || !strings.Contains(unwrap(stderr), `"x"`) {
		t.Errorf("exit %d %q: want the --threads value error, not an unknown flag", code, stderr)
	}
}

// TestCompletion generates every shell's completion script and asks the
// hidden completion command for run's flags.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, _ := run(t, Env{}, "completion", sh)
		if code != ExitOK || !strings.Contains(out, "benchlab") || len(out) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(out))
		}
	}
	code, out, _ := run(t, Env{}, "__complete", "run", "--thr")
	if code != ExitOK || !strings.Contains(out, "--threads") {
		t.Errorf("__complete run --thr: exit %d %q", code, out)
	}
	code, out, _ = run(t, Env{}, "__complete", "com")
	if code != ExitOK || !strings.Contains(out, "compare") {
		t.Errorf("__complete com: exit %d %q", code, out)
	}
}

// TestConsistentFlags checks that every command reading or writing results
// takes --store, and those printing reports --format and --color.
func TestConsistentFlags(t *testing.T) {
	root := newRoot(Env{})
	has := map[string][]string{
		"store":  {"quickstart", "run", "rerun", "report", "compare", "runs", "copy", "queue", "worker", "jobs", "cancel"},
		"format": {"run", "rerun", "quickstart", "report", "compare"},
		"color":  {"run", "rerun", "quickstart", "report", "compare"},
	}
	for flag, cmds := range has {
		for _, name := range cmds {
			c, _, err := root.Find([]string{name})
			if err != nil || c.Name() != name {
				t.Fatalf("command %s: %v", name, err)
			}
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s lacks --%s", name, flag)
			}
		}
	}
}

// TestOutputChecksBeforeRun checks that report file problems (a missing or
// unwritable directory, Parquet, a bad format or colour, --format without
// -o) exit 2 before anything runs: no store is created.
func TestOutputChecksBeforeRun(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "/nonexistent/dir/r.md"}, "directory /nonexistent/dir of /nonexistent/dir/r.md does not exist"},
		{[]string{"-o", filepath.Join(dir, "x.parquet")}, "Parquet"},
		{[]string{"-o", filepath.Join(dir, "x.txt"), "--format", "parquet"}, "Parquet"},
		{[]string{"-o", filepath.Join(dir, "x.txt"), "--format", "pdf"}, `"pdf"`},
		{[]string{"--format", "json"}, "-o"},
		{[]string{"--color", "sometimes"}, "--color"},
		{[]string{"-o", dir}, "is a directory"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"-o", filepath.Join(ro, "r.md")}, "not writable"})
	}
	for _, c := range cases {
		db := filepath.Join(dir, "r.db")
		args := append([]string{"run", "--engine", "sqlite", "--tests", "point-query", "--time", "1", "--store", db}, c.args...)
		code, out, stderr := run(t, Env{}, args...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
			t.Errorf("%v: exit %d stderr %q, want %d naming %q", c.args, code, stderr, ExitUsage, c.want)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%v: a store was created before the error:\n%s", c.args, out)
			os.Remove(db)
		}
	}
}
