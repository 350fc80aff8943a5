package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

func TestBatchMeansHandWorked(t *testing.T) {
	signs := []float64{1, -1, -1, 1, 1, -1, -1, 1}
	var iid []float64
	for _, s := range signs {
		iid = append(iid, 10+s)
	}
	// Lag-1: Σ d_i d_{i+1} = -1 over Σ d² = 8, so -0.125, accepted at size 1.
	// Batch variance 8/7, variance of the mean (8/7)/8 = 1/7.
	b := BatchMeansOf(iid)
	if !b.OK || b.Size != 1 || b.Batches != 8 {
		t.Fatalf("iid series: %+v, want OK at size 1 with 8 batches", b)
	}
	near(t, "lag1", b.Lag1, -0.125, 1e-12)
	near(t, "mean", b.Mean, 10, 1e-12)
	near(t, "var of mean", b.VarMean, 1.0/7, 1e-12)
	near(t, "relative var", b.RelVar(), 1.0/700, 1e-12)

	// Blocks of 4 equal seconds: sizes 1 and 2 are correlated, size 4 gives
	// the 8 means above.
	var blocks []float64
	for _, s := range signs {
		for range 4 {
			blocks = append(blocks, 10+s)
		}
	}
	b = BatchMeansOf(blocks)
	if !b.OK || b.Size != 4 || b.Batches != 8 {
		t.Fatalf("blocked series: %+v, want OK at size 4 with 8 batches", b)
	}
	near(t, "blocked var of mean", b.VarMean, 1.0/7, 1e-12)
	// Treating the 32 seconds as independent gives a variance of the mean
	// about 4x smaller than the batch means do.
	naive := stddev(blocks, 10, 1)
	if naive*naive/32 > b.VarMean/3 {
		t.Errorf("naive variance %.4g should be well below the batch-means one %.4g", naive*naive/32, b.VarMean)
	}

	// A trend stays correlated at every size that keeps 8 batches.
	trend := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	b = BatchMeansOf(trend)
	if b.OK || !strings.Contains(b.Reason, "correlated") || !math.IsNaN(b.RelVar()) {
		t.Errorf("trend: %+v, want not OK because correlated", b)
	}
	// Too short.
	b = BatchMeansOf([]float64{1, 2, 3})
	if b.OK || !strings.Contains(b.Reason, "fewer than the 8 batches") {
		t.Errorf("short series: %+v", b)
	}
	// Alternating seconds: lag-1 -0.94 at size 1, constant pairs at size 2.
	alt := []float64{10, 12, 10, 12, 10, 12, 10, 12, 10, 12, 10, 12, 10, 12, 10, 12}
	b = BatchMeansOf(alt)
	if !b.OK || b.Size != 2 || b.VarMean != 0 || b.Mean != 11 {
		t.Errorf("alternating: %+v, want OK at size 2 with variance 0", b)
	}
}

func runs(vals ...float64) []Run {
	out := make([]Run, len(vals))
	for i, v := range vals {
		out[i] = Run{Value: v, RelVar: math.NaN()}
	}
	return out
}

