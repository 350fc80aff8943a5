package report

import (
	"strings"
	"testing"

	"benchlab/internal/analysis"
)

// TestUnknownWhy: an unknown verdict whose interval lies wholly beyond the
// minimum effect carries a reason; one whose interval reaches the band,
// or a called one, carries none.
func TestUnknownWhy(t *testing.T) {
	ranks := Comparison{Verdict: analysis.Verdict{Outcome: analysis.Unknown, Ratio: 0.1, RatioLo: 0.09, RatioHi: 0.11,
		P: 0.0079, PAdjusted: 0.0079 * 5 / 3, Correction: analysis.BH, NBase: 5, NOther: 5},
		Noise: analysis.NoiseEvidence{Basis: analysis.BasisRepeats, NBase: 5, NOther: 5,
			Guard: "other run 5 of 5 (-60.0% from its others, Dixon Q 0.90): the t-test's call rests on it (p 0.2 with it, 1e-05 without)"}}
	short, long := UnknownWhy(ranks, VerdictOptions{})
	if short != "ranks' floor" || !strings.Contains(long, "Welch's t-test was not used: other run 5 of 5") ||
		!strings.Contains(long, "5 against 5 repeats reach p 0.0079 at best") || !strings.Contains(long, "bh-adjusted 0.013") {
		t.Errorf("ranks: %q / %q", short, long)
	}
	welch := Comparison{Verdict: analysis.Verdict{Outcome: analysis.Unknown, Ratio: 1.3, RatioLo: 1.05, RatioHi: 1.6,
		P: 0.03, PAdjusted: 0.05, Correction: analysis.BH, NBase: 3, NOther: 3},
		Noise: analysis.NoiseEvidence{Basis: analysis.BasisRepeatsWelch, NBase: 3, NOther: 3}}
	if short, long := UnknownWhy(welch, VerdictOptions{}); short != "p not below alpha" ||
		!strings.Contains(long, "p 0.03, bh-adjusted 0.05 is not below alpha 0.01") {
		t.Errorf("welch: %q / %q", short, long)
	}
	if got := verdictText(welch, VerdictOptions{}); got != "unknown (p not below alpha)" {
		t.Errorf("verdict column %q", got)
	}
	// The interval reaches into +-2%, or the cell is called: no reason.
	near := welch
	near.Verdict.RatioLo = 1.01
	called := welch
	called.Verdict.Outcome = analysis.Faster
	for _, c := range []Comparison{near, called} {
		if short, long := UnknownWhy(c, VerdictOptions{}); short != "" || long != "" {
			t.Errorf("%+v: %q / %q, want none", c.Verdict, short, long)
		}
	}
	// A wider minimum effect takes the same interval inside the band.
	if short, _ := UnknownWhy(welch, VerdictOptions{MinEffect: 0.1}); short != "" {
		t.Errorf("min effect 10%%: %q, want none", short)
	}
}
