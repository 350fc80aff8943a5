package runner

import (
	"errors"
	"testing"
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// TestCollect fills a role's result from two workers' states made by hand:
// counts add up, latency percentiles come from the merged histograms
// (whether handed over to the role's running total by a flush or not), the
// service time is kept for a rate-limited role only, kinds and retries
// become facts, and the error samples and seconds are the role's.
func TestCollect(t *testing.T) {
	for _, rate := range []float64{0, 100} {
		role := workload.Role{Name: "w", Rate: rate}
		rr := &roleRun{role: role, errs: &errorLog{}, sofar: meter.NewHistogram()}
		for i := 0; i < 2; i++ {
			w := &kinded{}
			s := newWorkerState(w, role)
			if (s.svc != nil) != (rate > 0) || len(s.kinds) != 2 {
				t.Fatalf("rate %v: state %+v: want a service histogram only when paced, and 2 kinds", rate, s)
			}
			s.events, s.statements, s.errors, s.rows, s.retries, s.retried = 10, 30, 1, 20, 4, 2
			for j := 1; j <= 10; j++ {
				if j == 6 {
					// A flush took the first half (series.go).
					s.handoff.Store(true)
					s.handOver(rr)
				}
				meter.RecordLatency(s.hist, time.Duration(j)*time.Millisecond)
				if s.svc != nil {
					meter.RecordLatency(s.svc, time.Duration(j)*time.Microsecond)
				}
			}
			s.kinds[1].ops, s.kinds[1].errors = 10, 1
			meter.RecordLatency(s.kinds[1].hist, 5*time.Millisecond)
			rr.workers = append(rr.workers, w)
			rr.states = append(rr.states, s)
		}
		rr.errs.add(errors.New("first"))
		rr.errs.add(errors.New("first"))
		series := []store.Interval{{Sec: 0, Events: 20}}
		res := &store.Result{}
		collect(res, rr, series, 1.5)
		if res.Events != 20 || res.Statements != 60 || res.Errors != 2 || res.Rows != 40 || res.Seconds != 1.5 {
			t.Errorf("rate %v: counts %d events %d statements %d errors %d rows in %v s", rate, res.Events, res.Statements,
				res.Errors, res.Rows, res.Seconds)
		}
		if p := res.Latency; p.P50 < 5*time.Millisecond || p.P50 > 6*time.Millisecond || p.Max < 10*time.Millisecond {
			t.Errorf("rate %v: latency %+v, want p50 about 5 ms and max 10 ms", rate, p)
		}
		if got := res.Role.Service.Max; (got > 0) != (rate > 0) {
			t.Errorf("rate %v: service max %s", rate, got)
		}
		if res.Facts[store.FactRetries] != 8 || res.Facts[store.FactRetried] != 4 {
			t.Errorf("rate %v: retry facts %v", rate, res.Facts)
		}
		if len(res.ErrorSamples) != 1 || res.ErrorSamples[0] != "first" || len(res.Intervals) != 1 || len(res.Histogram) == 0 {
			t.Errorf("rate %v: samples %q, series %v, histogram %d bytes", rate, res.ErrorSamples, res.Intervals, len(res.Histogram))
		}
		kinds := res.Kinds()
		if len(kinds) != 2 || kinds[1].Kind != "slow" || kinds[1].Ops != 20 || kinds[1].Errors != 2 {
			t.Errorf("rate %v: kinds %+v", rate, kinds)
		}
	}
}