func TestCompareNoisePriorHandWorked(t *testing.T) {
	e := math.Exp
	base := runs(100, 100*e(0.02), 100*e(-0.02))
	other := runs(90, 90*e(0.02), 90*e(-0.02))
	// SS = 2·0.0008, ν = 4; prior 0.0004 on 20 df: s² = (0.008+0.0016)/24 =
	// 0.0004; SE = sqrt(0.0004·2/3) = 0.016330; d = ln 0.9 = -0.105361;
	// t = -6.452 on 24 df; t_0.975,24 = 2.0639.
	v, ev := CompareNoise(base, other, HigherIsBetter, NoisePrior{Var: 0.0004, DF: 20, Points: 25}, NoiseOptions{})
	if ev.Basis != BasisPrior || ev.DF != 24 || ev.NBase != 3 || ev.NOther != 3 {
		t.Fatalf("evidence %+v, want prior with 24 df", ev)
	}
	near(t, "ratio", v.Ratio, 0.9, 1e-12)
	se := math.Sqrt(0.0004 * 2 / 3)
	near(t, "ratio lo", v.RatioLo, math.Exp(math.Log(0.9)-2.0639*se), 2e-4)
	near(t, "ratio hi", v.RatioHi, math.Exp(math.Log(0.9)+2.0639*se), 2e-4)
	if !(v.P > 1e-7 && v.P < 1e-5) || v.Outcome != Slower {
		t.Errorf("p %.3g outcome %v, want about 1e-6 and slower", v.P, v.Outcome)
	}
	if s := ev.String(); s != "noise prior (25 history points) + repeats 3/3" {
		t.Errorf("evidence text %q", s)
	}

	// A 30% drop from one run per target: d = ln 0.7 = -0.3567, SE =
	// sqrt(2·0.0025) = 0.0707, t = -5.04 on 30 df.
	v, ev = CompareNoise(runs(100), runs(70), HigherIsBetter, NoisePrior{Var: 0.0025, DF: 30, Points: 40}, NoiseOptions{})
	if v.Outcome != Slower || !ev.SingleRun() || ev.DF != 30 || !strings.Contains(ev.String(), "single run") {
		t.Errorf("single run: %v p=%.3g %+v", v.Outcome, v.P, ev)
	}
	if !(v.P > 5e-6 && v.P < 1e-4) {
		t.Errorf("single run p %.3g, want about 2e-5", v.P)
	}
	// The same single runs with a 10% drop cannot be called: t = -1.49.
	v, _ = CompareNoise(runs(100), runs(90), HigherIsBetter, NoisePrior{Var: 0.0025, DF: 30, Points: 40}, NoiseOptions{})
	if v.Outcome != Unknown {
		t.Errorf("10%% from single runs with 5%% noise: %v (p=%.3g), want unknown", v.Outcome, v.P)
	}
}

func TestCompareNoiseWithinRunFloor(t *testing.T) {
	prior := NoisePrior{Var: 0.0001, DF: 20, Points: 30}
	// Identical values: SS = 0, s² = 20·0.0001/22 = 9.09e-5; SE² =
	// s²·(1/2+1/2), SE = 0.009535, t_0.975,22 = 2.0739: the interval
	// exp(±0.01977) is inside ±2%, so same.
	v, _ := CompareNoise(runs(100, 100), runs(100, 100), HigherIsBetter, prior, NoiseOptions{})
	s2 := 20 * 0.0001 / 22
	near(t, "hi", v.RatioHi, math.Exp(2.0739*math.Sqrt(s2)), 1e-4)
	if v.Outcome != Same {
		t.Errorf("quiet runs: %v [%.4f, %.4f], want same", v.Outcome, v.RatioLo, v.RatioHi)
	}
	// One base run was disturbed (within-run variance 0.01): it counts with
	// 0.01 instead of s², SE² = (0.01+s²)/4 + 2s²/4 = 0.0025682, SE = 0.050677.
	base := runs(100, 100)
	base[0].RelVar = 0.01
	v, ev := CompareNoise(base, runs(100, 100), HigherIsBetter, prior, NoiseOptions{})
	se := math.Sqrt((0.01+s2)/4 + 2*s2/4)
	near(t, "hi with floor", v.RatioHi, math.Exp(2.0739*se), 1e-3)
	if v.Outcome != Unknown || ev.Within != 1 {
		t.Errorf("disturbed run: %v, within %d; want unknown and 1", v.Outcome, ev.Within)
	}
}

