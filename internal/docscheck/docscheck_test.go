package docscheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "benchlab/internal/all" // suites and engines add their flags
	"benchlab/internal/cli"
)

// cliCommands is the real command line, asked in-process with --help.
type cliCommands struct {
	t     *testing.T
	names map[string]bool
	flags map[string]map[string]bool
}

func help(args ...string) (string, int) {
	var out bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &out, Stderr: &out}, append(args, "--help"))
	return out.String(), code
}

func newCLICommands(t *testing.T) *cliCommands {
	out, code := help()
	if code != 0 {
		t.Fatalf("benchlab --help exited %d:\n%s", code, out)
	}
	c := &cliCommands{t: t, names: map[string]bool{"": true}, flags: map[string]map[string]bool{"": HelpFlags(out)}}
	for _, n := range HelpCommands(out) {
		c.names[n] = true
	}
	if !c.names["run"] || !c.names["report"] {
		t.Fatalf("commands read from benchlab --help lack run or report: %v\n%s", c.names, out)
	}
	return c
}

func (c *cliCommands) Flags(cmd string) (map[string]bool, bool) {
	if !c.names[cmd] {
		return nil, false
	}
	if f, ok := c.flags[cmd]; ok {
		return f, true
	}
	out, code := help(cmd)
	if code != 0 {
		c.t.Fatalf("benchlab %s --help exited %d:\n%s", cmd, code, out)
	}
	c.flags[cmd] = HelpFlags(out)
	return c.flags[cmd], true
}

// TestDocs checks README.md and docs/: links resolve, commands and flags exist.
func TestDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	ps, err := Check(root, files, newCLICommands(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Error(p)
	}
}

// TestCitations checks that the docs pages, headings and numbered sections
// the code and the examples cite exist, so that "docs/method.md 1.9" keeps
// pointing at the cleanup.
func TestCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	ps, err := Citations(root, []string{"internal", "cmd", "examples"}, filepath.Join("internal", "docscheck"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Error(p)
	}
}

// TestCitationsPlanted checks the citation check on planted citations.
func TestCitationsPlanted(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"docs/method.md": "# M\n\n## 1. Insert Benchmark\n\n### 1.9 Cleanup between l.i2 and qr100\n",
		"internal/x/x.go": strings.Join([]string{
			"// good: docs/method.md 1.9, docs/method.md section 1, docs/method.md#19-cleanup-between-li2-and-qr100",
			"// bad: docs/method.md 1.14, docs/missing.md, docs/method.md#no-such",
		}, "\n"),
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := Citations(dir, []string{"internal"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range []string{"docs/method.md 1.14: no such section", "docs/missing.md, which does not exist", "docs/method.md#no-such: no such heading"} {
		if !strings.Contains(all, w) {
			t.Errorf("planted citation %q not reported; got:\n%s", w, all)
		}
	}
	if len(ps) != 3 {
		t.Errorf("got %d problems, want 3:\n%s", len(ps), all)
	}
}

// TestFlagsFound makes sure the help parsing sees flags at all, so that a
// change of the help layout cannot turn the check into a pass.
func TestFlagsFound(t *testing.T) {
	c := newCLICommands(t)
	f, ok := c.Flags("run")
	if !ok {
		t.Fatal("no run command")
	}
	for _, want := range []string{"threads", "engine", "preset", "dry-run", "help", "rows", "num-keys", "trx_level"} {
		if !f[want] {
			t.Errorf("run's flags from --help lack --%s: %v", want, f)
		}
	}
	if f["no-such-flag"] {
		t.Error("an unknown flag was found")
	}
}

// TestPlantedErrors checks the checker: a page with a broken link, a wrong
// anchor, an unknown command and an unknown flag gets one problem for each,
// and the good references on it none.
func TestPlantedErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("docs/other.md", "# Other page\n\n## The spec file: every field\n\n## Setting sweeps\n\n## Setting sweeps\n")
	page := write("README.md", strings.Join([]string{
		"# Title",
		"",
		"Good: [other](docs/other.md), [section](docs/other.md#the-spec-file-every-field),",
		"[second of two](docs/other.md#setting-sweeps-1), [here](#title), [web](https://example.com/x#y).",
		"Bad: [missing](docs/missing.md) and [anchor](docs/other.md#no-such-heading).",
		"Not a link in code: `[x](nowhere.md)`.",
		"",
		"```sh",
		"benchlab run --threads 2 --time=10s   # a comment with --not-a-flag",
		"bin/benchlab report --format html \\",
		"  --bogus-flag -o r.html",
		"benchlab frobnicate",
		"make bench-client BENCH_CLIENT_ARGS=\"--db postgres\"",
		"```",
		"",
		"```text",
		"internal/stale/   what a killed benchlab left behind",
		"```",
		"",
		"Inline: `benchlab compare --fail-on-regression` and `benchlab compare --fail-on-regresion`.",
		"Run `examples/good.toml`, not examples/missing.toml.",
		"",
	}, "\n"))
	write("examples/good.toml", "name = \"x\"\n")
	ps, err := Check(dir, []string{page}, newCLICommands(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docs/missing.md does not exist",
		"has no heading with anchor #no-such-heading",
		"benchlab report: no flag --bogus-flag",
		"benchlab frobnicate: no such command",
		"benchlab compare: no flag --fail-on-regresion",
		"examples/missing.toml does not exist",
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("planted error %q not reported; got:\n%s", w, all)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(ps), len(want), all)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"The spec file":                     "the-spec-file",
		"Noise model, evidence and repeats": "noise-model-evidence-and-repeats",
		"1.11 Per-step summary (np.sh)":     "111-per-step-summary-npsh",
		"`benchlab run`: flags":             "benchlab-run-flags",
		"Clusters: Galera":                  "clusters-galera",
		"Key-value engines (db_bench)":      "key-value-engines-db_bench",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
