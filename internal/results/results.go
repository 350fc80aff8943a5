// Package results is the read model of stored results: it loads
// experiments, runs, measured results and manifests once, from a store
// opened read-only (either backend), selected by a Selector, parses each
// stored spec and manifest once, and hands typed data to analysis and to
// the renderers. It writes nothing.
package results

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/BurntSushi/toml"

	"benchlab/internal/metric"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Set is what a selector matched: experiments oldest first, each with the
// runs and measured results that matched.
type Set struct {
	Selector    Selector
	Experiments []*Experiment
}

// Experiment is a stored experiment with its spec parsed once.
type Experiment struct {
	store.Experiment
	// Parsed is the stored spec (Experiment.Spec) as parsed
	// (spec.ParseStored); nil when it could not be, SpecErr says why (an
	// imported experiment's spec names no suite benchlab can run, which is
	// no error).
	Parsed  *spec.Spec
	SpecErr error
	// Suite is the suite whose tests the results are: the stored spec's,
	// or for an imported experiment the suite of the tool's tests
	// (sysbench files: "sysbench", db_bench: "kv"), so that imported and
	// native runs of one test are one cell.
	Suite string
	Runs  []*Run
}

// Run is a stored run with its manifest parsed once and its measured
// headline results (OK, not warm-up, not an action, not a secondary role),
// each with its 1-second series.
type Run struct {
	store.Run
	Manifest store.Manifest
	Results  []store.Result
}

// Cell is one row of a comparison or a history: a suite's test at a
// thread count.
type Cell struct {
	Suite   string
	Test    string
	Threads int
}

func (c Cell) String() string {
	if c.Threads > 0 {
		return c.Test + " @" + strconv.Itoa(c.Threads)
	}
	return c.Test
}

// NoMatch is a selector that matched no measured result.
type NoMatch struct {
	Selector string
	Why      string
}

func (e *NoMatch) Error() string {
	return fmt.Sprintf("selector %q matches no stored result: %s", e.Selector, e.Why)
}

// importedSuites maps an import's tool to the suite whose tests it ran.
var importedSuites = map[string]string{"sysbench": "sysbench", "db_bench": "kv", "pgbench": "pgbench", "fio": "fio"}