func TestCompareNoiseFallback(t *testing.T) {
	b := []float64{100, 101, 99, 100.5, 99.5}
	o := []float64{90, 91, 89, 90.5, 89.5}
	short := NoisePrior{Var: 0.001, DF: 4, Points: 6}
	v, ev := CompareNoise(runs(b...), runs(o...), HigherIsBetter, short, NoiseOptions{})
	logs := func(xs []float64) []float64 {
		var out []float64
		for _, x := range xs {
			out = append(out, math.Log(x))
		}
		return out
	}
	w := WelchTest(logs(b), logs(o))
	if ev.Basis != BasisRepeatsWelch || v.P != w.P || v.Outcome != Slower || ev.DF != 8 {
		t.Errorf("short history: basis %v p %.4g %v, want Welch's test on the repeats, p %.4g, slower", ev.Basis, v.P, v.Outcome, w.P)
	}
	if !strings.Contains(ev.Why, "too short: 6 runs, 4 degrees of freedom, 10 needed") || ev.String() != "repeats 5/5, Welch t-test on log values" {
		t.Errorf("why %q, text %q", ev.Why, ev.String())
	}
	// Two runs a side: too few for Welch's test and its outlier check, so
	// the ranks judge.
	v, ev = CompareNoise(runs(b[:2]...), runs(o[:2]...), HigherIsBetter, short, NoiseOptions{})
	if mw := Compare(b[:2], o[:2], HigherIsBetter, CompareOptions{}); ev.Basis != BasisRepeats || v.P != mw.P || ev.Guard != "" {
		t.Errorf("2 against 2: basis %v p %.4g guard %q, want Mann-Whitney p %.4g", ev.Basis, v.P, ev.Guard, mw.P)
	}
	_, ev = CompareNoise(runs(b...), runs(o...), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if !strings.Contains(ev.Why, "no noise history") {
		t.Errorf("no history: %q", ev.Why)
	}
	// A single run each and no history: nothing can be said.
	v, ev = CompareNoise(runs(100), runs(50), HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if ev.Basis != BasisRepeats || v.Outcome != Unknown {
		t.Errorf("single runs without history: %v %v", ev.Basis, v.Outcome)
	}
	// Within-run variances for every run and no history: the t-test on the
	// repeats, ν = 3+3−2.
	rb, ro := runs(100, 102, 98), runs(80, 81, 79)
	for i := range rb {
		rb[i].RelVar, ro[i].RelVar = 1e-5, 1e-5
	}
	v, ev = CompareNoise(rb, ro, HigherIsBetter, NoisePrior{}, NoiseOptions{})
	if ev.Basis != BasisRepeatsWithin || ev.DF != 4 || v.Outcome != Slower {
		t.Errorf("repeats + within: %+v outcome %v p=%.3g", ev, v.Outcome, v.P)
	}
}

// TestCompareNoiseFalseAlarms draws A/A pairs with log-normal run-to-run
// noise of 3% and a prior of the same size: the share of slower or faster
// calls must stay near alpha = 0.01 (both sides together), and a 10% drop
// at 3 repeats must be found almost always.
func TestCompareNoiseFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sigma, trials = 0.03, 4000
	prior := NoisePrior{Var: sigma * sigma, DF: 40, Points: 50}
	draw := func(level float64, n int) []Run {
		out := make([]Run, n)
		for i := range out {
			out[i] = Run{Value: level * math.Exp(sigma*rng.NormFloat64()), RelVar: math.NaN()}
		}
		return out
	}
	var alarms, found int
	for range trials {
		if v, _ := CompareNoise(draw(100, 3), draw(100, 3), HigherIsBetter, prior, NoiseOptions{}); v.Outcome == Slower || v.Outcome == Faster {
			alarms++
		}
		if v, _ := CompareNoise(draw(100, 3), draw(90, 3), HigherIsBetter, prior, NoiseOptions{}); v.Outcome == Slower {
			found++
		}
	}
	if rate := float64(alarms) / trials; rate > 0.015 {
		t.Errorf("false alarms %.4f of A/A cells, want <= 0.015 at alpha 0.01", rate)
	}
	if rate := float64(found) / trials; rate < 0.9 {
		t.Errorf("10%% drops found in %.3f of cells at 3 repeats with 3%% noise, want >= 0.9", rate)
	}
}

func TestPoolPrior(t *testing.T) {
	// ln(110/100) = 0.09531; two values: variance d²/2 on 1 df.
	p := PoolPrior(NoisePrior{}, []float64{100, 110})
	d := math.Log(1.1)
	near(t, "var", p.Var, d*d/2, 1e-12)
	if p.DF != 1 || p.Points != 2 {
		t.Errorf("df %d points %d, want 1 and 2", p.DF, p.Points)
	}
	// Pooling with 3 df of variance 0.001: (1·d²/2 + 3·0.001)/4.
	q := CombinePrior(p, NoisePrior{Var: 0.001, DF: 3, Points: 4})
	near(t, "pooled var", q.Var, (d*d/2+0.003)/4, 1e-12)
	if q.DF != 4 || q.Points != 6 {
		t.Errorf("pooled df %d points %d", q.DF, q.Points)
	}
	if r := PoolPrior(q, []float64{5}); r.DF != 4 || r.Points != 7 {
		t.Errorf("a single run adds a point and no df: %+v", r)
	}
}

func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{{0.975, 4, 2.7764}, {0.975, 24, 2.0639}, {0.995, 10, 3.1693}} {
		near(t, "quantile", studentQuantile(c.p, c.df), c.want, 1e-3)
	}
}

