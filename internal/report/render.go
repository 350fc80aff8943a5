package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"benchlab/internal/analysis"
)

// FormatValue renders an absolute number with a precision that suits it.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsInf(v, 0):
		return "inf"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a == 0:
		return "0"
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// marker is the sign shown next to a coloured ratio so that the verdict does
// not rely on colour alone.
func marker(b analysis.Band) string {
	switch b {
	case analysis.Better:
		return "+"
	case analysis.Worse:
		return "-"
	}
	return " "
}

// plain is a cell as text: a number with its unit and tone mark, a ratio
// with its verdict mark, "n/a" when nothing was measured.
func plain(c Cell) string {
	switch {
	case c.Missing:
		return "n/a"
	case c.Kind == Text:
		return c.Text
	case c.Kind == Ratio:
		m := marker(c.Band)
		if c.Mark != "" {
			m = c.Mark
		}
		if math.IsInf(c.Value, 1) {
			return "inf" + m
		}
		return FormatRatio(c.Value) + m
	}
	v := FormatValue(c.Value)
	if c.Unit != "" {
		v += " " + c.Unit
	}
	return v + toneMark(c.Tone)
}

// FormatRatio renders a ratio with two decimals, except that a ratio below
// 0.1 keeps two significant digits (0.0046, not a bare 0.00), and an exact
// zero prints as 0.
func FormatRatio(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a < 0.1:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return fmt.Sprintf("%.2f", v)
}

// TextOptions control the text renderer.
type TextOptions struct {
	// Color enables ANSI colours (red worse, green better, grey neutral).
	Color bool
}

const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiGrey  = "\x1b[90m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
)

