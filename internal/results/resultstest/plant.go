// Package resultstest writes experiments with known values into a results
// store through the store API, for tests of what reads them (compare
// across experiments, history): a planted step is exact and the same on
// every machine, where a run's rate is not.
package resultstest

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Experiment is one planted experiment: one target that ran one sysbench
// test at one thread count, a run per value.
type Experiment struct {
	Name, Target, Engine, Version string
	// Host is the host name in the runs' manifests ("" for none, as an
	// imported run has).
	Host    string
	Created time.Time
	Test    string
	Threads int
	// Metric is the results' metric name ("" is qps).
	Metric string
	// Values are the runs' throughputs, one per repeat: each run did
	// Values[i]*10 statements in 10 seconds.
	Values []float64
}

// Plant stores es in the store at path (created when missing) in order and
// returns their experiment IDs.
func Plant(tb testing.TB, path string, es ...Experiment) []int64 {
	tb.Helper()
	st, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var ids []int64
	for _, e := range es {
		sp := spec.Default()
		sp.Name, sp.Base = e.Name, e.Target
		sp.Targets = []spec.Target{{Name: e.Target, Engine: e.Engine}}
		sp.Workload.Tests, sp.Workload.Threads, sp.Workload.Repeats = []string{e.Test}, []int{e.Threads}, len(e.Values)
		x := &store.Experiment{Name: e.Name, Base: e.Target, Spec: sp.TOML(), Targets: []string{e.Target}, Created: e.Created}
		if err := st.CreateExperiment(ctx, x); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, x.ID)
		for i, v := range e.Values {
			m := store.Manifest{Experiment: e.Name, Spec: x.Spec, Repeat: i + 1, Status: store.StatusOK,
				Started: e.Created, Ended: e.Created}
			m.Target.Name, m.Target.Engine = e.Target, e.Engine
			m.Engine.Version = e.Version
			if e.Host != "" {
				m.Host = store.Host{Hostname: e.Host, CPUModel: "planted", Cores: 2}
			}
			run := &store.Run{ExperimentID: x.ID, Target: e.Target, Engine: e.Engine, Version: e.Version, Repeat: i + 1,
				Status: store.StatusOK, Started: e.Created, Ended: e.Created, Manifest: m.JSON()}
			if err := st.CreateRun(ctx, run); err != nil {
				tb.Fatal(err)
			}
			n := int64(v * 10)
			res := &store.Result{RunID: run.ID, Test: e.Test, Family: e.Test, Threads: e.Threads, Metric: e.Metric,
				Status: store.StatusOK, Started: e.Created, Seconds: 10, Events: n, Statements: n}
			if err := st.SaveResult(ctx, res); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return ids
}