func TestNoiseJudge(t *testing.T) {
	e := math.Exp
	j := NoiseJudge{Cells: map[string]NoiseCell{
		"b/t@1": {Base: runs(100, 100*e(0.02), 100*e(-0.02)), Other: runs(90, 90*e(0.02), 90*e(-0.02)),
			Prior: NoisePrior{Var: 0.0004, DF: 20, Points: 25}},
		"c/t@1": {Base: runs(100, 101, 99), Other: runs(90, 91, 89)},
	}}
	fam := CompareFamily([]Pair{
		{Key: "b/t@1", Base: []float64{100, 100 * e(0.02), 100 * e(-0.02)}, Other: []float64{90, 90 * e(0.02), 90 * e(-0.02)}},
		{Key: "c/t@1", Base: []float64{100, 101, 99}, Other: []float64{90, 91, 89}},
		{Key: "unknown", Base: []float64{100, 101, 99}, Other: []float64{90, 91, 89}},
	}, CompareOptions{Judges: []Judge{j}, Correction: NoCorrection})
	v := fam.Verdicts
	if v[0].Outcome != Slower || v[0].Evidence != "noise prior (25 history points) + repeats 3/3" || math.Abs(v[0].Ratio-0.9) > 1e-12 {
		t.Errorf("cell with a prior: %v %q ratio %.4f", v[0].Outcome, v[0].Evidence, v[0].Ratio)
	}
	// Without history: Welch's t-test over the repeats (3 against 3, where
	// Mann-Whitney cannot reach p < 0.01).
	if v[1].Outcome != Slower || v[1].Evidence != "repeats 3/3, Welch t-test on log values" {
		t.Errorf("cell without history: %v %q", v[1].Outcome, v[1].Evidence)
	}
	if v[2].Evidence != EvidenceRepeats {
		t.Errorf("cell the judge does not know: %q", v[2].Evidence)
	}
}

// TestCompareNoisePriorConflict: one of three base runs was stalled 26%
// (log −0.3). Worked by hand: base logs 0, 0, −0.3 have mean −0.1 and SS
// 0.01 + 0.01 + 0.04 = 0.06, the other side none; own s² = 0.06/4 =
// 0.015 against the history's 0.0004: F = 37.5 on (4, 100) df, p far
// below 0.001, so the repeats conflict with the prior. Pooled as before,
// s² = (100·0.0004 + 0.06)/104 = 0.00096154, SE = sqrt(s²·2/3) = 0.025318,
// t = 0.1/SE = 3.95 on 104 df (p ≈ 1.4e-4): the stall alone would have
// been called faster. Leaving the stalled run out leaves SS 0, which agrees
// with the history, so it is set aside: base 0, 0 against 0, 0, 0, d = 0,
// s² = 100·0.0004/103, SE² = s²(1/2 + 1/3), and the interval ±t(0.975,
// 103)·SE = ±3.6% is wider than the 2% minimum effect: unknown, not
// faster. Repeats that agree with the history (own s² 0.0001, F = 0.25)
// keep the prior as they are.
// TestCompareNoiseDisturbedHost works a single-run verdict on a host whose
// history shows disturbed runs: the chance that one explains the difference
// is added to the t-test's p.
func TestCompareNoiseDisturbedHost(t *testing.T) {
	e := math.Exp
	quiet := NoisePrior{Var: 0.0004, DF: 100, Points: 200}
	// 4 of 200 runs were disturbed, by 0.5, 0.4, 0.3 and 0.1 on the log scale.
	host := quiet
	host.Shifts, host.AsidePoints = []float64{0.5, 0.4, 0.3, 0.1}, 0
	near(t, "rate", host.DisturbedRate(), 0.02, 1e-15)
	se := math.Sqrt(2 * 0.0004)
	for _, c := range []struct {
		d       float64
		explain int
	}{{-0.357, 2}, {-0.2, 3}, {-0.6, 0}} {
		v, ev := CompareNoise(runs(100), runs(100*e(c.d)), HigherIsBetter, host, NoiseOptions{})
		want := 0.02 * float64(c.explain) / 4
		near(t, fmt.Sprintf("d %v: PDisturbed", c.d), ev.PDisturbed, want, 1e-12)
		pt := studentTwoSided(math.Abs(c.d)/se, 100)
		near(t, fmt.Sprintf("d %v: p", c.d), v.P, pt+want, 1e-12)
		if wantOut := map[bool]Outcome{true: Slower, false: Unknown}[want < 0.01]; v.Outcome != wantOut {
			t.Errorf("d %v: %v, want %v (p %.3g)", c.d, v.Outcome, wantOut, v.P)
		}
		if want > 0 && !strings.Contains(ev.String(), "host disturbed 4 of 200 history runs") {
			t.Errorf("d %v: evidence %q does not name the host's disturbances", c.d, ev)
		}
	}
	// The quiet host's history calls the 30% single run slower.
	if v, ev := CompareNoise(runs(100), runs(100*e(-0.357)), HigherIsBetter, quiet, NoiseOptions{}); v.Outcome != Slower || ev.PDisturbed != 0 {
		t.Errorf("quiet host: %v, PDisturbed %v; want slower, 0", v.Outcome, ev.PDisturbed)
	}
	// A disturbance slows a run: the other side came out higher, so only a
	// disturbed base run explains it, and the base has 3 runs that agree.
	v, ev := CompareNoise(runs(100, 100, 100), runs(100*e(0.357)), HigherIsBetter, host, NoiseOptions{})
	if ev.PDisturbed != 0 || v.Outcome != Faster {
		t.Errorf("checked base: %v, PDisturbed %v; want faster, 0", v.Outcome, ev.PDisturbed)
	}
	// Two runs against two are checked by the conflict test: nothing added.
	if _, ev := CompareNoise(runs(100, 100), runs(70, 70), HigherIsBetter, host, NoiseOptions{}); ev.PDisturbed != 0 {
		t.Errorf("2 against 2: PDisturbed %v, want 0", ev.PDisturbed)
	}
}

