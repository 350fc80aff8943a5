package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

// TestStepRoles checks the roles a step runs: a step without roles runs one
// of its workers at the options' rate; in a step with roles the rate paces
// the headline role unless it has its own, and no other; a role's Threads of
// 0 becomes the step's thread count, and the step's own roles are not
// changed. The event limit is the headline role's, unless it has a count of
// its own.
func TestStepRoles(t *testing.T) {
	opt := Options{Rate: 100, Events: 50}
	st := workload.Step{Name: "plain"}
	roles := stepRoles(st, 4, opt)
	if len(roles) != 1 || roles[0].Threads != 4 || roles[0].Rate != 100 || roles[0].Ops != 0 {
		t.Errorf("plain step: roles %+v", roles)
	}
	if l := newEventLimit(roles[0], opt); l == nil || l.n != 50 {
		t.Errorf("plain step: event limit %+v, want 50", l)
	}
	st = workload.Step{Name: "roles", Roles: []workload.Role{{Name: "a"}, {Name: "b", Threads: 1}}}
	roles = stepRoles(st, 3, opt)
	if len(roles) != 2 || roles[0].Threads != 3 || roles[0].Rate != 100 || roles[1].Threads != 1 || roles[1].Rate != 0 {
		t.Errorf("role step: roles %+v", roles)
	}
	if st.Roles[0].Threads != 0 || st.Roles[0].Rate != 0 {
		t.Errorf("stepRoles changed the step's own role: %+v", st.Roles[0])
	}
	st.Roles[0].Rate, st.Roles[0].Ops = 5, 10
	roles = stepRoles(st, 3, opt)
	if roles[0].Rate != 5 || roles[1].Rate != 0 {
		t.Errorf("a headline role's own rate must win: roles %+v", roles)
	}
	if l := newEventLimit(roles[0], opt); l != nil {
		t.Errorf("a headline role with a count of its own got an event limit %+v", l)
	}
	if l := newEventLimit(roles[0], Options{}); l != nil {
		t.Errorf("no --events: limit %+v", l)
	}
}

// TestEventLimit checks that the limit admits exactly n operations and marks
// the n-th as the last.
func TestEventLimit(t *testing.T) {
	l := &eventLimit{n: 3}
	for i := 1; i <= 5; i++ {
		ok, last := l.take()
		if ok != (i <= 3) || last != (i == 3) {
			t.Errorf("take %d: ok %v last %v", i, ok, last)
		}
	}
}

// TestRoleMetric checks that a role's own metric wins over the step's,
// which wins over statements per second.
func TestRoleMetric(t *testing.T) {
	own := metric.Metric{Name: "own"}
	step := metric.Metric{Name: "step"}
	for _, c := range []struct {
		st   workload.Step
		r    workload.Role
		want string
	}{
		{workload.Step{}, workload.Role{}, metric.QPS.Name},
		{workload.Step{Metric: step}, workload.Role{}, "step"},
		{workload.Step{Metric: step}, workload.Role{Metric: own}, "own"},
	} {
		if got := roleMetric(c.st, c.r).Name; got != c.want {
			t.Errorf("step metric %q, role metric %q: got %q, want %q", c.st.Metric.Name, c.r.Metric.Name, got, c.want)
		}
	}
}

// TestStepWindow checks when a step measures and ends: after its warm-up
// for its Duration; with an op-bounded role at MaxDuration (or never, when
// it has none).
func TestStepWindow(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := workload.Step{Warmup: time.Second, Duration: 10 * time.Second}
	w := stepWindow(st, []workload.Role{{}}, start)
	if w.measureFrom != start.Add(time.Second) || w.deadline != start.Add(11*time.Second) {
		t.Errorf("timed step: %+v", w)
	}
	bounded := []workload.Role{{}, {Ops: 10}}
	if w := stepWindow(st, bounded, start); w.deadline != start.Add(forever) {
		t.Errorf("op-bounded step without MaxDuration ends at %s", w.deadline)
	}
	st.MaxDuration = 30 * time.Second
	if w := stepWindow(st, bounded, start); w.deadline != start.Add(30*time.Second) {
		t.Errorf("op-bounded step with MaxDuration 30 s ends at %s", w.deadline)
	}
}

// TestShare checks that a bound split over workers adds up and differs by
// at most one between workers.
func TestShare(t *testing.T) {
	for _, c := range []struct {
		ops int64
		n   int
	}{{0, 3}, {1, 3}, {31, 3}, {30, 3}, {7, 1}, {2, 5}} {
		var sum, lo, hi int64 = 0, c.ops, 0
		for i := 0; i < c.n; i++ {
			q := share(c.ops, i, c.n)
			sum += q
			lo, hi = min(lo, q), max(hi, q)
		}
		if sum != c.ops || hi-lo > 1 {
			t.Errorf("share(%d) over %d workers: sum %d, shares %d..%d", c.ops, c.n, sum, lo, hi)
		}
	}
}

// TestPlanIO checks how workers wait and hold threads: in-process workers
// keep their threads; server clients block on their own threads up to the
// processors, spread over threads with a spare processor up to eight per
// CPU, and go through the poller beyond; cgo workers that would take every
// processor get a spare one.
func TestPlanIO(t *testing.T) {
	const procs, cpus = 2, 2
	for _, c := range []struct {
		db    kindDB
		total int
		want  ioPlan
	}{
		{kindDB{}, 8, ioPlan{lockThreads: true}},
		{kindDB{callsC: true}, 1, ioPlan{lockThreads: true}},
		{kindDB{callsC: true}, 2, ioPlan{lockThreads: true, procs: 3}},
		{kindDB{remote: true}, 2, ioPlan{remote: true, lockThreads: true}},
		{kindDB{remote: true}, 4, ioPlan{remote: true, procs: 5}},
		{kindDB{remote: true}, 5, ioPlan{remote: true, procs: 6}},
		{kindDB{remote: true}, 16, ioPlan{remote: true, procs: 17}},
		{kindDB{remote: true}, 17, ioPlan{remote: true, polled: true}},
	} {
		got := planIO(c.db, c.total, procs, cpus)
		if got != c.want {
			t.Errorf("db %+v, %d workers on %d procs: %+v, want %+v", c.db, c.total, procs, got, c.want)
		}
		// Only workers locked to their threads and in-process ones take
		// the runner's yields; a locked server client's connection is told
		// not to pass on its own.
		wantElsewhere := c.want.polled || (c.want.remote && !c.want.lockThreads)
		if got.passesElsewhere() != wantElsewhere {
			t.Errorf("db %+v, %d workers: passesElsewhere %v, want %v", c.db, c.total, got.passesElsewhere(), wantElsewhere)
		}
		ctx := got.workerContext(context.Background())
		if engine.PolledIO(ctx) != c.want.polled {
			t.Errorf("db %+v, %d workers: worker context polled %v, want %v", c.db, c.total, engine.PolledIO(ctx), c.want.polled)
		}
		if want := c.want.remote && c.want.lockThreads; engine.WorkerPasses(ctx) != want {
			t.Errorf("db %+v, %d workers: worker context says the worker passes: %v, want %v", c.db, c.total, engine.WorkerPasses(ctx), want)
		}
	}
}
