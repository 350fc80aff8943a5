package report

import (
	"strings"
	"testing"
)

// TestFormatRatio: small ratios keep two significant digits instead of a
// bare 0.00 (the quickstart's delete-full against wal-normal).
func TestFormatRatio(t *testing.T) {
	for v, want := range map[float64]string{
		1: "1.00", 1.234: "1.23", 0.1: "0.10", 0.0999: "0.1", 0.0046: "0.0046", 0.00123: "0.0012",
		0: "0", 12.5: "12.50", 1e-7: "1e-07",
	} {
		if got := FormatRatio(v); got != want {
			t.Errorf("FormatRatio(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestNotesOnce: a note repeated by two parts of the report prints once.
func TestNotesOnce(t *testing.T) {
	r := &Report{Title: "t", Notes: []string{"a", "b", "a", "c", "b"}}
	var b strings.Builder
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "  - a\n"); got != 1 || strings.Count(b.String(), "  - b\n") != 1 {
		t.Errorf("notes:\n%s", b.String())
	}
}
