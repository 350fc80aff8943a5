package servertest

import (
	"context"
	"io"
	"testing"
	"time"

	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// InterleavedEfficiency runs two servers of engine interleaved in 20 ms
// turns, one committing synchronously (sync) and one not (async, settings
// of each given), and checks what an interleaved step measures per
// operation: each target's server figures come from its own server's
// processes and benchlab's from its turns, so every measured step of both
// has server and client CPU per operation, its efficiency split by turns
// (fact eff_by_turns), and on update-index the synchronous server makes
// more write system calls per statement than the other (a write and an
// fsync of the log per commit), a relation that holds at any speed.
func InterleavedEfficiency(t *testing.T, engine string, sync, async map[string]string) {
	t.Helper()
	settings := func(m map[string]string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	s := Spec(t, "interleaved-"+engine, t.TempDir(),
		spec.Target{Name: "sync", Engine: engine, Settings: settings(sync)},
		spec.Target{Name: "async", Engine: engine, Settings: settings(async)})
	s.Workload.Interleave = spec.Turn{Duration: 20 * time.Millisecond}
	s.Workload.Tests = []string{"point-query", "update-index"}
	if err := s.Validate(); err != nil {
		t.Fatalf("spec: %v", err)
	}
	st, runs, err := Run(context.Background(), t, s, io.Discard)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	writes := map[string]float64{}
	for _, r := range runs {
		res, err := st.Results(context.Background(), r.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res {
			if x.Action {
				continue
			}
			e := x.Eff
			if e == nil || e.ServerCPU <= 0 || e.ClientCPU <= 0 || x.Facts[store.FactEffByTurns] != 1 || x.Statements == 0 {
				t.Errorf("%s %s: efficiency %+v, facts %v; want server and client CPU split by turns", r.Target, x.Test, e, x.Facts)
				continue
			}
			n := float64(x.Statements)
			t.Logf("%s %-12s %7.0f qps  server %6.1f us/op  client %6.1f us/op  server writes %.3f/op", r.Target, x.Test,
				n/x.Seconds, e.ServerCPU*1e6/n, e.ClientCPU*1e6/n, float64(e.ServerWriteCalls)/n)
			if x.Test == "update-index" {
				writes[r.Target] = float64(e.ServerWriteCalls) / n
			}
		}
	}
	if !(writes["sync"] > writes["async"]) {
		t.Errorf("update-index server writes per statement: sync %v, async %v; want more with synchronous commits",
			writes["sync"], writes["async"])
	}
}
