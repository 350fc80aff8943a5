package noise

import (
	"math"
	"testing"

	"benchlab/internal/store"
)

// TestPairedEntries works an interleaved experiment's lesson by hand: the
// base ran 100, 80 and 120 queries a second in repeats 1-3, target b
// 90, 76 and 108 (log ratios ln 0.9, ln 0.95, ln 0.9), target b2 the same as b, target c one run. b and b2 each
// teach half the sample variance of its log ratios with 2 degrees of
// freedom; neither the base (no pair) nor c (one pair) teaches anything.
// The same runs measured one target after the other teach the groups of
// repeats instead.
func TestPairedEntries(t *testing.T) {
	for _, turn := range []float64{0.02, 0} {
		exp := store.Experiment{ID: 1, Base: "a", Spec: "[workload]\nsuite = \"sysbench\"\n"}
		var runs []store.Run
		results := map[int64][]store.Result{}
		add := func(target string, repeat int, qps float64) {
			var m store.Manifest
			m.Host = store.Host{Hostname: "h1", CPUModel: "cpu", Cores: 2}
			m.Target.Name, m.Target.Engine = target, "sqlite"
			run := store.Run{ID: int64(len(runs) + 1), ExperimentID: 1, Target: target, Engine: "sqlite", Repeat: repeat,
				Status: store.StatusOK, Manifest: m.JSON()}
			runs = append(runs, run)
			results[run.ID] = []store.Result{{RunID: run.ID, Test: "point-query", Threads: 1, Metric: "qps",
				Status: store.StatusOK, Seconds: 1, Statements: int64(qps), Facts: map[string]float64{store.FactInterleave: turn}}}
		}
		for i, v := range []float64{100, 80, 120} {
			add("a", i+1, v)
		}
		for i, v := range []float64{90, 76, 108} {
			add("b", i+1, v)
		}
		for i, v := range []float64{90, 76, 108} {
			add("b2", i+1, v) // the same configuration as b: an entry of its own
		}
		add("c", 1, 50)
		es := Entries(exp, runs, results)
		if turn == 0 {
			// a, b and c are one configuration here (no settings): one
			// group of 7 runs.
			if len(es) != 1 || es[0].Runs != 10 {
				t.Errorf("sequential: entries %+v, want one group of 10 runs", es)
			}
			continue
		}
		ds := []float64{math.Log(0.9), math.Log(0.95), math.Log(0.9)}
		m := (ds[0] + ds[1] + ds[2]) / 3
		want := ((ds[0]-m)*(ds[0]-m) + (ds[1]-m)*(ds[1]-m) + (ds[2]-m)*(ds[2]-m)) / 2 / 2
		if len(es) != 2 || es[0].Config == es[1].Config {
			t.Fatalf("interleaved: entries %+v, want one for b and one for b2, each its own config", es)
		}
		for _, e := range es {
			if e.Runs != 3 || e.DF != 2 || math.Abs(e.LogVar-want) > 1e-12 {
				t.Errorf("interleaved: entry %+v, want 3 pairs, 2 df, variance %.6g", e, want)
			}
		}
	}
}
