package runner

import (
	"context"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
	"benchlab/internal/workload/sysbench"
)

// turnTaker is a worker of target target whose operations take d; it counts
// an overlap whenever another target's operation is under way as one of
// its own starts.
type turnTaker struct {
	target   int
	d        time.Duration
	inflight *[2]atomic.Int32
	overlaps *atomic.Int32
}

func (w *turnTaker) Op(ctx context.Context) (workload.Tally, error) {
	w.inflight[w.target].Add(1)
	if w.inflight[1-w.target].Load() > 0 {
		w.overlaps.Add(1)
	}
	time.Sleep(w.d)
	w.inflight[w.target].Add(-1)
	return workload.Tally{Statements: 1}, nil
}

func (w *turnTaker) Close() error { return nil }

// turnDB is a target of TestInterleavedTurns: its index.
type turnDB int

func (turnDB) Info(context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (turnDB) Close() error                              { return nil }

// TestInterleavedTurns measures one step on two targets in 50 ms turns, in
// fake time: target 0's operations take 2 ms, target 1's 4 ms, 2 workers
// each, a 100 ms warm-up and 1 s measured. Each target runs only in its
// turns, never beside the other, and gets the step's time: about 1 s
// measured (a turn ends once the operation under way is done), so its
// throughput is what it would be alone (1,000 and 500 operations a second)
// and the step lasts twice as long (2.2 s). Its results say how they were
// measured (facts interleave_turn_s and interleave_targets).
func TestInterleavedTurns(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		var inflight [2]atomic.Int32
		var overlaps atomic.Int32
		st := workload.Step{Name: "turns", Warmup: 100 * time.Millisecond, Duration: time.Second,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				target := int(db.(turnDB))
				return &turnTaker{target: target, d: time.Duration(2*(target+1)) * time.Millisecond,
					inflight: &inflight, overlaps: &overlaps}, nil
			}}
		parts := []stepPart{{db: turnDB(0)}, {db: turnDB(1)}}
		start := time.Now()
		rs, errs := measureParts(context.Background(), parts, st, 2, 50*time.Millisecond, opt)
		took := time.Since(start)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("target %d: %v", i, err)
			}
		}
		if n := overlaps.Load(); n != 0 {
			t.Errorf("%d operations started while the other target's were under way", n)
		}
		if took < 2200*time.Millisecond || took > 2300*time.Millisecond {
			t.Errorf("step took %s, want 2.2 s (two targets' warm-up and measured time)", took)
		}
		for i, want := range []float64{1000, 500} {
			r := rs[i][0]
			if r.Seconds < 0.99 || r.Seconds > 1.06 {
				t.Errorf("target %d: %.3f s measured, want its turns' 1 s", i, r.Seconds)
			}
			if got := r.Throughput(); math.Abs(got/want-1) > 0.03 {
				t.Errorf("target %d: %.0f operations/s, want %.0f", i, got, want)
			}
			if r.Facts[store.FactInterleave] != 0.05 || r.Facts[store.FactInterleaveTargets] != 2 {
				t.Errorf("target %d: facts %v, want interleave_turn_s 0.05 and interleave_targets 2", i, r.Facts)
			}
			// The series' seconds are the target's turns in each second.
			var secs float64
			for _, iv := range r.Intervals {
				if iv.Sec >= 0 {
					secs += iv.Seconds
				}
			}
			if math.Abs(secs-r.Seconds) > 0.06 {
				t.Errorf("target %d: series holds %.3f s of turns, the result %.3f s", i, secs, r.Seconds)
			}
		}
	})
}

// TestRunGroupSQLite runs prepare and point-query on two real SQLite
// targets as an interleaved group: both are loaded, the point query is
// measured in turns (its results carry the interleave facts, and measured
// time near the step's), and each target's results go to its own run.
func TestRunGroupSQLite(t *testing.T) {
	drv, ok := engine.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	// 1.5 s of 20 ms turns: at load 30 a hand-over once took most of a
	// 0.4 s step, and the other target got no turn at all.
	p := workload.Params{Tables: 1, TableSize: 2000, ReadTime: 1500 * time.Millisecond, WriteTime: 400 * time.Millisecond,
		Tests: []string{"point-query"}, Threads: []int{1}, Seed: 7}
	steps, err := sysbench.Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sink := &memSink{}
	var cells []Cell
	for i, name := range []string{"a", "b"} {
		cells = append(cells, Cell{Target: engine.Target{Name: name, Engine: "sqlite"}, Driver: drv, Steps: steps,
			Threads: []int{1}, DataDir: filepath.Join(dir, name), Seed: 7, RunID: int64(i + 1)})
	}
	start := time.Now()
	outs := RunGroup(context.Background(), cells, sink, 20*time.Millisecond)
	took := time.Since(start)
	for i, o := range outs {
		if o.Status != store.StatusOK || o.Err != nil {
			t.Fatalf("target %d: %s %v", i, o.Status, o.Err)
		}
	}
	measured := map[int64]*store.Result{}
	prepared := map[int64]bool{}
	for _, r := range sink.results {
		switch {
		case r.Test == "prepare":
			prepared[r.RunID] = true
		case !r.Action && r.Test == "point-query":
			measured[r.RunID] = r
		}
	}
	// Relations that hold at any speed of the machine (the turns' hand-overs
	// take longer on a busy one, and that time is no target's): each target
	// measured some time in 20 ms turns, its series holds some of it, and
	// the two targets' turns never overlap, so their measured time together
	// fits in the group's run.
	var sum float64
	for id := int64(1); id <= 2; id++ {
		r := measured[id]
		if !prepared[id] || r == nil {
			t.Fatalf("run %d: prepared %v, point-query %v", id, prepared[id], r != nil)
		}
		if r.Facts[store.FactInterleave] != 0.02 || r.Facts[store.FactInterleaveTargets] != 2 || r.Events == 0 || r.Seconds <= 0 {
			t.Errorf("run %d: %d events in %.3f s, facts %v; want events in turns of 0.02 s between 2 targets", id,
				r.Events, r.Seconds, r.Facts)
		}
		var secs float64
		for _, iv := range r.Intervals {
			if iv.Sec >= 0 {
				secs += iv.Seconds
			}
		}
		// How closely the series' seconds match the result's is the fake-time
		// test's to check (TestInterleavedTurns): here a busy machine's late
		// hand-overs move time between them.
		if secs <= 0 || secs > took.Seconds() {
			t.Errorf("run %d: series holds %.3f s of turns, the group ran %.3f s", id, secs, took.Seconds())
		}
		sum += r.Seconds
	}
	if sum > took.Seconds() {
		t.Errorf("the targets measured %.3f s in all, more than the group's %.3f s run: turns overlapped", sum, took.Seconds())
	}
}
