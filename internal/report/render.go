package report

import (
	"fmt"
	"io"
	"math"
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

func (c Cell) plain() string {
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
		return fmt.Sprintf("%.2f", c.Value) + m
	}
	return FormatValue(c.Value) + toneMark(c.Tone)
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
func WriteText(w io.Writer, r *Report, opt TextOptions) error {
	var b strings.Builder
	if opt.Color {
		b.WriteString(ansiBold + r.Title + ansiReset + "\n")
	} else {
		b.WriteString(r.Title + "\n")
	}
	for _, h := range r.Header {
		b.WriteString("  " + h + "\n")
	}
	for _, t := range r.Tables {
		b.WriteString("\n")
		writeTextTable(&b, t, opt)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range r.Notes {
			b.WriteString("  - " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTextTable(b *strings.Builder, t Table, opt TextOptions) {
	b.WriteString(t.Title + "\n")
	if t.Legend != "" {
		b.WriteString("  " + t.Legend + "\n")
	}
	widths := make([]int, len(t.Columns)+1)
	widths[0] = utf8.RuneCountInString("test")
	for i, c := range t.Columns {
		widths[i+1] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		widths[0] = max(widths[0], utf8.RuneCountInString(r.Label)+2)
		for i, c := range r.Cells {
			widths[i+1] = max(widths[i+1], utf8.RuneCountInString(c.plain()))
		}
	}
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
			s := pad(c.plain(), widths[i+1], false)
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
				s := mdEscape(c.plain())
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
		for _, n := range r.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ")

func mdEscape(s string) string { return mdReplacer.Replace(s) }
