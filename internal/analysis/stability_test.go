package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// throughput returns n seconds of N(1000, 20²) per-second throughput with f
// applied to each second's expected level.
func throughput(seed uint64, n int, f func(t int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	ys := make([]float64, n)
	for t := range ys {
		level := 1000.0
		if f != nil {
			level = f(t)
		}
		ys[t] = level + 20*r.NormFloat64()
	}
	return ys
}

func TestStability(t *testing.T) {
	stallAt := func(from, to int) func(int) float64 {
		return func(t int) float64 {
			if t >= from && t < to {
				return 100
			}
			return 1000
		}
	}
	tests := []struct {
		name        string
		ys          []float64
		unstable    bool
		reason      string // substring of a reason, "" for none
		stall       int    // expected LongestStall
		oscillates  bool
		periodRange [2]int
		settled     bool
		steadyMax   int // SteadyAfter must be ≤ this
		steadyMin   int // ... and ≥ this
	}{
		{"flat noise", throughput(1, 300, nil), false, "", 0, false, [2]int{}, true, 0, 0},
		{"8 s stall", throughput(2, 300, stallAt(100, 108)), true, "stall of 8 consecutive seconds", 8, false, [2]int{}, true, 0, 0},
		// 4 isolated bad seconds at irregular times: 1.3% of seconds, no run of 5.
		{"scattered stalls", throughput(3, 300, func(t int) float64 {
			switch t {
			case 17, 90, 161, 250:
				return 200
			}
			return 1000
		}), true, "below half the median", 1, false, [2]int{}, true, 0, 0},
		// The same single-second stalls every 70 s are a periodic pattern.
		{"regular stalls", throughput(3, 300, func(t int) float64 {
			if t%70 == 5 {
				return 200
			}
			return 1000
		}), true, "oscillates", 1, true, [2]int{70, 70}, true, 0, 0},
		{"sine wave, period 60 s", throughput(4, 300, func(t int) float64 {
			return 1000 + 200*math.Sin(2*math.Pi*float64(t)/60)
		}), true, "oscillates with a period of", 0, true, [2]int{58, 62}, true, 300, 0},
		// Checkpoint-like dips: every 45 s throughput halves for 10 s.
		{"periodic dips, period 45 s", throughput(5, 360, func(t int) float64 {
			if t%45 < 10 {
				return 600
			}
			return 1000
		}), true, "oscillates", 0, true, [2]int{44, 46}, true, 360, 0},
		// A single 20% step at 2/3 of the run: slowly decaying
		// autocorrelation, not a wave; steady only from the step on.
		{"step is not a wave", throughput(6, 300, func(t int) float64 {
			if t < 200 {
				return 1000
			}
			return 800
		}), true, "not settled", 0, false, [2]int{}, false, 300, 0},
		// Warm-up ramp over the first 40 s, then flat: steady from about 40 s
		// (within 10%: level ≥ 900 from t = 35). The ramp's first 19 seconds
		// are below half the median (noise moves the 19th above), so passing
		// the warm-up in also shows as a stall.
		{"warm-up ramp", throughput(7, 300, func(t int) float64 {
			return 1000 * math.Min(1, float64(t+1)/40)
		}), true, "stall of 18", 18, false, [2]int{}, true, 40, 0},
		// The ramp must not count as steady far ahead of its end (level
		// 900 at t = 35).
		{"warm-up ramp is not steady early", throughput(7, 300, func(t int) float64 {
			return 1000 * math.Min(1, float64(t+1)/40)
		}), true, "stall of 18", 18, false, [2]int{}, true, 40, 30},
		// Slow decline of 40% over the run never settles.
		{"steady decline", throughput(8, 300, func(t int) float64 {
			return 1000 - 400*float64(t)/300
		}), true, "not settled", 0, false, [2]int{}, false, 300, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Stability(tc.ys)
			if r.Unstable != tc.unstable {
				t.Errorf("Unstable = %v, want %v (reasons %q)", r.Unstable, tc.unstable, r.Reasons)
			}
			checkReason(t, r.Reasons, tc.reason)
			if r.LongestStall != tc.stall {
				t.Errorf("LongestStall = %d, want %d", r.LongestStall, tc.stall)
			}
			if r.Oscillates != tc.oscillates || (tc.oscillates && (r.Period < tc.periodRange[0] || r.Period > tc.periodRange[1])) {
				t.Errorf("Oscillates %v period %d (r=%.2f), want %v in %v", r.Oscillates, r.Period, r.PeakAutocorr, tc.oscillates, tc.periodRange)
			}
			if r.Settled != tc.settled || r.SteadyAfter > tc.steadyMax || r.SteadyAfter < tc.steadyMin {
				t.Errorf("Settled %v SteadyAfter %d, want %v and in [%d, %d]", r.Settled, r.SteadyAfter, tc.settled, tc.steadyMin, tc.steadyMax)
			}
		})
	}
}

func TestStabilityWarmupBoundary(t *testing.T) {
	// 0 for 30 s, then 1000: w = 30, so the running median at t covers the
	// 30 seconds t−15..t+14; both middle values are 1000 once at most 14 of
	// them are zero, i.e. from t = 31.
	ys := make([]float64, 300)
	for i := 30; i < 300; i++ {
		ys[i] = 1000
	}
	if r := Stability(ys); r.SteadyAfter != 31 || !r.Settled {
		t.Errorf("SteadyAfter %d settled %v, want 31 true", r.SteadyAfter, r.Settled)
	}
}

func TestStabilityNoiseRarelyOscillates(t *testing.T) {
	// White noise must not look periodic: allow at most 2 of 100 seeds, at
	// 60 and at 600 seconds.
	for _, n := range []int{60, 600} {
		waves := 0
		for s := range uint64(100) {
			if Stability(throughput(100+s, n, nil)).Oscillates {
				waves++
			}
		}
		if waves > 2 {
			t.Errorf("n=%d: %d of 100 noise series oscillate", n, waves)
		}
	}
}

func TestStabilityShareAndCV(t *testing.T) {
	// 20 seconds: 18 at 100, 2 at 10. Median 100, so 2/20 = 10% are below 50.
	ys := make([]float64, 20)
	for i := range ys {
		ys[i] = 100
	}
	ys[3], ys[4] = 10, 10
	r := Stability(ys)
	m := (18*100.0 + 20) / 20
	sd := math.Sqrt((18*(100-m)*(100-m) + 2*(10-m)*(10-m)) / 19)
	if r.ShareBelowHalfMedian != 0.1 || r.LongestStall != 2 || math.Abs(r.CV-sd/m) > 1e-12 || r.Median != 100 {
		t.Errorf("got share %v stall %d CV %v median %v; want 0.1, 2, %v, 100", r.ShareBelowHalfMedian, r.LongestStall, r.CV, r.Median, sd/m)
	}
}

func TestStabilityTooShort(t *testing.T) {
	r := Stability([]float64{1, 2, 3, math.NaN()})
	if r.Unstable || r.N != 3 {
		t.Errorf("got %+v", r)
	}
	checkWarning(t, r.Warnings, "too few to judge")
	checkWarning(t, r.Warnings, "dropped 1 non-finite")
}

// checkReason fails unless some reason contains want, or, when want is
// empty, unless there are no reasons.
func checkReason(t *testing.T, reasons []string, want string) {
	t.Helper()
	if want == "" {
		if len(reasons) > 0 {
			t.Errorf("unexpected reasons %q", reasons)
		}
		return
	}
	for _, r := range reasons {
		if strings.Contains(r, want) {
			return
		}
	}
	t.Errorf("reasons %q lack %q", reasons, want)
}
