package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// waitingSleeper waits wait before each operation (a workload.Waiter, as a
// think time) and then sleeps op in it.
type waitingSleeper struct{ wait, op time.Duration }

func (w *waitingSleeper) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(w.wait):
		return true
	}
}

func (w *waitingSleeper) Op(context.Context) (workload.Tally, error) {
	time.Sleep(w.op)
	return workload.Tally{Statements: 1}, nil
}

func (w *waitingSleeper) Close() error { return nil }

// TestChainedClock checks the loop's one clock read per operation: a
// closed-loop operation that follows the previous one straight on starts
// where that one ended, so in fake time (where the loop's own work takes
// none) its latency is exactly its 1 ms; a worker that waits 2 ms before
// each 1 ms operation has the clock read again after the wait, so its
// latency is still 1 ms, not the 3 ms between two ends.
func TestChainedClock(t *testing.T) {
	for _, wait := range []time.Duration{0, 2 * time.Millisecond} {
		fake(t, func(t *testing.T, opt Options) {
			st := workload.Step{Name: "chain", Duration: time.Second,
				NewWorker: func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) {
					if wait == 0 {
						return &sleeper{d: time.Millisecond}, nil
					}
					return &waitingSleeper{wait: wait, op: time.Millisecond}, nil
				}}
			rs, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			t.Logf("wait %v: events %d lat %+v", wait, r.Events, r.Latency)
			wantOps := int64(time.Second / (wait + time.Millisecond))
			if n := r.Events + r.Errors; n < wantOps-1 || n > wantOps {
				t.Errorf("wait %v: %d operations in 1 s, want %d", wait, n, wantOps)
			}
			if !near(r.Latency.P50, time.Millisecond) || !near(r.Latency.Max, time.Millisecond) {
				t.Errorf("wait %v: latency p50 %v max %v, want 1ms", wait, r.Latency.P50, r.Latency.Max)
			}
		})
	}
}
