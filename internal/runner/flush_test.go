package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// seconds records the 1-second intervals a step streams, flush by flush.
type seconds struct{ flushes [][]int }

func (s *seconds) Begin([]*store.Result) error { return nil }

func (s *seconds) Flush(ri int, ivs []store.Interval) {
	if ri != 0 {
		return
	}
	var secs []int
	for _, iv := range ivs {
		secs = append(secs, iv.Sec)
	}
	s.flushes = append(s.flushes, secs)
}

func (s *seconds) FlushLatency(int, SoFar) {}

func (s *seconds) FlushInternals(int, []store.EngineSeries) {}

// TestFlushEveryDefault runs a 12 s step (fake time) with no FlushEvery:
// its series is streamed every DefaultFlushEvery, so a run killed at 12 s
// loses at most the last seconds, not the whole step.
func TestFlushEveryDefault(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		rec := &seconds{}
		opt.Stream = rec
		st := workload.Step{Name: "long", Duration: 12 * time.Second,
			Roles: []workload.Role{sleeperRole("query", 1, 0, 0, 10*time.Millisecond, workload.PaceEven)}}
		if _, err := MeasureRoles(context.Background(), nil, st, 1, 1, opt); err != nil {
			t.Fatal(err)
		}
		if DefaultFlushEvery > 5*time.Second {
			t.Errorf("DefaultFlushEvery %s, want at most 5s", DefaultFlushEvery)
		}
		var last int
		for _, f := range rec.flushes {
			if len(f) > 0 {
				last = f[len(f)-1]
			}
		}
		if len(rec.flushes) < 2 || last < 8 {
			t.Errorf("flushes %v in a 12 s step; want at least 2, the last reaching second 8", rec.flushes)
		}
	})
}
