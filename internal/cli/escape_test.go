package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/report"
)

// TestNamesEscaped runs an experiment whose name holds terminal control
// sequences (retitle the window, clear the screen, a bidi override) and a
// newline that would fake a line: run's report, report (text and
// Markdown) and runs print them as escapes, never raw.
func TestNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "evil.toml", `name = "evil\u001b]0;pwned\u0007\u001b[2J\u202etxt.exe\nexperiment 99 fake"
[[target]]
name = "a"
engine = "sqlite"
`+pointQueryWorkload)
	outputs := map[string]string{}
	for _, args := range [][]string{
		{"run", sp, "--store", db, "--color", "never"},
		{"report", "--store", db, "--color", "never"},
		{"report", "--store", db, "--color", "always"},
		{"runs", "--store", db},
	} {
		code, out, stderr := run(t, Env{}, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		outputs[strings.Join(args, " ")] = out + stderr
	}
	md := filepath.Join(dir, "r.md")
	if code, _, stderr := run(t, Env{}, "report", "--store", db, "-o", md); code != ExitOK {
		t.Fatalf("report -o r.md: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	// Markdown joins a title's lines with a space.
	outputs["r.md"] = strings.ReplaceAll(string(b), "txt.exe experiment 99", `txt.exe\x0aexperiment 99`)
	for name, out := range outputs {
		if !strings.Contains(unwrap(out), `evil\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\x0aexperiment 99 fake`) {
			t.Errorf("%s: the name is not shown escaped:\n%s", name, out)
		}
		raw := strings.ReplaceAll(out, "\x1b[", "") // --color always's own colours
		for _, bad := range []string{"\x1b]", "\x07", "\u202e", "\x1b[2J", "\nexperiment 99"} {
			if strings.Contains(raw, bad) || strings.Contains(out, "\x1b[2J") {
				t.Errorf("%s: %q printed raw", name, bad)
			}
		}
	}
	for in, want := range map[string]string{
		"plain":            "plain",
		"tab\there":        `tab\x09here`,
		"del\x7f c1\u009b": `del\x7f c1\u009b`,
		"bad utf8 \xff":    `bad utf8 \xff`,
		"é ünïcode 名前":     "é ünïcode 名前",
	} {
		if got := report.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q; want %q", in, got, want)
		}
	}
}
