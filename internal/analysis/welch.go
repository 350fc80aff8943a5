package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Welch is Welch's two-sample t-test on two samples (here log throughput):
// the difference of their means with the standard error of unequal
// variances, and the Welch-Satterthwaite degrees of freedom.
type Welch struct {
	// D is mean(other) − mean(base).
	D float64
	// SE is sqrt(s_b²/n_b + s_o²/n_o).
	SE float64
	// DF is the Welch-Satterthwaite degrees of freedom, between
	// min(n_b, n_o) − 1 and n_b + n_o − 2.
	DF float64
	// P is the two-sided p-value of D/SE under Student's t with DF degrees
	// of freedom: 0 when SE is 0 and D is not, 1 when both are.
	P float64
}

// MinWelchRepeats is the fewest runs per side WelchTest judges: with fewer,
// no run can be checked against the others (DixonOutlier needs 3), and a
// side of 2 leaves the test a single degree of freedom.
const MinWelchRepeats = 3

// WelchTest runs Welch's t-test of other against base. Welch's form, not
// the pooled-variance t-test, because two configurations need not vary
// alike (an fsync per commit adds the disk's spread to one side only); with
// equal sides the statistic is the pooled one and only the degrees of
// freedom are fewer. Both sides need 2 values or more.
func WelchTest(base, other []float64) Welch {
	nb, no := float64(len(base)), float64(len(other))
	mb, mo := mean(base), mean(other)
	vb := sumSq(base, mb) / (nb - 1) / nb
	vo := sumSq(other, mo) / (no - 1) / no
	w := Welch{D: mo - mb, SE: math.Sqrt(vb + vo)}
	if w.SE == 0 {
		w.DF, w.P = nb+no-2, 1
		if w.D != 0 {
			w.P = 0
		}
		return w
	}
	w.DF = (vb + vo) * (vb + vo) / (vb*vb/(nb-1) + vo*vo/(no-1))
	w.P = studentTwoSided(w.D/w.SE, w.DF)
	return w
}

// Interval is exp(D ± t·SE), the ratio's interval at the confidence level
// (two-sided) on the t distribution with DF degrees of freedom.
func (w Welch) Interval(confidence float64) (lo, hi float64) {
	if w.SE == 0 {
		return math.Exp(w.D), math.Exp(w.D)
	}
	q := studentQuantile((1+confidence)/2, w.DF)
	return math.Exp(w.D - q*w.SE), math.Exp(w.D + q*w.SE)
}

// dixonQ95 are the critical values of Dixon's Q (r10) at the 95% level for
// 3 to 10 values (Rorabacher, Anal. Chem. 63, 1991, table II): a Q above
// them happens by chance once in 20 samples of a normal population.
var dixonQ95 = [...]float64{3: 0.970, 4: 0.829, 5: 0.710, 6: 0.625, 7: 0.568, 8: 0.526, 9: 0.493, 10: 0.466}

// DixonOutlier applies Dixon's Q test (r10) at the 95% level to a sample of
// 3 to 10 values: Q is the gap between the lowest (or highest) value and
// its neighbour over the sample's range, and the value with the larger gap
// is an outlier when Q exceeds the critical value for the sample's size.
// It is the outlier test made for the few values a cell's repeats give
// (Grubbs' needs more than 3 to have any power, a MAD-based score is too
// unstable: on normal samples of 3 against 3 a modified z-score above 3.5
// flags a quarter of the cells); on normal samples it flags one in 20. It
// returns the outlier's index and Q, or ok false (fewer than 3 or more than
// 10 values, all equal, or no outlier).
func DixonOutlier(xs []float64) (i int, q float64, ok bool) {
	n := len(xs)
	if n < 3 || n >= len(dixonQ95) {
		return -1, 0, false
	}
	s := sortedCopy(xs)
	r := s[n-1] - s[0]
	if r == 0 {
		return -1, 0, false
	}
	lowGap, highGap := s[1]-s[0], s[n-1]-s[n-2]
	v := s[0]
	q = lowGap / r
	if highGap > lowGap {
		v, q = s[n-1], highGap/r
	}
	if q <= dixonQ95[n] {
		return -1, q, false
	}
	return slices.Index(xs, v), q, true
}

