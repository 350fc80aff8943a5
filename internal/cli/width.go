package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// lineWidth is the widest line benchlab prints in text mode.
const lineWidth = 120

// wrapLine returns s unchanged when it fits lineWidth columns, else broken
// at spaces into lines that do (a word longer than a line stays whole): the
// first keeps s's indentation, the others are indented two spaces more.
func wrapLine(s string) string {
	if len([]rune(s)) <= lineWidth {
		return s
	}
	body := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(body)]
	lines := wrapWords(body, lineWidth-len(lead)-2)
	for i := range lines {
		if i == 0 {
			lines[i] = lead + lines[i]
			continue
		}
		lines[i] = lead + "  " + lines[i]
	}
	return strings.Join(lines, "\n")
}

// wrapWords breaks s at spaces into lines of at most width columns, filling
// each line before starting the next (a word longer than width gets a line
// of its own). Newlines in s count as spaces. It takes time and memory
// linear in len(s), whatever the words' lengths: an error message can quote
// a user's input of any size (a key of thousands of characters, thousands
// of keys), and a line-breaking algorithm that looks at every pair of words
// would take gigabytes for it.
func wrapWords(s string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0 // columns in line
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' }) {
		c := utf8.RuneCountInString(w)
		if n > 0 && n+1+c > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(w)
		n += c
	}
	return append(lines, line.String())
}

// printWrapped prints a formatted line wrapped to lineWidth columns.
func printWrapped(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, wrapLine(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")))
}

// printError prints a command's error as "name: msg" on w, each of its lines
// wrapped to lineWidth columns at spaces (wrapLine), so the field, flag or
// file it names and what was expected stay whole words.
func printError(w io.Writer, name, msg string) {
	lines := strings.Split(strings.TrimRight(name+": "+msg, "\n"), "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l)
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

// printHanging prints prefix and desc, desc wrapped to lineWidth columns
// under itself: continuation lines start where desc started (a name column
// and its description).
func printHanging(w io.Writer, prefix, desc string) {
	room := lineWidth - len([]rune(prefix))
	if room < 30 || len([]rune(prefix+desc)) <= lineWidth {
		fmt.Fprintln(w, wrapLine(prefix+desc))
		return
	}
	pad := strings.Repeat(" ", len([]rune(prefix)))
	for i, l := range wrapWords(desc, room) {
		if i == 0 {
			fmt.Fprintln(w, prefix+l)
			continue
		}
		fmt.Fprintln(w, pad+l)
	}
}

// fitLine breaks a line of a run's output that passes lineWidth columns: a
// live line ("[  12s ] test thds: ... | 56% done, eta ...") puts its
// progress on a continuation line under the test's name, and whatever is
// still too long wraps at spaces (wrapLine).
func fitLine(s string) string {
	if len([]rune(s)) <= lineWidth {
		return s
	}
	if i := strings.LastIndex(s, " | "); i > 0 && strings.HasPrefix(s, "[") {
		indent := "  "
		if j := strings.Index(s, "] "); j > 0 && j < i {
			indent = strings.Repeat(" ", j+2)
		}
		return fitLine(s[:i]) + "\n" + wrapLine(indent+s[i+1:])
	}
	return wrapLine(s)
}

// fitWriter passes a run's output to w line by line, each fitted to
// lineWidth columns (fitLine). A line is written once its newline comes;
// Flush writes a last line that has none. It is safe for concurrent use.
type fitWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func newFitWriter(w io.Writer) *fitWriter { return &fitWriter{w: w} }

// Write buffers p and writes every line it completes.
func (f *fitWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(f.buf[:i])
		f.buf = f.buf[i+1:]
		if _, err := io.WriteString(f.w, fitLine(line)+"\n"); err != nil {
			return len(p), err
		}
	}
}

// Flush writes what is left after the last newline.
func (f *fitWriter) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(f.w, fitLine(string(f.buf)))
	f.buf = nil
	return err
}