// TestCompareNoiseSetAsideOnlySlow: a disturbance slows a run, so a side
// whose runs were mostly slowed does not lose its one normal run to look
// calm: with [80 80 100] against a calm base, setting 100 aside would leave
// two agreeing runs and call a 20% slowdown; the verdict falls back to the
// repeats' own variance instead.
func TestCompareNoiseSetAsideOnlySlow(t *testing.T) {
	prior := NoisePrior{Var: 0.0004, DF: 100, Points: 130}
	v, ev := CompareNoise(runs(100, 100, 100), runs(80, 80, 100), HigherIsBetter, prior, NoiseOptions{})
	if len(ev.SetAside) != 0 || ev.Basis != BasisRepeatsOwn || v.Outcome == Slower {
		t.Errorf("mostly slowed side: %v, evidence %s; want no run set aside, the repeats' own variance, not slower", v.Outcome, ev)
	}
	// The mirror image, one slow run among normal ones, is set aside.
	_, ev = CompareNoise(runs(100, 100, 100), runs(100, 100, 80), HigherIsBetter, prior, NoiseOptions{})
	if ev.SetAsideIndex != [2]int{-1, 2} {
		t.Errorf("one slow run: set aside %v (%s), want the other's run 3", ev.SetAsideIndex, ev)
	}
}

