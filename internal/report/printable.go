package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal: control characters
// (C0, DEL and C1, newlines and tabs included), Unicode's bidirectional
// controls and bytes that are not UTF-8 are written as Go escapes (\x1b,
// \u202e). Names and other strings a user or a stored file supplies (an
// experiment's name, a server's version, an imported file's path) pass
// through it in text output, so that they cannot move the cursor, retitle
// the terminal, hide text or fake lines of benchlab's own output.
func Printable(s string) string { return escapeControls(s, false) }

// printableText is Printable but keeps newlines, for the text report's
// multi-line parts, which wrap and indent their own lines.
func printableText(s string) string { return escapeControls(s, true) }

func escapeControls(s string, keepNewline bool) string {
	if !needsEscape(s, keepNewline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewline:
			b.WriteByte('\n')
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape is the fast path: plain printable ASCII needs nothing.
func needsEscape(s string, keepNewline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || c < 0x20 && !(c == '\n' && keepNewline) {
			return true
		}
	}
	return false
}

// printableTable returns a copy of t whose strings went through Printable
// (the legend through printableText); t is left as it is, for the other
// renderers.
func printableTable(t Table) Table {
	t.Title, t.Legend = Printable(t.Title), printableText(t.Legend)
	t.Columns = append([]string(nil), t.Columns...)
	for i, c := range t.Columns {
		t.Columns[i] = Printable(c)
	}
	rows := make([]Row, len(t.Rows))
	for i, r := range t.Rows {
		r.Group, r.Label = Printable(r.Group), Printable(r.Label)
		r.Cells = append([]Cell(nil), r.Cells...)
		for j := range r.Cells {
			c := &r.Cells[j]
			c.Text, c.Mark, c.Detail = Printable(c.Text), Printable(c.Mark), Printable(c.Detail)
		}
		rows[i] = r
	}
	t.Rows = rows
	return t
}