// WriteText renders r as aligned plain text.
// Every string of r is written through Printable (or printableText, which
// keeps newlines): names and other stored strings cannot send a terminal
// control sequences.
func WriteText(w io.Writer, r *Report, opt TextOptions) error {
	var b strings.Builder
	if opt.Color {
		b.WriteString(ansiBold + Printable(r.Title) + ansiReset + "\n")
	} else {
		b.WriteString(Printable(r.Title) + "\n")
	}
	if len(r.Summary) > 0 {
		b.WriteString("Summary:\n")
		for _, l := range r.Summary {
			if item, ok := strings.CutPrefix(l, "  "); ok {
				b.WriteString(wrapText(printableText(item), "    - ", "      ", TextWidth))
				continue
			}
			b.WriteString(wrapText(printableText(l), "  ", "    ", TextWidth))
		}
		b.WriteString("\n")
	}
	for _, h := range r.Header {
		b.WriteString(wrapText(printableText(h), "  ", "    ", TextWidth))
	}
	for _, t := range r.Tables {
		for _, part := range splitWide(t, TextWidth) {
			b.WriteString("\n")
			writeTextTable(&b, part, opt)
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range uniqueNotes(r.Notes) {
			b.WriteString(wrapText(printableText(n), "  - ", "    ", TextWidth))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTextTable(b *strings.Builder, t Table, opt TextOptions) {
	t = printableTable(t)
	b.WriteString(t.Title + "\n")
	if t.Legend != "" {
		b.WriteString(wrapText(t.Legend, "  ", "  ", TextWidth))
	}
	widths := columnWidths(t)
	pad := func(s string, n int, left bool) string {
		gap := strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
		if left {
			return s + gap
		}
		return gap + s
	}
	b.WriteString(pad("", widths[0], true))
	for i, c := range t.Columns {
		b.WriteString("  " + pad(c, widths[i+1], false))
	}
	b.WriteString("\n")
	group := ""
	for _, r := range t.Rows {
		if r.Group != group && r.Group != "" {
			b.WriteString(r.Group + "\n")
			group = r.Group
		}
		b.WriteString(pad("  "+r.Label, widths[0], true))
		for i, c := range r.Cells {
			s := pad(plain(c), widths[i+1], false)
			if opt.Color && c.Kind == Ratio && !c.Missing {
				switch c.Band {
				case analysis.Better:
					s = ansiGreen + s + ansiReset
				case analysis.Worse:
					s = ansiRed + s + ansiReset
				default:
					s = ansiGrey + s + ansiReset
				}
			}
			if opt.Color && c.Kind != Ratio && !c.Missing {
				switch c.Tone {
				case ToneGood:
					s = ansiGreen + s + ansiReset
				case ToneBad:
					s = ansiRed + s + ansiReset
				case ToneIgnore, ToneMuted:
					s = ansiGrey + s + ansiReset
				}
			}
			b.WriteString("  " + s)
		}
		b.WriteString("\n")
	}
}

// WriteMarkdown renders r as GitHub-flavoured Markdown. Ratios carry a sign
// (+ better, - worse) and worse/better cells are bold, since Markdown has no
// colours.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("# " + mdEscape(r.Title) + "\n\n")
	if len(r.Summary) > 0 {
		b.WriteString("**Summary**\n\n")
		for _, l := range r.Summary {
			indent := "- "
			if strings.HasPrefix(l, "  ") {
				indent = "  - "
			}
			b.WriteString(indent + mdEscape(strings.TrimSpace(l)) + "\n")
		}
		b.WriteString("\n")
	}
	for _, h := range r.Header {
		b.WriteString("- " + mdEscape(h) + "\n")
	}
	for _, t := range r.Tables {
		b.WriteString("\n## " + mdEscape(t.Title) + "\n\n")
		if t.Legend != "" {
			b.WriteString(mdEscape(t.Legend) + "\n\n")
		}
		b.WriteString("| test |")
		for _, c := range t.Columns {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n|---|")
		for range t.Columns {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		group := ""
		for _, r := range t.Rows {
			if r.Group != group && r.Group != "" {
				b.WriteString("| **" + mdEscape(r.Group) + "** |" + strings.Repeat(" |", len(t.Columns)) + "\n")
				group = r.Group
			}
			b.WriteString("| " + mdEscape(r.Label) + " |")
			for _, c := range r.Cells {
				s := mdEscape(plain(c))
				if !c.Missing && ((c.Kind == Ratio && c.Band != analysis.Neutral) || c.Tone == ToneGood || c.Tone == ToneBad) {
					s = "**" + strings.TrimSpace(s) + "**"
				}
				b.WriteString(" " + strings.TrimSpace(s) + " |")
			}
			b.WriteString("\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range uniqueNotes(r.Notes) {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ")

func mdEscape(s string) string { return mdReplacer.Replace(printableText(s)) }

// TextWidth is the widest line of the text report: wider tables are split
// into groups of columns, and long notes and legends wrap.
const TextWidth = 120

// columnWidths returns the width of t's label column and of each column.
func columnWidths(t Table) []int {
	widths := make([]int, len(t.Columns)+1)
	widths[0] = utf8.RuneCountInString("test")
	for i, c := range t.Columns {
		widths[i+1] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		widths[0] = max(widths[0], utf8.RuneCountInString(r.Label)+2)
		for i, c := range r.Cells {
			if i+1 < len(widths) {
				widths[i+1] = max(widths[i+1], utf8.RuneCountInString(plain(c)))
			}
		}
	}
	return widths
}

// splitWide splits a table wider than limit into tables of consecutive
// columns that fit, each with the row labels; the later parts' titles say
// they continue the first.
func splitWide(t Table, limit int) []Table {
	widths := columnWidths(t)
	total := widths[0]
	for _, w := range widths[1:] {
		total += 2 + w
	}
	if total <= limit || len(t.Columns) < 2 {
		return []Table{t}
	}
	var parts []Table
	for start := 0; start < len(t.Columns); {
		end, width := start, widths[0]
		for end < len(t.Columns) && (end == start || width+2+widths[end+1] <= limit) {
			width += 2 + widths[end+1]
			end++
		}
		part := Table{Title: t.Title, Legend: t.Legend, Columns: t.Columns[start:end]}
		if start > 0 {
			part.Title, part.Legend = t.Title+" (continued)", ""
		}
		for _, r := range t.Rows {
			nr := Row{Group: r.Group, Label: r.Label}
			if start < len(r.Cells) {
				nr.Cells = r.Cells[start:min(end, len(r.Cells))]
			}
			part.Rows = append(part.Rows, nr)
		}
		parts = append(parts, part)
		start = end
	}
	return parts
}

// wrapText wraps s at word boundaries to lines of at most width columns,
// the first starting with first and the rest with rest.
func wrapText(s, first, rest string, width int) string {
	var b strings.Builder
	line := first
	empty := true
	for _, word := range strings.Fields(s) {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			b.WriteString(line + "\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// uniqueNotes drops repeated notes, keeping the first of each: a note says
// something once per experiment.
func uniqueNotes(notes []string) []string {
	seen := map[string]bool{}
	out := notes[:0:0]
	for _, n := range notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
