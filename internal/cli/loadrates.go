package cli

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/BurntSushi/toml"

	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/timeplan"
	"benchlab/internal/workload"
)

// loadHistory is how many earlier loads of an engine and step the plan's
// rate is the median of.
const loadHistory = 3

// storeRates returns the load rates measured by earlier runs of s's suite
// in the results database at path: for each target's engine and each load
// step the suite sizes, the median rows per second of the newest
// loadHistory loads. A store that does not exist yet is not created; one
// that cannot be read gives no rates (the plan assumes
// timeplan.DefaultLoadRate).
func storeRates(env Env, path string, s spec.Spec) timeplan.Rates {
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return nil
	}
	size, ok := workload.SizeOf(suite, s.Params())
	if !ok || len(size.Loads) == 0 {
		return nil
	}
	if !store.IsPostgres(path) {
		if _, err := os.Stat(path); err != nil {
			return nil
		}
	}
	st, err := store.Open(path)
	if err != nil {
		return nil
	}
	defer st.Close()
	printReplayed(env, st)
	type key struct{ engine, step string }
	known := map[key]timeplan.LoadRate{}
	suites := map[int64]string{} // experiment -> suite
	for _, t := range s.Targets {
		for step := range size.Loads {
			k := key{t.Engine, step}
			if _, done := known[k]; done {
				continue
			}
			rs, err := st.StepRates(context.Background(), t.Engine, step, 50)
			if err != nil {
				continue
			}
			var rates []float64
			for _, r := range rs {
				name, seen := suites[r.ExperimentID]
				if !seen {
					name = suiteOfSpec(r.Spec)
					suites[r.ExperimentID] = name
				}
				if name == s.Workload.Suite {
					rates = append(rates, float64(r.Rows)/r.Seconds)
				}
				if len(rates) == loadHistory {
					break
				}
			}
			if len(rates) == 0 {
				continue
			}
			slices.Sort(rates)
			mid := rates[len(rates)/2]
			if len(rates)%2 == 0 {
				mid = (rates[len(rates)/2-1] + mid) / 2
			}
			known[k] = timeplan.LoadRate{RowsPerSec: mid, From: fmt.Sprintf("median of %d earlier load(s) in the store", len(rates))}
		}
	}
	return func(engine, step string) (timeplan.LoadRate, bool) {
		r, ok := known[key{engine, step}]
		return r, ok
	}
}

// suiteOfSpec reads the suite a stored spec names (sysbench when it names
// none), without validating the rest: its targets may no longer exist.
func suiteOfSpec(src string) string {
	var doc struct {
		Workload struct {
			Suite string `toml:"suite"`
		} `toml:"workload"`
	}
	if _, err := toml.Decode(src, &doc); err != nil {
		return ""
	}
	if doc.Workload.Suite == "" {
		return "sysbench"
	}
	return doc.Workload.Suite
}
