package runner

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

func sleeperRole(name string, threads int, rate float64, ops int64, d time.Duration, pacing workload.Pacing) workload.Role {
	return workload.Role{Name: name, Threads: threads, Rate: rate, Ops: ops, Pacing: pacing, Queue: 8,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			return &sleeper{d: d, msgs: 1}, nil
		}}
}

// fake runs f in a testing/synctest bubble, whose clock is fake: time
// advances only when every goroutine of the step waits, by exactly what
// they wait for, so the step's numbers follow from its schedule and the
// workers' sleeps, whatever the machine's load. opt reads operation times
// through package time (Options.TimeClock) so that they follow it too.
func fake(t *testing.T, f func(t *testing.T, opt Options)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { f(t, Options{TimeClock: true}) })
}

// TestRolesRateLimited runs a closed-loop reader of 1 ms operations beside a
// writer of 200 us operations limited to 200 per second, for 2 s of fake
// time: the writer's rate is the limit and the reader does its 2,000
// operations (the last, a failing one, ends at the deadline and may be cut).
func TestRolesRateLimited(t *testing.T) {
	for _, pacing := range []workload.Pacing{workload.PaceEven, workload.PaceBursty} {
		fake(t, func(t *testing.T, opt Options) {
			st := workload.Step{Name: "rw", Duration: 2 * time.Second, Roles: []workload.Role{
				sleeperRole("reader", 0, 0, 0, time.Millisecond, workload.PaceEven),
				sleeperRole("writer", 2, 200, 0, 200*time.Microsecond, pacing),
			}}
			rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 2 || rs[0].Role.Name != "reader" || rs[1].Role.Name != "writer" || !rs[1].Role.Secondary {
				t.Fatalf("results %+v", rs)
			}
			// The sleeper fails one operation in 10: done and failed ones
			// together are what the writer ran.
			if rate := float64(rs[1].Events+rs[1].Errors) / rs[1].Seconds; math.Abs(rate-200) > 1 {
				t.Errorf("pacing %d: writer rate %.2f/s, want 200", pacing, rate)
			}
			if n := rs[0].Events + rs[0].Errors; n < 1999 || n > 2000 || rs[0].Errors != n/10 {
				t.Errorf("closed-loop reader of 1 ms operations did %d (%d failed) in 2 s, want 2000 (200)", n, rs[0].Errors)
			}
			// Even pacing keeps every operation on schedule: its latency is
			// its service time. Bursty releases each second's 100 per worker
			// at once, so they queue behind each other: about 10 ms at the
			// median.
			svc, lat := rs[1].Role.Service.P50, rs[1].Latency.P50
			if !near(svc, 200*time.Microsecond) || (pacing == workload.PaceEven && !near(lat, svc)) ||
				(pacing == workload.PaceBursty && (lat < 9*time.Millisecond || lat > 11*time.Millisecond)) {
				t.Errorf("pacing %d: service p50 %s, latency p50 %s", pacing, svc, lat)
			}
			if len(rs[1].Intervals) != 2 || rs[1].Intervals[0].Events+rs[1].Intervals[0].Errors != 200 {
				t.Errorf("writer series %+v, want 2 seconds of 200 operations", rs[1].Intervals)
			}
		})
	}
}

// near says whether a is within 1% of b (the latency histograms keep
// three significant digits).
func near(a, b time.Duration) bool { return math.Abs(float64(a-b)) <= 0.01*float64(b) }

