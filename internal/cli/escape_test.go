package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/report"
)

// TestNamesEscaped: an experiment name holding terminal control sequences
// (retitle the window, clear the screen, a bidi override) and a newline
// that would fake a line is refused in a spec, and when a store holds one
// anyway, report (text and Markdown) and runs print it as escapes, never
// raw.
func TestNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	// A spec with such a name is refused (exit 2, naming the field); a
	// store can still hold one (written by an older version, or by hand),
	// so the name is planted in the store and every output must escape it.
	evil := "evil\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\nexperiment 99 fake"
	bad := writeFile(t, dir, "evil.toml", "name = \""+strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`, "\n", `\n`).Replace(evil)+`"
[[target]]
name = "a"
engine = "sqlite"
`+pointQueryWorkload)
	if code, _, stderr := run(t, Env{}, "run", bad, "--store", db); code != ExitUsage || !strings.Contains(stderr, "name:") {
		t.Fatalf("a spec named with control characters: exit %d, stderr %q; want exit %d naming name", code, stderr, ExitUsage)
	}
	sp := writeFile(t, dir, "plain.toml", `name = "plain"
[[target]]
name = "a"
engine = "sqlite"
`+pointQueryWorkload)
	if code, out, stderr := run(t, Env{}, "run", sp, "--store", db, "--color", "never"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	raw, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE experiments SET name = ?", evil); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	outputs := map[string]string{}
	for _, args := range [][]string{
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
