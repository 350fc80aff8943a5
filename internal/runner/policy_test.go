package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// TestErrorPolicyFailsTarget runs, in fake time on a real SQLite target, a
// step whose every tenth operation fails (10% of those attempted): under a
// limit of 1% the step's result and the cell are failed, the cause naming
// workload.max_error_rate first among the error samples; under a limit of
// 20%, or none, the cell is ok.
func TestErrorPolicyFailsTarget(t *testing.T) {
	drv, ok := engine.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	for _, c := range []struct {
		limit float64
		want  string
	}{{0.01, store.StatusFailed}, {0.2, store.StatusOK}, {0, store.StatusOK}} {
		fake(t, func(t *testing.T, opt Options) {
			opt.MaxErrorRate = c.limit
			opt.SpeedProbeEvery = -1 // its probes race on a counter of their own
			var sink memSink
			out := RunCell(context.Background(), Cell{Target: engine.Target{Name: "t", Engine: "sqlite"}, Driver: drv,
				Steps: []workload.Step{sleeperStep(time.Millisecond, 1)}, Threads: []int{2},
				DataDir: t.TempDir() + "/data", Seed: 1, Options: opt}, &sink)
			if out.Status != c.want || len(sink.results) != 1 {
				t.Fatalf("limit %g: cell %s (%v), %d results; want %s", c.limit, out.Status, out.Err, len(sink.results), c.want)
			}
			res := sink.results[0]
			if r := res.ErrorRate(); r < 0.09 || r > 0.11 || res.Status != c.want {
				t.Errorf("limit %g: result %s with error rate %.3f; want %s and 0.1", c.limit, res.Status, r, c.want)
			}
			if c.want == store.StatusFailed {
				if out.Err == nil || !strings.Contains(out.Err.Error(), "more than workload.max_error_rate 1%") ||
					!strings.Contains(res.ErrorSamples[0], "max_error_rate") {
					t.Errorf("cell error %v, samples %q; want the policy named", out.Err, res.ErrorSamples)
				}
			}
		})
	}
}