// TestRolesRateLimitedRealClock is TestRolesRateLimited on the machine's
// clock: the limiter must hold its rate with real sleeps and real
// scheduling. The even schedule is fixed, so a worker delayed by the
// machine catches up back to back and the count falls short only by the
// operations still behind at the deadline: the floor of 170/s leaves 300 ms
// of such lag, and is checked only when other processes left the test a
// CPU (the step's foreign CPU share). Paced
// operations never start early, so the rate cannot exceed the limit beyond
// the one operation per worker that may straddle the end.
func TestRolesRateLimitedRealClock(t *testing.T) {
	st := workload.Step{Name: "rw", Duration: 2 * time.Second, Roles: []workload.Role{
		sleeperRole("reader", 0, 0, 0, time.Millisecond, workload.PaceEven),
		sleeperRole("writer", 2, 200, 0, 200*time.Microsecond, workload.PaceEven),
	}}
	rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rate := float64(rs[1].Events+rs[1].Errors) / rs[1].Seconds
	if rate > 202 {
		t.Errorf("writer rate %.1f/s, want at most 200 (202 with an operation per worker across the end)", rate)
	}
	// How far behind a busy machine leaves the writer is no bound: the
	// floor holds only when other processes left this one a CPU (they used
	// under half of the machine's CPU time during the step).
	foreign := -1.0
	for _, r := range rs {
		if r.Eff != nil {
			foreign = r.Eff.ForeignPct()
		}
	}
	if quiet := foreign >= 0 && foreign < 50; !quiet {
		t.Logf("other processes used %.0f%% of the machine's CPU: writer rate %.1f/s not held to 170", foreign, rate)
	} else if rate < 170 {
		t.Errorf("writer rate %.1f/s with other processes at %.0f%% of the CPU, want 200 (170 to 202)", rate, foreign)
	}
	if rs[0].Events == 0 || rs[1].Role.Service.P50 <= 0 {
		t.Errorf("reader events %d, writer service p50 %s", rs[0].Events, rs[1].Role.Service.P50)
	}
}

// TestRolesOpsBound ends the step when the bounded role has done its
// operations, and caps a role that cannot keep its rate with MaxDuration,
// counting its latency from the intended start (no coordinated omission).
func TestRolesOpsBound(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		st := workload.Step{Name: "bounded", Duration: time.Hour, Roles: []workload.Role{
			sleeperRole("query", 1, 0, 0, time.Millisecond, workload.PaceEven),
			sleeperRole("insert", 1, 400, 200, 100*time.Microsecond, workload.PaceEven),
		}}
		start := time.Now()
		rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		// The schedule of 200 operations at 400/s ends at 0.5 s; the query
		// under way then ends 1 ms later.
		if el := time.Since(start); el < 500*time.Millisecond || el > 501*time.Millisecond {
			t.Errorf("200 inserts at 400/s took %s, want 0.5 s", el)
		}
		if rs[1].Events+rs[1].Errors != 200 {
			t.Errorf("insert operations %d, want exactly 200", rs[1].Events+rs[1].Errors)
		}
		// Impossible: 1000/s of 5 ms operations on one worker (at most 200/s).
		st = workload.Step{Name: "impossible", MaxDuration: time.Second, Roles: []workload.Role{
			sleeperRole("insert", 1, 1000, 5000, 5*time.Millisecond, workload.PaceEven),
		}}
		start = time.Now()
		rs, err = MeasureRoles(context.Background(), nil, st, 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != time.Second {
			t.Errorf("capped step took %s, want its MaxDuration", el)
		}
		r := rs[0]
		// The 200th ends at the deadline itself and fails (the sleeper's
		// tenth do): it counts as an error, or is cut short by the
		// deadline's timer and not counted.
		if n := r.Events + r.Errors; n < 199 || n > 200 || r.Events != 180 {
			t.Errorf("%d operations (%d done) of 5 ms in 1 s, want 200 (180)", n, r.Events)
		}
		// Operation k is due at k ms and starts at 5k ms: the last done,
		// k = 198, waited 792 ms and ends 797 ms after it was due. Latency
		// from the intended start shows the backlog; service time does not.
		if !near(r.Latency.Max, 797*time.Millisecond) || !near(r.Role.Service.P99, 5*time.Millisecond) {
			t.Errorf("latency max %s, service p99 %s: want 797 ms and 5 ms", r.Latency.Max, r.Role.Service.P99)
		}
	})
}

