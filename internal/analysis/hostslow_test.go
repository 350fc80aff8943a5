package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// slowRuns marks runs as run on a slow host.
func slowRuns(rs []Run, idx ...int) []Run {
	const why = "host slow during run: memory canary (32 MiB) x2.00 after the run, the host's spread allows x1.25"
	for _, i := range idx {
		rs[i].HostSlow = why
	}
	return rs
}

// TestCompareNoiseHostSlow: runs whose canaries found the host slow, on
// hand-worked figures. A history of s = 2% (variance 0.0004, 20 df, no
// disturbance on record) and one run per target, 100 against 70:
// d = ln 0.7 = -0.3567, s² = 20·0.0004/20 = 0.0004, SE = sqrt(2·0.0004) =
// 0.02828, t = -12.61 with 20 df: p about 1e-10, slower. When the other's
// one run ran on a slow host, its slowness explains the slowdown: not
// called (unknown), with the same p and ratio; when the base's did, it
// does not explain the other being slower: still called.
func TestCompareNoiseHostSlow(t *testing.T) {
	prior := NoisePrior{Var: 0.0004, DF: 20, Points: 21}
	d := math.Log(0.7)
	se := math.Sqrt(2 * 0.0004)
	wantP := studentTwoSided(d/se, 20)
	if wantP > 1e-9 {
		t.Fatalf("hand figures: p %.3g", wantP)
	}

	v, ev := CompareNoise(runs(100), runs(70), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Slower || ev.Withheld || v.HostSlow != [2]bool{} {
		t.Fatalf("no canary flag: %v (%s), want slower", v.Outcome, ev)
	}
	near(t, "p unflagged", v.P, wantP, 1e-15)

	v, ev = CompareNoise(runs(100), slowRuns(runs(70), 0), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Unknown || !ev.Withheld || v.HostSlow != [2]bool{false, true} || ev.AllSlow[1] == "" {
		t.Errorf("other on a slow host: %v (%+v), want unknown, withheld", v.Outcome, ev)
	}
	near(t, "p flagged", v.P, wantP, 1e-15)
	near(t, "ratio flagged", v.Ratio, 0.7, 1e-12)
	if s := string(v.Evidence); !strings.Contains(s, "every other run on a slow host (memory canary (32 MiB) x2.00 after the run") ||
		!strings.Contains(s, "the t-test alone would have called it") {
		t.Errorf("evidence %q does not say the other ran on a slow host", s)
	}
	if b := ev.Brief(); !strings.HasSuffix(b, "single run; every other run on a slow host (the t-test alone would have called it)") {
		t.Errorf("brief evidence %q", b)
	}
	// A correction decides again and still does not call it (the gate
	// goes through CorrectVerdicts).
	if c := CorrectVerdicts([]Verdict{v}, CompareOptions{}); c[0].Outcome != Unknown {
		t.Errorf("after correction: %v, want unknown", c[0].Outcome)
	}

	// The base on a slow host: a slow base makes the other look faster,
	// never slower, so the slowdown is still called.
	v, ev = CompareNoise(slowRuns(runs(100), 0), runs(70), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Slower || ev.Withheld {
		t.Errorf("base on a slow host, other slower: %v (%s), want slower", v.Outcome, ev)
	}
	// ... and a faster other on a slow host is still faster.
	if v, _ := CompareNoise(runs(100), slowRuns(runs(130), 0), HigherIsBetter, prior, NoiseOptions{}); v.Outcome != Faster {
		t.Errorf("other on a slow host, faster: %v, want faster", v.Outcome)
	}
	// Latency: the other's higher latency on a slow host is not called.
	if v, _ := CompareNoise(runs(10), slowRuns(runs(10/0.7), 0), LowerIsBetter, prior, NoiseOptions{}); v.Outcome != Unknown {
		t.Errorf("latency, other on a slow host: %v, want unknown", v.Outcome)
	}

	// Three repeats each, two of the other's on a slow host: they are set
	// aside, and the other's third run (100) against the base's three
	// (100·e^0.01, 100, 100·e^-0.01) gives ratio 1 exactly. s² = (20·0.0004
	// + 0.0002)/22, SE = sqrt(s²/3 + s²) = 0.02229, so the 95% interval is
	// x0.955-x1.047 (t 2.074 at 22 df): unknown, p = 1.
	base := runs(100*math.Exp(0.01), 100, 100*math.Exp(-0.01))
	other := slowRuns(runs(70, 70, 100), 0, 1)
	v, ev = CompareNoise(base, other, HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Unknown || ev.NOther != 1 || ev.NBase != 3 || len(ev.HostSlow) != 2 || ev.AllSlow != [2]string{} {
		t.Fatalf("two of three on a slow host: %v (%+v), want unknown on 3 against 1", v.Outcome, ev)
	}
	near(t, "ratio", v.Ratio, 1, 1e-12)
	near(t, "p", v.P, 1, 1e-12)
	s2 := (20*0.0004 + 0.0002) / 22
	near(t, "interval high", v.RatioHi, math.Exp(studentQuantile(0.975, 22)*math.Sqrt(s2/3+s2)), 1e-9)
	if !slices.Equal(ev.Left[1], []int{0, 1}) || !slices.Equal(ev.Kept(1, []float64{70, 70, 100}), []float64{100}) ||
		!slices.Equal(ev.Kept(0, []float64{1, 2, 3}), []float64{1, 2, 3}) {
		t.Errorf("left %v, kept %v; want the other's runs 1 and 2 left out", ev.Left, ev.Kept(1, []float64{70, 70, 100}))
	}
	if s := ev.String(); !strings.Contains(s, "other run 1 of 3 (host slow during run: memory canary") ||
		!strings.Contains(s, "other run 2 of 3 (host slow") {
		t.Errorf("evidence %q does not name the runs set aside", s)
	}
	if b := ev.Brief(); !strings.HasSuffix(b, "repeats 3/1, single run, 2 runs set aside as disturbed; other partly on a slow host") {
		t.Errorf("brief evidence %q, want the runs counted", b)
	}
	// One of the other's runs on a slow host and worse than its others,
	// which are 30% lower than the base's and agree: the t-test on the two
	// would call it slower, but they measured a host known to be disturbed
	// and two runs cannot show whether they were slowed too: not called.
	e := math.Exp
	v, ev = CompareNoise(base, slowRuns(runs(50, 70*e(0.01), 70*e(-0.01)), 0), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Unknown || !ev.Withheld || ev.NOther != 2 || v.HostSlow != [2]bool{false, true} ||
		!strings.Contains(ev.String(), "other partly on a slow host: a change it explains is not called (the t-test alone would have called it)") {
		t.Errorf("other partly on a slow host: %v (%s), want unknown, withheld", v.Outcome, ev)
	}
	near(t, "ratio partly slow", v.Ratio, 0.7, 1e-12)
	// The mirror: the base's slow run is set aside and the other's
	// slowdown, which a slow base cannot explain, is called.
	v, ev = CompareNoise(slowRuns(runs(50, 100*e(0.01), 100*e(-0.01)), 0), runs(70, 70*e(0.01), 70*e(-0.01)), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Slower || ev.Withheld || ev.NBase != 2 || !strings.Contains(ev.String(), "base run 1 of 3 (host slow") {
		t.Errorf("base partly on a slow host: %v (%s), want slower with the base's run 1 set aside", v.Outcome, ev)
	}

	// Five clean runs are enough: 6 against 6, one of the other's on a
	// slow host and worse, the slowdown is called on the other five.
	six := func(level float64) []Run {
		return runs(level*e(0.01), level*e(-0.01), level*e(0.005), level*e(-0.005), level, level)
	}
	v, ev = CompareNoise(six(100), slowRuns(append(runs(50), six(70)[1:]...), 0), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Slower || ev.NOther != 5 || ev.SlowSide != [2]bool{} || len(ev.HostSlow) != 1 {
		t.Errorf("6 against 6, one flagged: %v (%s), want slower on 6 against 5", v.Outcome, ev)
	}
	// A flagged run that came out no worse than its side's others was not
	// slowed: it stays, and with 4 runs the side can be called.
	v, ev = CompareNoise(six(100)[:4], slowRuns(runs(75, 70, 70*e(0.01), 70*e(-0.01)), 0), HigherIsBetter, prior, NoiseOptions{})
	if v.Outcome != Slower || ev.NOther != 4 || len(ev.HostSlow) != 0 || ev.SlowSide != [2]bool{} {
		t.Errorf("flagged run not slowed: %v (%s), want slower on 4 against 4, nothing set aside", v.Outcome, ev)
	}

	// The same runs without flags are judged as before this rule: a side
	// of mostly slowed runs, its own variance, no run set aside.
	v, ev = CompareNoise(base, runs(70, 70, 100), HigherIsBetter, prior, NoiseOptions{})
	if len(ev.SetAside) != 0 || len(ev.Left[1]) != 0 || ev.Basis != BasisRepeatsOwn {
		t.Errorf("unflagged: %v (%s), want the repeats' own variance, nothing set aside", v.Outcome, ev)
	}

	// Without history (Welch's t-test over the repeats), the flagged runs
	// are set aside too and the evidence says so.
	_, ev = CompareNoise(runs(100, 101, 99, 100), slowRuns(runs(70, 100, 101, 99), 0), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if ev.Basis != BasisRepeatsWelch || ev.NOther != 3 || !strings.Contains(ev.String(), "other run 1 of 4 (host slow") {
		t.Errorf("no history: %+v (%s), want Welch's test with the other's run 1 set aside", ev, ev)
	}
}

// TestNoiseJudgeHostSlow: without history the judge keeps the repeats'
// verdict only when no run was set aside; with the other's run on a slow
// host set aside it answers on the runs left (4 against 3).
func TestNoiseJudgeHostSlow(t *testing.T) {
	j := NoiseJudge{Cells: map[string]NoiseCell{
		"b/t@1": {Base: runs(100, 101, 99, 100), Other: slowRuns(runs(50, 100, 101, 99), 0)},
	}}
	fam := CompareFamily([]Pair{{Key: "b/t@1", Base: []float64{100, 101, 99, 100}, Other: []float64{50, 100, 101, 99}}},
		CompareOptions{Judges: []Judge{j}, Correction: NoCorrection})
	v := fam.Verdicts[0]
	if v.NOther != 3 || v.MedianOther != 100 || !strings.Contains(string(v.Evidence), "other run 1 of 4 (host slow") {
		t.Errorf("judge with a run on a slow host: n %d/%d, median %v, evidence %q; want the other's run 1 set aside",
			v.NBase, v.NOther, v.MedianOther, v.Evidence)
	}
}

// TestCompareNoiseDisturbed: a run flagged as disturbed by what was
// measured during it (Run.Disturbed) is set aside when worse than its
// side's clean runs, like a run on a slow host, but never withholds its
// side: with the same hand-worked history as TestCompareNoiseHostSlow, a
// single disturbed run at 70 against 100 is still called slower with the
// same p, and 3 runs of 100, 99, 80 (the 80 disturbed) against 3 of 100
// leave the other side 2 runs, judged and not held back.
func TestCompareNoiseDisturbed(t *testing.T) {
	prior := NoisePrior{Var: 0.0004, DF: 20, Points: 21}
	const why = "machine busy during run: other processes used 60% of all CPU"
	one := runs(70)
	one[0].Disturbed = why
	v, ev := CompareNoise(runs(100), one, HigherIsBetter, prior, NoiseOptions{})
	wantP := studentTwoSided(math.Log(0.7)/math.Sqrt(2*0.0004), 20)
	if v.Outcome != Slower || ev.Withheld || v.HostSlow != [2]bool{} || len(ev.HostSlow) != 0 {
		t.Fatalf("single disturbed run: %v (%s), want slower, nothing withheld or set aside", v.Outcome, ev)
	}
	near(t, "p single disturbed", v.P, wantP, 1e-15)

	three := runs(100, 99, 80)
	three[2].Disturbed = why
	v, ev = CompareNoise(runs(100, 101, 99), three, HigherIsBetter, prior, NoiseOptions{})
	if len(ev.HostSlow) != 1 || !strings.Contains(ev.HostSlow[0], "other run 3 of 3 (machine busy during run") ||
		ev.NOther != 2 || v.HostSlow != [2]bool{} || ev.Withheld {
		t.Fatalf("disturbed worse run: set aside %v, n other %d, slow sides %v, withheld %v; want run 3 set aside, 2 judged, none held back",
			ev.HostSlow, ev.NOther, v.HostSlow, ev.Withheld)
	}
	// With clean runs fewer than half, nothing is set aside: 1 clean run
	// cannot say what the side's normal is.
	most := runs(100, 80, 81)
	most[1].Disturbed, most[2].Disturbed = why, why
	if _, ev := CompareNoise(runs(100, 101, 99), most, HigherIsBetter, prior, NoiseOptions{}); len(ev.HostSlow) != 0 || ev.NOther != 3 {
		t.Errorf("disturbed majority: set aside %v, n other %d; want none set aside, 3 judged", ev.HostSlow, ev.NOther)
	}
	// A disturbed run that came out better than its side's clean runs stays.
	better := runs(100, 99, 120)
	better[2].Disturbed = why
	if _, ev := CompareNoise(runs(100, 101, 99), better, HigherIsBetter, prior, NoiseOptions{}); len(ev.HostSlow) != 0 || ev.NOther != 3 {
		t.Errorf("disturbed better run set aside: %v, n other %d", ev.HostSlow, ev.NOther)
	}
}
