// Package docscheck checks the Markdown documentation against the repository
// and the command line: every relative link must name a file that exists (and,
// with a #fragment, a heading of that file), and every `benchlab <command>`
// with its `--flags` written in a code block or a code span must be a command
// and flags the binary has. Its test runs the checks on README.md and docs/,
// so a renamed flag or a moved page fails the build instead of misleading a
// reader.
package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is one broken reference: the file and line it is on, and why.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// CommandSet answers which commands and flags the command line has.
type CommandSet interface {
	// Flags returns the long flag names (without "--") of command cmd, ""
	// for the root command, and false when there is no such command.
	Flags(cmd string) (map[string]bool, bool)
}

// Doc is one Markdown file split into the parts the checks read.
type Doc struct {
	Path  string // as given, for messages
	Lines []string
	// code marks the lines inside fenced or indented code blocks.
	code []bool
	// lang is the info string of each code line's fence ("sh", "toml"),
	// "" for an indented block or a fence without one.
	lang []string
}

// Read loads a Markdown file.
func Read(path string) (*Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b)), nil
}

// Parse splits Markdown text into lines and marks its code blocks: fenced
// (``` or ~~~) and indented by four spaces after a blank line.
func Parse(path, text string) *Doc {
	d := &Doc{Path: path, Lines: strings.Split(text, "\n")}
	d.code = make([]bool, len(d.Lines))
	d.lang = make([]string, len(d.Lines))
	fence, lang := "", ""
	prevBlank := true
	indented := false
	for i, l := range d.Lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			} else {
				d.code[i] = true
				d.lang[i] = lang
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			lang = strings.TrimSpace(t[3:])
			indented = false
		case (prevBlank || indented) && strings.HasPrefix(l, "    ") && t != "":
			d.code[i] = true
			indented = true
		default:
			if t != "" {
				indented = false
			}
		}
		prevBlank = t == ""
	}
	return d
}