// TestRolesPacedShareMeasuresItsRate splits an op-bounded paced role over
// three workers: each does its share, and the step lasts until the schedule
// ends, so a met rate measures as the rate itself (not faster because the
// last operation starts one interval before the end, nor slower because of
// the workers' offsets), for each pacing.
func TestRolesPacedShareMeasuresItsRate(t *testing.T) {
	for _, pacing := range []workload.Pacing{workload.PaceEven, workload.PaceBursty, workload.PaceWindow} {
		fake(t, func(t *testing.T, opt Options) {
			st := workload.Step{Name: "paced", MaxDuration: 10 * time.Second, Roles: []workload.Role{
				sleeperRole("insert", 3, 30, 31, 100*time.Microsecond, pacing),
			}}
			rs, err := MeasureRoles(context.Background(), nil, st, 3, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			if r.Events+r.Errors != 31 {
				t.Errorf("pacing %d: %d operations, want the 31 of the bound", pacing, r.Events+r.Errors)
			}
			// 31 operations at 30/s: 1.033 s even (the first worker's 11th
			// is due at 1 s, and the role's next would be due 1/30 s later). Bursty releases 10 per
			// worker at the start of each second and the first worker's
			// share is 11, so its schedule ends after 2 seconds. The window
			// limiter releases one operation, sleeps out the first second,
			// releases 10 and checks after the 10th (the first worker's 11th
			// operation), which comes early, so it sleeps to 2 s too.
			want := 31.0 / 30
			if pacing != workload.PaceEven {
				want = 2
			}
			if math.Abs(r.Seconds-want) > 0.001 {
				t.Errorf("pacing %d: step measured %.4f s, want %.4f", pacing, r.Seconds, want)
			}
		})
	}
}

// staller takes d per operation, except that operation stallAt (counted
// from 1) takes stall: an engine that stops for a while.
type staller struct {
	d, stall time.Duration
	stallAt  int
	n        int
}

func (s *staller) Op(ctx context.Context) (workload.Tally, error) {
	s.n++
	if s.n == s.stallAt {
		time.Sleep(s.stall)
	} else {
		time.Sleep(s.d)
	}
	return workload.Tally{Statements: 1, Rows: 1}, nil
}

func (s *staller) Close() error { return nil }

// TestRolesWindowPacingDoesNotCatchUp stalls an op-bounded inserter of 240
// operations of 1 ms at 80/s (3 s) for 1.5 s in its 42nd operation, just
// after the second window's quota is released. The original client's limiter
// (PaceWindow) waits for the stall with its queue of 8 full, then makes the
// rest of that window's quota back to back; its check after the 80th
// operation finds the window late and starts the next one from there, and
// the check after the 160th finds it early and sleeps out the rest of the
// second: the 1.5 s lost are never made up, the step lasts about 3.66 s and
// delivers about 0.82 of the rate, an SLA failure. The fixed schedules
// (even, bursty) run the backlog back to back after the stall and end on
// time, at 3 s.
func TestRolesWindowPacingDoesNotCatchUp(t *testing.T) {
	for _, c := range []struct {
		pacing   workload.Pacing
		min, max float64 // delivered share of the target rate
	}{
		{workload.PaceWindow, 0.80, 0.84},
		{workload.PaceEven, 0.999, 1.001},
		{workload.PaceBursty, 0.999, 1.001},
	} {
		fake(t, func(t *testing.T, opt Options) {
			st := workload.Step{Name: "stall", MaxDuration: 10 * time.Second, Roles: []workload.Role{{
				Name: "insert", Threads: 1, Rate: 80, Ops: 240, Pacing: c.pacing, Queue: 8,
				NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
					return &staller{d: time.Millisecond, stall: 1500 * time.Millisecond, stallAt: 42}, nil
				},
			}}}
			rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			if r.Events != 240 {
				t.Errorf("pacing %d: %d events, want 240", c.pacing, r.Events)
			}
			share := float64(r.Events) / r.Seconds / 80
			t.Logf("pacing %d: 240 operations in %.3f s, %.3f of the rate", c.pacing, r.Seconds, share)
			if share < c.min || share > c.max {
				t.Errorf("pacing %d: delivered %.3f of the rate in %.3f s, want %.3f-%.3f", c.pacing, share, r.Seconds, c.min, c.max)
			}
			// The operations queued behind the stall count their wait.
			if r.Latency.Max < 1500*time.Millisecond {
				t.Errorf("pacing %d: latency max %s, want the 1.5 s stall", c.pacing, r.Latency.Max)
			}
		})
	}
}
