package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

func sleeperRole(name string, threads int, rate float64, ops int64, d time.Duration, bursty bool) workload.Role {
	return workload.Role{Name: name, Threads: threads, Rate: rate, Ops: ops, Bursty: bursty,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			return &sleeper{d: d, msgs: 1}, nil
		}}
}

// TestRolesRateLimited runs a closed-loop reader beside a writer limited to
// 200 operations per second: the writer must hold its rate within 5%.
func TestRolesRateLimited(t *testing.T) {
	for _, bursty := range []bool{false, true} {
		st := workload.Step{Name: "rw", Duration: 2 * time.Second, Roles: []workload.Role{
			sleeperRole("reader", 0, 0, 0, time.Millisecond, false),
			sleeperRole("writer", 2, 200, 0, 200*time.Microsecond, bursty),
		}}
		rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Role.Name != "reader" || rs[1].Role.Name != "writer" || !rs[1].Role.Secondary {
			t.Fatalf("results %+v", rs)
		}
		rate := float64(rs[1].Events) / rs[1].Seconds
		if rate < 190 || rate > 210 {
			t.Errorf("bursty=%v: writer rate %.1f/s, want 200 within 5%%", bursty, rate)
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
		sleeperRole("query", 1, 0, 0, time.Millisecond, false),
		sleeperRole("insert", 1, 400, 200, 100*time.Microsecond, false),
	}}
	start := time.Now()
	rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 400*time.Millisecond || el > 1500*time.Millisecond {
		t.Errorf("200 inserts at 400/s took %s, want about 0.5 s", el)
	}
	if rs[1].Events != 200 {
		t.Errorf("insert events %d, want exactly 200", rs[1].Events)
	}
	// Impossible: 1000/s of 5 ms operations on one worker (at most 200/s).
	st = workload.Step{Name: "impossible", MaxDuration: time.Second, Roles: []workload.Role{
		sleeperRole("insert", 1, 1000, 5000, 5*time.Millisecond, false),
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
// the workers' offsets), smooth and bursty.
func TestRolesPacedShareMeasuresItsRate(t *testing.T) {
	for _, bursty := range []bool{false, true} {
		st := workload.Step{Name: "paced", MaxDuration: 10 * time.Second, Roles: []workload.Role{
			sleeperRole("insert", 3, 30, 31, 100*time.Microsecond, bursty),
		}}
		rs, err := MeasureRoles(context.Background(), nil, st, 3, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.Events != 31 {
			t.Errorf("bursty=%v: %d events, want the 31 of the bound", bursty, r.Events)
		}
		// 31 operations at 30/s: about 1.03 s smooth. Bursty releases 10
		// per worker at the start of each second and the first worker's
		// share is 11, so its schedule ends after 2 seconds.
		want := 31.0 / 30
		if bursty {
			want = 2
		}
		if r.Seconds < want-0.05 || r.Seconds > want+0.15 {
			t.Errorf("bursty=%v: step measured %.3f s, want about %.2f", bursty, r.Seconds, want)
		}
	}
}