// headingRE is an ATX heading outside code.
var headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// Anchors returns the GitHub-style anchors of the document's headings.
func (d *Doc) Anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for i, l := range d.Lines {
		if d.code[i] {
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := Slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// linkInHeading keeps a heading's link text and drops its target.
var linkInHeading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' removed, spaces turned into '-'.
func Slug(heading string) string {
	heading = linkInHeading.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// linkRE is an inline link or image: [text](target) or [text](target "title").
var linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// codeSpanRE is an inline code span.
var codeSpanRE = regexp.MustCompile("`+[^`]*`+")

// Links checks every relative link of d. read loads another document by its
// path (for its anchors); exists says whether a path is a file or dir.
func (d *Doc) Links(read func(string) (*Doc, error), exists func(string) bool) []Problem {
	var ps []Problem
	for i, l := range d.Lines {
		if d.code[i] {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(l, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			other := d
			if file != "" {
				p := filepath.Join(filepath.Dir(d.Path), filepath.FromSlash(file))
				if !exists(p) {
					ps = append(ps, Problem{d.Path, i + 1, fmt.Sprintf("link %q: %s does not exist", target, p)})
					continue
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(file, ".md") {
					ps = append(ps, Problem{d.Path, i + 1, fmt.Sprintf("link %q: a #fragment on a file that is not Markdown", target)})
					continue
				}
				o, err := read(p)
				if err != nil {
					ps = append(ps, Problem{d.Path, i + 1, fmt.Sprintf("link %q: %v", target, err)})
					continue
				}
				other = o
			}
			if frag != "" && !other.Anchors()[frag] {
				ps = append(ps, Problem{d.Path, i + 1, fmt.Sprintf("link %q: %s has no heading with anchor #%s", target, other.Path, frag)})
			}
		}
	}
	return ps
}

// repoPathRE is a path to an example spec or a script, wherever it is
// written (prose, code spans, code blocks).
var repoPathRE = regexp.MustCompile(`\b(?:examples|scripts)/[A-Za-z0-9_.-]*[A-Za-z0-9_]`)

// Paths checks that every examples/... and scripts/... path d names exists
// under root.
func (d *Doc) Paths(root string, exists func(string) bool) []Problem {
	var ps []Problem
	for i, l := range d.Lines {
		for _, m := range repoPathRE.FindAllString(l, -1) {
			if !exists(filepath.Join(root, filepath.FromSlash(m))) {
				ps = append(ps, Problem{d.Path, i + 1, fmt.Sprintf("%s does not exist", m)})
			}
		}
	}
	return ps
}

// Invocation is one `benchlab <command> --flag ...` found in a document.
type Invocation struct {
	Line    int
	Command string // "" for the root command
	Flags   []string
}

// shellStop ends a command's arguments: a comment, a pipe, a redirection or
// the next command.
func shellStop(tok string) bool {
	switch tok {
	case "#", "|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", ")":
		return true
	}
	return strings.HasPrefix(tok, "#") || strings.HasPrefix(tok, ">") || strings.HasPrefix(tok, "|")
}

// isBenchlab says whether a token runs benchlab: benchlab, bin/benchlab,
// ./benchlab, ./bin/benchlab, or one of them after "<(" or "$(".
func isBenchlab(tok string) bool {
	tok = strings.TrimLeft(tok, "<$(`")
	switch tok {
	case "benchlab", "bin/benchlab", "./benchlab", "./bin/benchlab":
		return true
	}
	return false
}

// invocations finds benchlab command lines in text (one logical line).
func invocations(line int, text string) []Invocation {
	var out []Invocation
	toks := strings.Fields(text)
	for i := 0; i < len(toks); i++ {
		if !isBenchlab(toks[i]) || i > 0 && toks[i-1] == "-o" {
			// "go build -o bin/benchlab" names the binary, not a call.
			continue
		}
		// "benchlab" inside a word list such as "benchlab's" is not a call;
		// isBenchlab already needs the whole token. A call's command is the
		// next token unless it is a flag.
		inv := Invocation{Line: line}
		j := i + 1
		if j < len(toks) && !strings.HasPrefix(toks[j], "-") && !shellStop(toks[j]) {
			// An error line names its command as "benchlab run: ...".
			inv.Command = strings.TrimRight(strings.TrimLeft(toks[j], "`"), "`):,.")
			j++
		}
		for ; j < len(toks) && !shellStop(toks[j]) && !isBenchlab(toks[j]); j++ {
			t := strings.Trim(toks[j], "`\"'),;")
			if !strings.HasPrefix(t, "--") || len(t) == 2 {
				continue
			}
			name, _, _ := strings.Cut(t[2:], "=")
			name = strings.TrimRight(name, ".:")
			if name != "" {
				inv.Flags = append(inv.Flags, name)
			}
		}
		out = append(out, inv)
		i = j - 1
	}
	return out
}

// notCommands are fence languages whose blocks hold no command lines: a
// file tree or a config file may mention benchlab in prose.
var notCommands = map[string]bool{"text": true, "toml": true, "sql": true, "go": true, "json": true}

// Invocations returns every benchlab call in d's code blocks (continuation
// lines joined, a leading "$ " prompt dropped; blocks fenced as text, toml,
// sql, go or json are not commands) and in its inline code spans that start
// with benchlab.
func (d *Doc) Invocations() []Invocation {
	var out []Invocation
	for i := 0; i < len(d.Lines); i++ {
		if d.code[i] && notCommands[d.lang[i]] {
			continue
		}
		if d.code[i] {
			start := i
			text := strings.TrimPrefix(strings.TrimSpace(d.Lines[i]), "$ ")
			for strings.HasSuffix(text, `\`) && i+1 < len(d.Lines) && d.code[i+1] {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(d.Lines[i])
			}
			out = append(out, invocations(start+1, text)...)
			continue
		}
		for _, span := range codeSpanRE.FindAllString(d.Lines[i], -1) {
			s := strings.Trim(span, "`")
			if f := strings.Fields(s); len(f) > 0 && isBenchlab(f[0]) {
				out = append(out, invocations(i+1, s)...)
			}
		}
	}
	return out
}

// Commands checks every benchlab call of d against cs.
func (d *Doc) Commands(cs CommandSet) []Problem {
	var ps []Problem
	for _, inv := range d.Invocations() {
		flags, ok := cs.Flags(inv.Command)
		if !ok {
			ps = append(ps, Problem{d.Path, inv.Line, fmt.Sprintf("benchlab %s: no such command", inv.Command)})
			continue
		}
		for _, f := range inv.Flags {
			if !flags[f] {
				name := "benchlab"
				if inv.Command != "" {
					name += " " + inv.Command
				}
				ps = append(ps, Problem{d.Path, inv.Line, fmt.Sprintf("%s: no flag --%s", name, f)})
			}
		}
	}
	return ps
}

// Files returns root/README.md and every .md file under root/docs, sorted.
func Files(root string) ([]string, error) {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files[1:])
	return files, err
}

// Check runs the checks on every file; root is the repository's root, which
// examples/ and scripts/ paths are relative to.
func Check(root string, files []string, cs CommandSet) ([]Problem, error) {
	cache := map[string]*Doc{}
	read := func(p string) (*Doc, error) {
		p = filepath.Clean(p)
		if d, ok := cache[p]; ok {
			return d, nil
		}
		d, err := Read(p)
		if err != nil {
			return nil, err
		}
		cache[p] = d
		return d, nil
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	var ps []Problem
	for _, f := range files {
		d, err := read(f)
		if err != nil {
			return nil, err
		}
		ps = append(ps, d.Links(read, exists)...)
		ps = append(ps, d.Commands(cs)...)
		ps = append(ps, d.Paths(root, exists)...)
	}
	return ps, nil
}

// citeRE is a citation of a docs page in code: the page, an optional
// #anchor, and an optional section number ("docs/method.md 1.9",
// "docs/method.md section 2").
var citeRE = regexp.MustCompile(`docs/([A-Za-z0-9_./-]*[A-Za-z0-9_]\.md)(#[A-Za-z0-9_-]+)?(?:\s+(?:section\s+)?(\d+(?:\.\d+)?)\b)?`)

// sectionRE is a numbered heading: "## 1. Insert Benchmark", "### 1.9 Cleanup".
var sectionRE = regexp.MustCompile(`^#{2,6}\s+(\d+(?:\.\d+)?)\.?\s`)

// Sections returns the section numbers of d's numbered headings.
func (d *Doc) Sections() map[string]bool {
	out := map[string]bool{}
	for i, l := range d.Lines {
		if m := sectionRE.FindStringSubmatch(l); m != nil && !d.code[i] {
			out[m[1]] = true
		}
	}
	return out
}

// Citations checks the docs pages that files under root's dirs cite (Go
// sources and example specs): the page must exist, its #anchor match a
// heading, and a section number a numbered heading. skip names dirs left out
// (this package's tests cite pages that do not exist on purpose).
func Citations(root string, dirs []string, skip string) ([]Problem, error) {
	docs := map[string]*Doc{}
	var ps []Problem
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if skip != "" && filepath.Clean(p) == filepath.Clean(filepath.Join(root, skip)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".toml") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, l := range strings.Split(string(b), "\n") {
				for _, m := range citeRE.FindAllStringSubmatch(l, -1) {
					page := filepath.Join(root, "docs", filepath.FromSlash(m[1]))
					d, ok := docs[page]
					if !ok {
						d, _ = Read(page)
						docs[page] = d
					}
					switch {
					case d == nil:
						ps = append(ps, Problem{p, i + 1, fmt.Sprintf("cites docs/%s, which does not exist", m[1])})
					case m[2] != "" && !d.Anchors()[m[2][1:]]:
						ps = append(ps, Problem{p, i + 1, fmt.Sprintf("cites docs/%s%s: no such heading", m[1], m[2])})
					case m[3] != "" && !d.Sections()[m[3]]:
						ps = append(ps, Problem{p, i + 1, fmt.Sprintf("cites docs/%s %s: no such section", m[1], m[3])})
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// flagRE finds long flag names in a help text's flag lines.
var flagRE = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-zA-Z0-9][\w-]*)`)

// HelpFlags reads the long flags from a command's --help output.
func HelpFlags(help string) map[string]bool {
	out := map[string]bool{"help": true, "version": true}
	for _, m := range flagRE.FindAllStringSubmatch(help, -1) {
		out[m[1]] = true
	}
	return out
}

// commandRE finds a command name in the "Available Commands:" list.
var commandRE = regexp.MustCompile(`^\s{2}(\S+)\s{2,}`)

// HelpCommands reads the command names from the root command's --help.
func HelpCommands(help string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(help, "\n") {
		switch {
		case strings.HasSuffix(strings.TrimSpace(l), "Commands:"):
			in = true
		case in && strings.TrimSpace(l) == "":
			in = false
		case in:
			if m := commandRE.FindStringSubmatch(l); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}
