package runner

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// faulter is a worker whose every operation maps 16 fresh pages, writes
// to each and unmaps them: 16 page faults per operation.
type faulter struct{}

const faultPages = 16

func (faulter) Op(context.Context) (workload.Tally, error) {
	mem, err := unix.Mmap(-1, 0, faultPages*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return workload.Tally{Statements: 1}, err
	}
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	return workload.Tally{Statements: 1}, unix.Munmap(mem)
}

func (faulter) Close() error { return nil }

// TestCounterFacts measures two workers' 4,000 page-faulting operations in
// real time: the step's result holds benchlab's (the client's) page faults
// over the measured part, at least the 16 per operation the workers caused
// (threads the Go runtime starts during the step are counted through
// inheritance), and for every hardware event either its count or why it
// was not counted. An in-process step has no server counts. The step ends
// by its count and has no warm-up, so the counters cover every operation
// however slowly a loaded machine runs them (a step of 600 ms after a
// warm-up counted from a mark the machine may take late).
func TestCounterFacts(t *testing.T) {
	st := workload.Step{Name: "faults", Roles: []workload.Role{{Name: "faults", Ops: 4000,
		NewWorker: func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) { return faulter{}, nil }}}}
	res, err := Measure(context.Background(), nil, st, 2, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 4000 {
		t.Fatalf("%d operations measured, want the role's 4000", res.Events)
	}
	faults, ok := res.Facts[store.CounterFact("client", "page-faults")]
	if !ok {
		t.Fatalf("no client page faults in %v", res.Facts)
	}
	// Per operation as the report counts it: the counts cover the sampled
	// part (Eff.Seconds), at the step's rate.
	if res.Eff == nil {
		t.Fatal("no efficiency window")
	}
	perOp := res.Eff.PerOp(faults, res.QPS(), res.Seconds)
	if perOp < 0.9*faultPages || perOp > 3*faultPages {
		t.Errorf("%.1f client page faults per operation (%v over %.3f s at %.0f ops/s); want about %d",
			perOp, faults, res.Eff.Seconds, res.QPS(), faultPages)
	}
	for _, ev := range []string{"instructions", "cycles", "cache-misses", "branch-misses"} {
		_, counted := res.Facts[store.CounterFact("client", ev)]
		_, not := res.Facts[store.CounterUnsupportedFact("client", ev)]
		if counted == not {
			t.Errorf("%s: counted %v, reason for not counting %v; want exactly one", ev, counted, not)
		}
		if _, ok := res.Facts[store.CounterFact("server", ev)]; ok {
			t.Errorf("server %s counted for a step without a server", ev)
		}
	}
	t.Logf("%d operations, %v page faults; facts %v", res.Statements, faults, res.Facts)
}

// TestInterleavedCounterFacts interleaves two in-process targets, one
// whose operations fault 16 pages each and one whose operations sleep:
// benchlab's perf counts are read at every turn boundary, so each target's
// client page faults are those of its own turns: about 16 per operation
// for the faulter, and a small fraction of that for the sleeper (a whole-
// step count would give both the same total).
func TestInterleavedCounterFacts(t *testing.T) {
	ctx := context.Background()
	parts := sqliteParts(t, "faults", "naps")
	workers := map[engine.DB]workload.Worker{parts[0].db: faulter{}, parts[1].db: napper{}}
	st := workload.Step{Name: "faults", Warmup: 100 * time.Millisecond, Duration: time.Second,
		NewWorker: func(_ context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			return workers[db], nil
		}}
	rs, errs := measureParts(ctx, parts, st, 1, 20*time.Millisecond, Options{SpeedProbeEvery: -1})
	var perOp [2]float64
	for i, err := range errs {
		if err != nil {
			t.Fatalf("target %d: %v", i, err)
		}
		r := rs[i][0]
		faults, ok := r.Facts[store.CounterFact("client", "page-faults")]
		if !ok || r.Eff == nil || r.Events == 0 {
			t.Fatalf("%s: %d operations, eff %v, facts %v; want client page faults", parts[i].name, r.Events, r.Eff, r.Facts)
		}
		perOp[i] = r.Eff.PerOp(faults, r.QPS(), r.Seconds)
		t.Logf("%s: %d operations in %.3f s of turns, %.0f page faults, %.2f per operation", parts[i].name, r.Events,
			r.Seconds, faults, perOp[i])
		for _, ev := range []string{"instructions", "cycles"} {
			_, counted := r.Facts[store.CounterFact("client", ev)]
			_, not := r.Facts[store.CounterUnsupportedFact("client", ev)]
			if counted == not {
				t.Errorf("%s: %s counted %v, reason for not counting %v; want exactly one", parts[i].name, ev, counted, not)
			}
		}
	}
	if perOp[0] < 0.9*faultPages || perOp[0] > 3*faultPages {
		t.Errorf("faulter: %.2f client page faults per operation; want about %d", perOp[0], faultPages)
	}
	if perOp[1] > perOp[0]/4 {
		t.Errorf("sleeper: %.2f client page faults per operation against the faulter's %.2f; want under a quarter", perOp[1], perOp[0])
	}
}
