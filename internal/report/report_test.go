package report

import (
	"benchlab/internal/report/section"
	"bytes"
	"strings"
	"testing"

	"benchlab/internal/analysis"
)

// TestRatioColours checks the article thresholds as rendered: <= 0.95 red
// with "-", >= 1.05 green with "+", grey between, and the reverse for
// lower-is-better metrics.
func TestRatioColours(t *testing.T) {
	cases := []struct {
		ratio float64
		dir   analysis.Direction
		color string
		text  string
	}{
		{0.95, analysis.HigherIsBetter, ansiRed, "0.95-"},
		{0.951, analysis.HigherIsBetter, ansiRed, "0.95-"}, // shown as 0.95, so coloured as 0.95
		{0.956, analysis.HigherIsBetter, ansiGrey, "0.96 "},
		{1.00, analysis.HigherIsBetter, ansiGrey, "1.00 "},
		{1.049, analysis.HigherIsBetter, ansiRed + "x", ""}, // placeholder replaced below
		{1.05, analysis.HigherIsBetter, ansiGreen, "1.05+"},
		{2.5, analysis.HigherIsBetter, ansiGreen, "2.50+"},
		{1.05, analysis.LowerIsBetter, ansiRed, "1.05-"},
		{0.90, analysis.LowerIsBetter, ansiGreen, "0.90+"},
		{1.02, analysis.LowerIsBetter, ansiGrey, "1.02 "},
	}
	cases[4].color, cases[4].text = ansiGreen, "1.05+" // 1.049 rounds to 1.05
	for _, c := range cases {
		r := &Report{Title: "t", Tables: []Table{{Title: "rel", Columns: []string{"b"},
			Rows: []Row{{Label: "x", Cells: []Cell{section.RatioCell(c.ratio, c.dir)}}}}}}
		var buf bytes.Buffer
		if err := WriteText(&buf, r, TextOptions{Color: true}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), c.color+c.text+ansiReset) {
			t.Errorf("ratio %v dir %v: want %q coloured %q in %q", c.ratio, c.dir, c.text, c.color, buf.String())
		}
		buf.Reset()
		WriteText(&buf, r, TextOptions{})
		if strings.Contains(buf.String(), "\x1b[") {
			t.Errorf("colour codes without Color: %q", buf.String())
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	r := &Report{Title: "a|b", Header: []string{"<script>"}, Tables: []Table{{Title: "t", Columns: []string{"x|y"},
		Rows: []Row{{Group: "g", Label: "l|m", Cells: []Cell{section.RatioCell(0.5, analysis.HigherIsBetter), section.NumberCell(1234.4)}}}}}}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{`a\|b`, "&lt;script&gt;", `x\|y`, `l\|m`, "**0.50-**", "| 1234 |"} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q:\n%s", w, out)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{12345.6: "12346", 42.25: "42.2", 3.14159: "3.14", 0.01234: "0.0123", 0: "0"} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
}