func TestCompareNoisePriorConflict(t *testing.T) {
	prior := NoisePrior{Var: 0.0004, DF: 100, Points: 130}
	e := math.Exp
	base, other := runs(100, 100, 100*e(-0.3)), runs(100, 100, 100)
	near(t, "F tail", fUpper(37.5, 4, 100), fUpper(0.015/0.0004, 4, 100), 1e-15)
	if p := fUpper(37.5, 4, 100); p > 1e-12 {
		t.Fatalf("F(4,100) tail at 37.5 = %v, want tiny", p)
	}
	v, ev := CompareNoise(base, other, HigherIsBetter, prior, NoiseOptions{})
	if ev.Basis != BasisPrior || ev.NBase != 2 || ev.NOther != 3 || ev.DF != 103 ||
		!strings.Contains(ev.String(), "base run 3 of 3 (-25.9% from its others) set aside as disturbed") {
		t.Fatalf("stalled run: evidence %+v (%s), want the prior with base run 3 set aside", ev, ev)
	}
	if v.Outcome != Unknown || v.Ratio != 1 {
		t.Errorf("stalled run: %v ratio %v, want unknown at ratio 1", v.Outcome, v.Ratio)
	}
	if ev.SetAsideIndex != [2]int{2, -1} || !slices.Equal(ev.Kept(0, []float64{1, 2, 3}), []float64{1, 2}) ||
		!slices.Equal(ev.Kept(1, []float64{1, 2, 3}), []float64{1, 2, 3}) {
		t.Errorf("stalled run: set-aside index %v, kept %v; want base run index 2 left out", ev.SetAsideIndex, ev.Kept(0, []float64{1, 2, 3}))
	}
	se := math.Sqrt(100 * 0.0004 / 103 * (1.0/2 + 1.0/3))
	near(t, "interval high", v.RatioHi, e(studentQuantile(0.975, 103)*se), 1e-9)
	// What pooling would have given: the hand figures above.
	s2 := (100*0.0004 + 0.06) / 104
	if tt := 0.1 / math.Sqrt(s2*2/3); math.Abs(tt-3.95) > 0.01 || studentTwoSided(tt, 104) > 0.001 {
		t.Fatalf("hand figures: t %.3f p %.3g", tt, studentTwoSided(tt, 104))
	}
	// Agreeing repeats keep the prior.
	v, ev = CompareNoise(runs(100, 100*e(0.01), 100*e(-0.01)), runs(90, 90*e(0.01), 90*e(-0.01)), HigherIsBetter, prior, NoiseOptions{})
	if ev.Basis != BasisPrior || len(ev.SetAside) != 0 || v.Outcome != Slower {
		t.Errorf("agreeing repeats: %+v %v, want the prior and slower", ev, v.Outcome)
	}
	// A host whose runs stall now and then (5% of runs lose 10-40%): A/A
	// cells of 3 repeats pooled with the quiet history alone gave false
	// alarms in 20.4% of these 4000 cells; the check keeps them below 2%.
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int) []Run {
		out := make([]Run, n)
		for i := range out {
			y := 0.02 * rng.NormFloat64()
			if rng.Float64() < 0.05 {
				y -= 0.1 + 0.3*rng.Float64()
			}
			out[i] = Run{Value: 100 * math.Exp(y), RelVar: math.NaN()}
		}
		return out
	}
	alarms, found := 0, 0
	const trials = 4000
	slower := func(rs []Run) []Run {
		for i := range rs {
			rs[i].Value *= 0.9
		}
		return rs
	}
	for range trials {
		if v, _ := CompareNoise(draw(3), draw(3), HigherIsBetter, prior, NoiseOptions{}); v.Outcome == Slower || v.Outcome == Faster {
			alarms++
		}
		if v, _ := CompareNoise(draw(3), slower(draw(3)), HigherIsBetter, prior, NoiseOptions{}); v.Outcome == Slower {
			found++
		}
	}
	t.Logf("stalling host, 3 repeats: false alarms %.4f, 10%% found %.4f", float64(alarms)/trials, float64(found)/trials)
	// Setting stalled runs aside raises the false alarms from 0.9% to 1.95%
	// of these cells (a side with two mild stalls can lose one and keep the
	// other), within issue 15's bound of 5%.
	if rate := float64(alarms) / trials; rate > 0.03 {
		t.Errorf("stalling host: false alarms %.4f of A/A cells at 3 repeats, want <= 0.03", rate)
	}
	// A 10% slowdown: of these cells 26% hold a stalled run, which used to
	// send the cell to Mann-Whitney (never below p = 0.1 at 3 and 3).
	if rate := float64(found) / trials; rate < 0.9 {
		t.Errorf("stalling host: 10%% slowdowns found in %.4f of cells at 3 repeats, want >= 0.9", rate)
	}
}

