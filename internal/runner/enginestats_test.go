package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestNoEngineStats measures a step of an engine without its own counters
// (no engine.StatsReader): it succeeds with neither engine counters nor the
// fact that they could not be read. The engines' own counters are tested on
// real servers (servertest.EngineStats).
func TestNoEngineStats(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		st := sleeperStep(2*time.Millisecond, 1)
		st.Duration = 500 * time.Millisecond
		res, err := Measure(context.Background(), nil, st, 1, 1, opt)
		if err != nil || res.Status != store.StatusOK || res.Events == 0 {
			t.Fatalf("status %s, %d events, error %v", res.Status, res.Events, err)
		}
		for f := range res.Facts {
			if _, ok := store.EngineStatName(f); ok || f == store.FactEngineStatsUnread {
				t.Errorf("fact %s in a step of an engine without counters", f)
			}
		}
	})
}