// Load reads what sel selects from st: the experiments whose ID or name,
// suite and creation time match, their runs whose target, engine, version
// and host match and that finished OK, and those runs' measured results
// whose test and threads match. A selector that matches nothing is a
// *NoMatch naming it.
func Load(ctx context.Context, st *store.Store, sel Selector) (*Set, error) {
	exps, err := st.Experiments(ctx)
	if err != nil {
		return nil, err
	}
	set := &Set{Selector: sel}
	seen := map[string]int{}
	for _, e := range exps {
		if !sel.matchExperiment(e.ID, e.Name) || !sel.inTime(e.Created) {
			continue
		}
		seen["experiment"]++
		x := parseExperiment(e)
		runs, err := st.Runs(ctx, e.ID)
		if err != nil {
			return nil, fmt.Errorf("read runs of experiment %d: %w", e.ID, err)
		}
		for _, r := range runs {
			m := store.ParseManifest(r.Manifest)
			if x.Suite == importSuiteName && m.Import != nil {
				if s, ok := importedSuites[m.Import.Tool]; ok {
					x.Suite = s
				}
			}
			if !sel.match("suite", x.Suite) {
				continue
			}
			seen["suite"]++
			if !sel.match("target", r.Target) || !sel.match("engine", r.Engine) || !sel.match("version", r.Version) ||
				!sel.match("host", m.Host.Hostname) {
				continue
			}
			seen["run"]++
			if r.Status != store.StatusOK {
				continue
			}
			rs, err := st.Results(ctx, r.ID, true)
			if err != nil {
				return nil, fmt.Errorf("read results of run %d: %w", r.ID, err)
			}
			run := &Run{Run: r, Manifest: m}
			for _, res := range rs {
				if res.Warm || res.Action || res.Status != store.StatusOK || res.Role.Secondary {
					continue
				}
				if !sel.match("test", res.Test) || !sel.match("threads", strconv.Itoa(res.Threads)) {
					continue
				}
				run.Results = append(run.Results, res)
			}
			if len(run.Results) > 0 {
				x.Runs = append(x.Runs, run)
			}
		}
		if len(x.Runs) > 0 {
			set.Experiments = append(set.Experiments, x)
		}
	}
	if len(set.Experiments) == 0 {
		why := "no experiment has that ID or name in that time range"
		switch {
		case len(exps) == 0:
			why = "the store holds no experiment"
		case seen["experiment"] == 0:
		case seen["suite"] == 0:
			why = fmt.Sprintf("%d experiments match, none of that suite", seen["experiment"])
		case seen["run"] == 0:
			why = fmt.Sprintf("%d experiments match, none with a run of that target, engine, version or host", seen["experiment"])
		default:
			why = fmt.Sprintf("%d runs match, none finished OK with a measured result of that test and threads", seen["run"])
		}
		return nil, &NoMatch{Selector: sel.Text, Why: why}
	}
	slices.SortStableFunc(set.Experiments, func(a, b *Experiment) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return set, nil
}

// importSuiteName is the suite `benchlab import` writes in the spec it
// stores (importer.Suite).
const importSuiteName = "imported"

// parseExperiment parses an experiment's stored spec once.
func parseExperiment(e store.Experiment) *Experiment {
	x := &Experiment{Experiment: e}
	sp, err := spec.ParseStored([]byte(e.Spec), fmt.Sprintf("experiment %d's stored spec", e.ID))
	if err == nil {
		x.Parsed, x.Suite = &sp, sp.Workload.Suite
		return x
	}
	x.SpecErr = err
	// An imported experiment's suite is registered by no linked package:
	// read its name without the suite's options.
	var doc struct {
		Workload struct {
			Suite string `toml:"suite"`
		} `toml:"workload"`
	}
	if _, err := toml.Decode(e.Spec, &doc); err == nil {
		x.Suite = doc.Workload.Suite
	}
	return x
}

// Runs lists every run of the set, oldest experiment first.
func (s *Set) Runs() []*Run {
	var out []*Run
	for _, e := range s.Experiments {
		out = append(out, e.Runs...)
	}
	return out
}

// Targets lists the target names of the set's runs, once each, in order.
func (s *Set) Targets() []string {
	var out []string
	for _, r := range s.Runs() {
		if !slices.Contains(out, r.Target) {
			out = append(out, r.Target)
		}
	}
	return out
}

// Suites lists the suites of the set's experiments, once each, in order.
func (s *Set) Suites() []string {
	var out []string
	for _, e := range s.Experiments {
		if !slices.Contains(out, e.Suite) {
			out = append(out, e.Suite)
		}
	}
	return out
}

// Cells maps each cell of the set to the metric its results report, in
// the order the cells first appear.
func (s *Set) Cells() ([]Cell, map[Cell]metric.Metric) {
	var order []Cell
	ms := map[Cell]metric.Metric{}
	for _, e := range s.Experiments {
		for _, r := range e.Runs {
			for _, res := range r.Results {
				c := Cell{Suite: e.Suite, Test: res.Test, Threads: res.Threads}
				if _, ok := ms[c]; !ok {
					order = append(order, c)
					ms[c] = metric.Of(res.Metric)
				}
			}
		}
	}
	return order, ms
}

// Mixed lists, for a cell whose results report different metrics, each
// metric's name once: results in different units cannot be set against
// each other. Nil when the set's results of each cell agree.
func (s *Set) Mixed() map[Cell][]string {
	seen := map[Cell][]string{}
	for _, e := range s.Experiments {
		for _, r := range e.Runs {
			for _, res := range r.Results {
				c := Cell{Suite: e.Suite, Test: res.Test, Threads: res.Threads}
				if n := MetricName(res); !slices.Contains(seen[c], n) {
					seen[c] = append(seen[c], n)
				}
			}
		}
	}
	out := map[Cell][]string{}
	for c, ns := range seen {
		if len(ns) > 1 {
			out[c] = ns
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// MetricName is the name of the metric a result reports, as stored ("" is
// queries per second, the metric of results stored before metrics had
// names). It is compared as stored, not as metric.Of resolves it, so that
// a unit no linked suite registers is still told apart from another.
func MetricName(r store.Result) string {
	if r.Metric == "" {
		return metric.QPS.Name
	}
	return r.Metric
}
