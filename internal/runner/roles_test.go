package runner

import (
	"context"
	"testing"
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

// TestRolesRateLimited runs a closed-loop reader beside a writer limited to
// 200 operations per second: the writer must hold its rate within 5%.
func TestRolesRateLimited(t *testing.T) {
	for _, pacing := range []workload.Pacing{workload.PaceEven, workload.PaceBursty} {
		st := workload.Step{Name: "rw", Duration: 2 * time.Second, Roles: []workload.Role{
			sleeperRole("reader", 0, 0, 0, time.Millisecond, workload.PaceEven),
			sleeperRole("writer", 2, 200, 0, 200*time.Microsecond, pacing),
		}}
		rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Role.Name != "reader" || rs[1].Role.Name != "writer" || !rs[1].Role.Secondary {
			t.Fatalf("results %+v", rs)
		}
		// The sleeper fails one operation in 10: done and failed ones
		// together are what the writer ran.
		rate := float64(rs[1].Events+rs[1].Errors) / rs[1].Seconds
		if rate < 190 || rate > 210 {
			t.Errorf("pacing %d: writer rate %.1f/s, want 200 within 5%%", pacing, rate)
		}
		if rs[0].Events < 500 {
			t.Errorf("closed-loop reader did only %d events in 2 s", rs[0].Events)
		}
		if rs[1].Role.Service.P50 <= 0 || rs[1].Role.Service.P50 > rs[1].Latency.P50+time.Millisecond {
			t.Errorf("service p50 %s vs latency p50 %s", rs[1].Role.Service.P50, rs[1].Latency.P50)
		}
		if len(rs[1].Intervals) < 2 || rs[1].Intervals[0].Events == 0 {
			t.Errorf("writer series %+v", rs[1].Intervals)
		}
	}
}

// TestRolesOpsBound ends the step when the bounded role has done its
// operations, and caps a role that cannot keep its rate with MaxDuration,
// counting its latency from the intended start (no coordinated omission).
func TestRolesOpsBound(t *testing.T) {
	st := workload.Step{Name: "bounded", Duration: time.Hour, Roles: []workload.Role{
		sleeperRole("query", 1, 0, 0, time.Millisecond, workload.PaceEven),
		sleeperRole("insert", 1, 400, 200, 100*time.Microsecond, workload.PaceEven),
	}}
	start := time.Now()
	rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 400*time.Millisecond || el > 1500*time.Millisecond {
		t.Errorf("200 inserts at 400/s took %s, want about 0.5 s", el)
	}
	if rs[1].Events+rs[1].Errors != 200 {
		t.Errorf("insert operations %d, want exactly 200", rs[1].Events+rs[1].Errors)
	}
	// Impossible: 1000/s of 5 ms operations on one worker (at most 200/s).
	st = workload.Step{Name: "impossible", MaxDuration: time.Second, Roles: []workload.Role{
		sleeperRole("insert", 1, 1000, 5000, 5*time.Millisecond, workload.PaceEven),
	}}
	start = time.Now()
	rs, err = MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("capped step took %s", el)
	}
	r := rs[0]
	if rate := float64(r.Events) / r.Seconds; rate > 250 {
		t.Errorf("achieved %.0f/s with 5 ms operations", rate)
	}
	// The backlog grows to about 0.8 s by the end: latency from the intended
	// start shows it, service time does not.
	if r.Latency.Max < 300*time.Millisecond || r.Role.Service.P99 > 50*time.Millisecond {
		t.Errorf("latency max %s, service p99 %s: queueing not counted", r.Latency.Max, r.Role.Service.P99)
	}
}

// TestRolesPacedShareMeasuresItsRate splits an op-bounded paced role over
// three workers: each does its share, and the step lasts until the schedule
// ends, so a met rate measures as the rate itself (not faster because the
// last operation starts one interval before the end, nor slower because of
// the workers' offsets), for each pacing.
func TestRolesPacedShareMeasuresItsRate(t *testing.T) {
	for _, pacing := range []workload.Pacing{workload.PaceEven, workload.PaceBursty, workload.PaceWindow} {
		st := workload.Step{Name: "paced", MaxDuration: 10 * time.Second, Roles: []workload.Role{
			sleeperRole("insert", 3, 30, 31, 100*time.Microsecond, pacing),
		}}
		rs, err := MeasureRoles(context.Background(), nil, st, 3, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.Events+r.Errors != 31 {
			t.Errorf("pacing %d: %d operations, want the 31 of the bound", pacing, r.Events+r.Errors)
		}
		// 31 operations at 30/s: about 1.03 s even. Bursty releases 10
		// per worker at the start of each second and the first worker's
		// share is 11, so its schedule ends after 2 seconds. The window
		// limiter releases one operation, sleeps out the first second,
		// releases 10 and checks after the 10th (the first worker's 11th
		// operation), which comes early, so it sleeps to 2 s too.
		want := 31.0 / 30
		if pacing != workload.PaceEven {
			want = 2
		}
		if r.Seconds < want-0.05 || r.Seconds > want+0.15 {
			t.Errorf("pacing %d: step measured %.3f s, want about %.2f", pacing, r.Seconds, want)
		}
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
// operations at 80/s (3 s) for 1.5 s in its 42nd operation, just after the
// second window's quota is released. The original client's limiter
// (PaceWindow) waits for the stall, whose first half second is the window's
// idle rest, with its queue of 8 full, then starts its next window from its
// late check and never makes up the rest: the step lasts about 3.6 s and
// delivers about 0.83 of the rate, an SLA failure. The fixed schedules (even,
// bursty) run the backlog back to back after the stall and end on time.
func TestRolesWindowPacingDoesNotCatchUp(t *testing.T) {
	for _, c := range []struct {
		pacing   workload.Pacing
		min, max float64 // delivered share of the target rate
	}{
		{workload.PaceWindow, 0.60, 0.90}, // about 0.83 on an idle machine
		{workload.PaceEven, 0.95, 1.05},
		{workload.PaceBursty, 0.95, 1.05},
	} {
		st := workload.Step{Name: "stall", MaxDuration: 10 * time.Second, Roles: []workload.Role{{
			Name: "insert", Threads: 1, Rate: 80, Ops: 240, Pacing: c.pacing, Queue: 8,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				return &staller{d: time.Millisecond, stall: 1500 * time.Millisecond, stallAt: 42}, nil
			},
		}}}
		rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.Events != 240 {
			t.Errorf("pacing %d: %d events, want 240", c.pacing, r.Events)
		}
		share := float64(r.Events) / r.Seconds / 80
		t.Logf("pacing %d: 240 operations in %.2f s, %.2f of the rate", c.pacing, r.Seconds, share)
		if share < c.min || share > c.max {
			t.Errorf("pacing %d: delivered %.2f of the rate in %.2f s, want %.2f-%.2f", c.pacing, share, r.Seconds, c.min, c.max)
		}
		// The operations queued behind the stall count their wait.
		if r.Latency.Max < 1400*time.Millisecond {
			t.Errorf("pacing %d: latency max %s, want the 1.5 s stall", c.pacing, r.Latency.Max)
		}
	}
}
