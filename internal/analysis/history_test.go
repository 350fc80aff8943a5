package analysis

import (
	"math"
	"strings"
	"testing"
)

// historyRuns builds points of runs with values
// base*level[i]*(1+day)*(1+wobble): each point moved by a fixed day effect
// of up to ±1% and each run by a fixed pattern of up to ±2%. Values are
// fixed, so every outcome below is deterministic.
func historyRuns(base float64, levels []float64, repeats int) [][]Run {
	wobble := []float64{0.01, -0.02, 0.0, 0.02, -0.01}
	day := []float64{0, 0.01, -0.01, 0.005}
	var out [][]Run
	for i, l := range levels {
		var p []Run
		for r := range repeats {
			w := wobble[(i+r)%len(wobble)]
			p = append(p, Run{Value: base * l * (1 + day[i%len(day)]) * (1 + w), RelVar: math.NaN()})
		}
		out = append(out, p)
	}
	return out
}

func TestJudgeHistory(t *testing.T) {
	aa := make([]float64, 10)
	for i := range aa {
		aa[i] = 1 + 0.01*float64(i%3-1) // points within ±1% of each other
	}
	for _, tc := range []struct {
		name    string
		levels  []float64
		repeats int
		want    Outcome // Unknown: anything but slower or faster
		cp      int     // index of the one change point expected, -1 for none
	}{
		// Three points, 5 repeats each, a 20% step at the third: 10 runs
		// against 5, Mann-Whitney's floor 2/C(15,5) = 0.00067 < 0.01.
		{"step at newest of 3", []float64{1, 1, 0.8}, 5, Slower, -1},
		{"A/A of 10", aa, 3, Unknown, -1},
		// A step in the middle of a long history: found where it is, and
		// the newest point judged against the points after it.
		{"step in the middle", []float64{1, 1, 1, 1, 1, 1, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8}, 3, Unknown, 6},
		{"one point", []float64{1}, 3, Unknown, -1},
		// A step at the newest of 8: judged against 7 points by their
		// spread, and called.
		{"step at newest of 8", []float64{1, 1, 1, 1, 1, 1, 1, 0.8}, 3, Slower, 7},
		// One run per experiment: the runs alone could never be called
		// (Mann-Whitney's floor for 9 against 1 is 0.2), the points'
		// spread can.
		{"single runs, step at newest of 10", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 0.8}, 1, Slower, 9},
		{"single runs, A/A of 10", aa, 1, Unknown, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := JudgeHistory(historyRuns(1000, tc.levels, tc.repeats), HigherIsBetter, NoisePrior{}, HistoryOptions{})
			got := h.Newest.Outcome
			if got == Same {
				got = Unknown
			}
			if got != tc.want {
				t.Errorf("newest: %v (ratio %.3f, p %.2g, %s), want %v", h.Newest.Outcome, h.Newest.Ratio, h.Newest.P, h.Newest.Evidence, tc.want)
			}
			switch {
			case tc.cp < 0 && len(h.ChangePoints) > 0:
				t.Errorf("change points %+v, want none", h.ChangePoints)
			case tc.cp >= 0 && (len(h.ChangePoints) != 1 || h.ChangePoints[0].Index != tc.cp):
				t.Errorf("change points %+v, want one at %d", h.ChangePoints, tc.cp)
			case tc.cp >= 0 && tc.cp < len(tc.levels)-1 && h.Regime != tc.cp:
				t.Errorf("regime starts at %d, want %d", h.Regime, tc.cp)
			}
			if tc.cp == len(tc.levels)-1 && h.Regime != 0 {
				t.Errorf("regime starts at %d; a change point at the newest point leaves the history before it whole", h.Regime)
			}
		})
	}
}

func TestPointsNeeded(t *testing.T) {
	if n := PointsNeeded(0.05, 0, ChangeOptions{}); n != 3 {
		t.Errorf("unknown spread: %d, want 3", n)
	}
	small, large := PointsNeeded(0.05, 0.005, ChangeOptions{}), PointsNeeded(0.05, 0.02, ChangeOptions{})
	if small < 3 || large <= small {
		t.Errorf("needed %d points at 0.5%% spread and %d at 2%%; want more for the noisier", small, large)
	}
	// The figure is what ChangePoints itself needs: a series of that many
	// points with the step halfway finds it there, one point fewer finds
	// nothing.
	series := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = 1 + 0.02*float64(1-2*(i%2))
			if i >= n/2 {
				s[i] *= 0.95
			}
		}
		return s
	}
	if cps := ChangePoints(series(large), ChangeOptions{}); len(cps) != 1 || cps[0].Index != large/2 {
		t.Errorf("%d points: change points %+v, want one at %d", large, cps, large/2)
	}
	if cps := ChangePoints(series(large-1), ChangeOptions{}); len(cps) > 0 {
		t.Errorf("%d points: change points %+v, want none", large-1, cps)
	}
}

// TestJudgeHistoryEmptyPoint: a point with no run left (every run of it
// stalled, left out by the caller) has no value, makes no change point in
// an A/A history, and is no point of the regime's spread: the newest of 6
// points is judged by the 4 points with a value before it.
func TestJudgeHistoryEmptyPoint(t *testing.T) {
	points := historyRuns(1000, []float64{1, 1, 1, 1, 1, 1}, 3)
	points[2] = nil
	h := JudgeHistory(points, HigherIsBetter, NoisePrior{}, HistoryOptions{})
	if !math.IsNaN(h.Values[2]) || len(h.ChangePoints) != 0 {
		t.Errorf("values %v, change points %+v; want no value at 2 and no change point", h.Values, h.ChangePoints)
	}
	if !h.Between || h.Newest.Outcome == Slower || h.Newest.Outcome == Faster {
		t.Errorf("newest %v by %s; want judged by the points' spread, not called", h.Newest.Outcome, h.Newest.Evidence)
	}
	if want := "t-test over the 4 points' own spread"; !strings.HasPrefix(string(h.Newest.Evidence), want) {
		t.Errorf("evidence %q, want it to start %q", h.Newest.Evidence, want)
	}
}
