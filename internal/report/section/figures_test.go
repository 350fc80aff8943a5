package section

import (
	"math"
	"testing"

	"benchlab/internal/store"
)

// TestDownsample checks that a long series is cut to at most
// MaxSeriesPoints points without losing statements or time.
func TestDownsample(t *testing.T) {
	for _, n := range []int{10, MaxSeriesPoints, MaxSeriesPoints + 1, 7201} {
		var ivs []store.Interval
		var stmts int64
		for i := 0; i < n; i++ {
			ivs = append(ivs, store.Interval{Sec: i - 5, Seconds: 1, Statements: int64(i)})
			stmts += int64(i)
		}
		out := Downsample(ivs)
		var gotStmts int64
		var gotSecs float64
		for _, iv := range out {
			gotStmts += iv.Statements
			gotSecs += iv.Seconds
		}
		if len(out) > MaxSeriesPoints || gotStmts != stmts || gotSecs != float64(n) || out[0].Sec != -5 {
			t.Errorf("%d points: got %d points, %d statements (want %d), %v s, first sec %d",
				n, len(out), gotStmts, stmts, gotSecs, out[0].Sec)
		}
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want any
	}{
		{0, 0.0}, {1234567, 1235000.0}, {12.3456, 12.35}, {0.000123456, 0.0001235}, {-2.5, -2.5},
	} {
		if got := Num(c.in); got != c.want {
			t.Errorf("Num(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if Num(math.NaN()) != nil || Num(math.Inf(1)) != nil {
		t.Error("NaN or infinity is not null")
	}
}