// welchGuard is what welchGuarded decided.
type welchGuard struct {
	// drop holds, per side, the index of a run to set aside, −1 for none.
	drop [2]int
	// notes describe the outliers found and what was done with them.
	notes []string
	// guard, when not empty, says why the t-test is not to be trusted: the
	// verdict falls back to the ranks.
	guard string
}

// welchGuarded checks that Welch's t-test on the log values yb, yo can be
// trusted. At 3 to 10 runs per side the t-test's assumption that can be
// checked is that no run lies far from its side's others (a heavy tail
// shows in so few runs as one such run): DixonOutlier looks at each side.
// A flagged run is no reason to give up the t-test when the call does not
// rest on it, so the test runs again without it (and without the other
// side's, when both have one): when both give the same call at alpha
// (slower, faster, or neither), the t-test stands. A run slower than its
// side's others is then set aside (a disturbance slows a run; the verdict
// says so), a faster one kept. When the call changes, guard says why and
// the ranks judge instead. A flagged run of a side of 3 cannot be checked
// that way (2 runs would be left) and is kept: the ranks of 3 against 3
// could call nothing (p >= 0.1), and a lone far run cannot make the t-test
// call a change (below).
//
// Setting a run aside never makes a call the full data did not make, so
// under no change the chance of a false call stays at most that of the
// t-test on all runs; on those, a single outlier among n runs moves the
// mean by δ/n and the standard error by about as much (runs 0, 0, δ give
// a mean of δ/3 and a standard error of δ/3), which holds t near 1: it
// hides a change more often than it makes one.
func welchGuarded(yb, yo []float64, dir Direction, opt CompareOptions) (g welchGuard) {
	g = welchGuard{drop: [2]int{-1, -1}}
	sides := [2][]float64{yb, yo}
	names := [2]string{"base", "other"}
	var found, unchecked []string
	kept := sides
	slow := true
	for side, ys := range sides {
		i, q, ok := DixonOutlier(ys)
		if !ok {
			continue
		}
		rest := slices.Delete(slices.Clone(ys), i, i+1)
		dev := 100 * (math.Exp(ys[i]-mean(rest)) - 1)
		what := fmt.Sprintf("%s run %d of %d (%+.1f%% from its others, Dixon Q %.2f)", names[side], i+1, len(ys), dev, q)
		if len(rest) < MinWelchRepeats {
			// A side of 3 cannot be judged without it; kept, it makes the
			// t-test conservative (see above), never a call.
			unchecked = append(unchecked, what+" kept: a side of 3 cannot be judged without it, and a lone far run "+
				"moves the mean and its standard error alike")
			continue
		}
		worse := ys[i] < mean(rest)
		if dir == LowerIsBetter {
			worse = !worse
		}
		slow = slow && worse
		found = append(found, what)
		kept[side] = rest
		g.drop[side] = i
	}
	defer func() {
		if g.guard == "" {
			g.notes = append(g.notes, unchecked...)
		}
	}()
	if len(found) == 0 {
		return g
	}
	all, without := WelchTest(yb, yo), WelchTest(kept[0], kept[1])
	if c1, c2 := welchCall(all, dir, opt), welchCall(without, dir, opt); c1 != c2 {
		g.guard = fmt.Sprintf("%s: the t-test's call rests on it (p %.2g with it, %.2g without)",
			strings.Join(found, " and "), all.P, without.P)
		g.drop = [2]int{-1, -1}
		return g
	}
	if !slow {
		for _, f := range found {
			g.notes = append(g.notes, f+" kept: the call is the same without it")
		}
		g.drop = [2]int{-1, -1}
		return g
	}
	for _, f := range found {
		g.notes = append(g.notes, f+" set aside as an outlier: the call is the same with it")
	}
	return g
}

// welchCall is the call a Welch test makes on its own at opt's alpha and
// minimum effect: Slower, Faster, or Unknown for neither.
func welchCall(w Welch, dir Direction, opt CompareOptions) Outcome {
	return decide(Verdict{Ratio: math.Exp(w.D), P: w.P, PAdjusted: w.P, Direction: dir,
		RatioLo: math.Inf(-1), RatioHi: math.Inf(1)}, opt)
}