// TestCompareNoiseSetAsideEachSide: one stalled run on each side. Logs
// base 0, 0.01, −0.10 and other −0.10, −0.09, −0.20 against a history of
// variance 0.0001 (100 df). Leaving out the base's stall alone leaves the
// other side's SS 0.0074 (mean −0.13): s² = 0.00745/3, F = 24.8 on (3,
// 100), far from agreeing; leaving out both stalls leaves 0, 0.01 against
// −0.10, −0.09, SS 0.0001 on 2 df, which agrees. Then d = −0.10, s² =
// (100·0.0001 + 0.0001)/102, SE² = s²(1/2 + 1/2): t = −10.05, slower.
func TestCompareNoiseSetAsideEachSide(t *testing.T) {
	prior := NoisePrior{Var: 0.0001, DF: 100, Points: 150}
	e := math.Exp
	base, other := runs(100, 100*e(0.01), 100*e(-0.10)), runs(100*e(-0.10), 100*e(-0.09), 100*e(-0.20))
	if p := fUpper(0.00745/3/0.0001, 3, 100); p > 1e-9 {
		t.Fatalf("one stall left: F tail %v, want tiny", p)
	}
	v, ev := CompareNoise(base, other, HigherIsBetter, prior, NoiseOptions{})
	if ev.Basis != BasisPrior || ev.NBase != 2 || ev.NOther != 2 || ev.DF != 102 {
		t.Fatalf("evidence %+v, want the prior on 2 and 2 runs, 102 df", ev)
	}
	for _, want := range []string{"base run 3 of 3 (-10.0% from its others)", "other run 3 of 3 (-10.0% from its others)"} {
		if !slices.Contains(ev.SetAside, want) {
			t.Errorf("set aside %q, want it to name %q", ev.SetAside, want)
		}
	}
	s2 := (100*0.0001 + 0.0001) / 102
	tt := -0.10 / math.Sqrt(s2)
	near(t, "t", tt, -10.05, 0.01)
	near(t, "p", v.P, studentTwoSided(tt, 102), 1e-12)
	near(t, "ratio", v.Ratio, e(-0.10), 1e-12)
	if v.Outcome != Slower {
		t.Errorf("outcome %v, want slower", v.Outcome)
	}
}

// TestCompareNoiseOwnVariance: repeats spread evenly over 6%, no single run
// to blame, against a history of 1% (variance 0.0001, 100 df). Logs base 0,
// 0.03, 0.06 and other the same minus 0.15: SS 0.0018 per side, s² =
// 0.0036/4 = 0.0009, F = 9 on (4, 100): conflict. One run out leaves
// s² = 0.00225/3 (F = 7.5 on (3, 100)), one per side 0.0009/2 (F = 4.5 on
// (2, 100)), both p < 0.05: nothing is set aside, and the t-test runs on
// the repeats' own variance: SE = sqrt(0.0009·2/3) = 0.024495, t = −6.12
// on 4 df, p ≈ 0.0036 (Mann-Whitney could not go below 0.1).
func TestCompareNoiseOwnVariance(t *testing.T) {
	prior := NoisePrior{Var: 0.0001, DF: 100, Points: 150}
	e := math.Exp
	base := runs(100, 100*e(0.03), 100*e(0.06))
	other := runs(100*e(-0.15), 100*e(-0.12), 100*e(-0.09))
	for _, c := range []struct {
		f       float64
		d1      float64
		atLeast float64
		atMost  float64
		what    string
	}{{9, 4, 0, 0.001, "all runs"}, {7.5, 3, 0, 0.05, "one run out"}, {4.5, 2, 0, 0.05, "one per side out"}} {
		if p := fUpper(c.f, c.d1, 100); p < c.atLeast || p >= c.atMost {
			t.Fatalf("%s: F tail %v, want below %v", c.what, p, c.atMost)
		}
	}
	v, ev := CompareNoise(base, other, HigherIsBetter, prior, NoiseOptions{})
	if ev.Basis != BasisRepeatsOwn || ev.DF != 4 || len(ev.SetAside) != 0 || !strings.Contains(ev.Why, "more than one disturbed run explains") {
		t.Fatalf("evidence %+v, want the repeats' own variance on 4 df", ev)
	}
	tt := -0.15 / math.Sqrt(0.0009*2/3)
	near(t, "t", tt, -6.124, 0.001)
	near(t, "p", v.P, studentTwoSided(tt, 4), 1e-12)
	if v.P > 0.01 || v.Outcome != Slower || ev.Short() != "rep-t" {
		t.Errorf("p %v outcome %v (%s), want slower below 0.01", v.P, v.Outcome, ev.Short())
	}
}
