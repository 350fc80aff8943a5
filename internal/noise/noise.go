// Package noise keeps the host's noise model in the store: how much each
// test's throughput varies from run to run on this machine, learned from
// every experiment's repeats (and A/A pairs, whose identical targets pool
// into one configuration), and the canary probes that tell a slow machine
// from a slow database. Verdicts use the model as a prior
// (analysis.CompareNoise).
package noise

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/store"
)

// cellKey is one test at one thread count of one engine.
type cellKey struct {
	engine, test string
	threads      int
}

// usable says whether a result is a measured headline result of an OK run.
func usable(run store.Run, r store.Result) bool {
	return run.Status == store.StatusOK && !r.Warm && !r.Action && r.Status == store.StatusOK && !r.Role.Secondary
}

// suiteOf names an experiment's workload for the noise model: the suite
// and a fingerprint of the workload's shape ("sysbench@1a2b3c4d"); "" when
// the spec cannot be read. How much a test varies from run to run depends
// on its duration and data size, so history pools only experiments whose
// workload is the same apart from the tests chosen, the thread counts and
// the repeats.
func suiteOf(exp store.Experiment) string {
	// The stored spec's [workload] table, with the suite's own table in it,
	// read generically so that every option of every suite counts.
	var doc map[string]any
	if _, err := toml.Decode(exp.Spec, &doc); err != nil {
		return ""
	}
	w, _ := doc["workload"].(map[string]any)
	suite, _ := w["suite"].(string)
	if suite == "" {
		return ""
	}
	for _, k := range []string{"tests", "threads", "repeats"} {
		delete(w, k)
	}
	h := fnv.New32a()
	if err := toml.NewEncoder(h).Encode(w); err != nil {
		return ""
	}
	return fmt.Sprintf("%s@%08x", suite, h.Sum32())
}

// TestName is the noise model's name of a test: suite@shape/test.
func TestName(suite, test string) string { return suite + "/" + test }

// TestKey is the noise model's name of a test of an experiment
// (store.NoiseKey.Test): suite@shape/test; "" when the experiment's spec
// cannot be read.
func TestKey(exp store.Experiment, test string) string {
	s := suiteOf(exp)
	if s == "" {
		return ""
	}
	return TestName(s, test)
}

// config names a run's configuration: engine, version, build and the
// target's settings. Targets with the same config are the same thing
// measured twice (an A/A pair), so their repeats pool into one group.
func config(run store.Run) string {
	// Only the fields named here are decoded (as store.Manifest names
	// them): decoding the whole manifest took a third of learning a long
	// history (noise.Backfill).
	var m struct {
		Target struct {
			Settings map[string]string `json:"settings"`
		} `json:"target"`
		Engine struct {
			Version string `json:"version"`
			Build   string `json:"build"`
		} `json:"engine"`
	}
	_ = json.Unmarshal([]byte(run.Manifest), &m)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", run.Engine, m.Engine.Version, m.Engine.Build)
	for _, k := range slices.Sorted(maps.Keys(m.Target.Settings)) {
		fmt.Fprintf(&b, " %s=%s", k, m.Target.Settings[k])
	}
	return b.String()
}

// HostOf is the host ID of an experiment's runs (the first run's manifest).
func HostOf(runs []store.Run) string {
	for _, r := range runs {
		if m := store.ParseManifest(r.Manifest); m.Host.Hostname != "" || m.Host.CPUModel != "" {
			return m.Host.ID()
		}
	}
	return ""
}

// Entries is what an experiment teaches the noise model: for every test,
// thread count and configuration with at least two OK repeats, the sample
// variance of log throughput over the repeats.
func Entries(exp store.Experiment, runs []store.Run, results map[int64][]store.Result) []store.NoiseEntry {
	host := HostOf(runs)
	suite := suiteOf(exp)
	if host == "" || suite == "" {
		return nil
	}
	if es, ok := pairedEntries(exp, runs, results, host, suite); ok {
		return es
	}
	type groupKey struct {
		cellKey
		config string
	}
	groups := map[groupKey][]float64{}
	for _, run := range runs {
		cfg := config(run)
		for _, r := range results[run.ID] {
			if !usable(run, r) {
				continue
			}
			if v := r.Throughput(); v > 0 && !math.IsInf(v, 0) {
				k := groupKey{cellKey{run.Engine, TestName(suite, r.Test), r.Threads}, cfg}
				groups[k] = append(groups[k], v)
			}
		}
	}
	var out []store.NoiseEntry
	for k, vs := range groups {
		if len(vs) < 2 {
			continue
		}
		p := analysis.PoolPrior(analysis.NoisePrior{}, vs)
		out = append(out, store.NoiseEntry{
			NoiseKey:     store.NoiseKey{Host: host, Engine: k.engine, Test: k.test, Threads: k.threads},
			ExperimentID: exp.ID, Config: k.config, Runs: p.Points, DF: p.DF, LogVar: p.Var,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return fmt.Sprint(a.Test, a.Threads, a.Config) < fmt.Sprint(b.Test, b.Threads, b.Config)
	})
	return out
}

// pairedEntries is what an interleaved experiment (spec
// workload.interleave) teaches: its targets took turns through each step,
// so a repeat's results were measured in the same window, and the verdicts
// judge the pairs' ratios to the base (report's pairedRuns). For every
// other target, test and thread count with at least two repeats paired
// with the base's, the entry's variance is half the sample variance of
// the pairs' log ratios: the verdict spreads the prior over both sides'
// runs, as if each carried half of a pair's variance. ok is false for an
// experiment that was not interleaved (its workload shape, and so its
// history, differs: suiteOf).
func pairedEntries(exp store.Experiment, runs []store.Run, results map[int64][]store.Result, host, suite string) ([]store.NoiseEntry, bool) {
	type pairKey struct {
		cellKey
		target string
	}
	type at struct {
		cellKey
		target string
		repeat int
	}
	values := map[at]float64{}
	configOf := map[string]string{}
	interleaved := false
	for _, run := range runs {
		configOf[run.Target] = config(run)
		for _, r := range results[run.ID] {
			if !usable(run, r) {
				continue
			}
			interleaved = interleaved || r.Facts[store.FactInterleave] > 0
			if v := r.Throughput(); v > 0 && !math.IsInf(v, 0) {
				values[at{cellKey{run.Engine, TestName(suite, r.Test), r.Threads}, run.Target, run.Repeat}] = v
			}
		}
	}
	if !interleaved {
		return nil, false
	}
	// The base may run another engine: its cell is found by test, thread
	// count and repeat.
	type window struct {
		test            string
		threads, repeat int
	}
	baseAt := map[window]float64{}
	for k, v := range values {
		if k.target == exp.Base {
			baseAt[window{k.test, k.threads, k.repeat}] = v
		}
	}
	logRatios := map[pairKey][]float64{}
	for k, v := range values {
		if bv, ok := baseAt[window{k.test, k.threads, k.repeat}]; ok && k.target != exp.Base {
			pk := pairKey{k.cellKey, k.target}
			logRatios[pk] = append(logRatios[pk], math.Log(v/bv))
		}
	}
	var out []store.NoiseEntry
	for k, ds := range logRatios {
		if len(ds) < 2 {
			continue
		}
		m := 0.0
		for _, d := range ds {
			m += d
		}
		m /= float64(len(ds))
		ss := 0.0
		for _, d := range ds {
			ss += (d - m) * (d - m)
		}
		out = append(out, store.NoiseEntry{
			NoiseKey:     store.NoiseKey{Host: host, Engine: k.engine, Test: k.test, Threads: k.threads},
			ExperimentID: exp.ID, Config: "pairs of " + k.target + " with base: " + configOf[k.target], Runs: len(ds), DF: len(ds) - 1,
			LogVar: ss / float64(len(ds)-1) / 2,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return fmt.Sprint(a.Test, a.Threads, a.Config) < fmt.Sprint(b.Test, b.Threads, b.Config)
	})
	return out, true
}

// Learn stores what an experiment teaches the noise model, replacing what
// it taught before, so learning twice (after a run, then when a copy is
// reported) counts once. Runs whose canary found the machine slow still
// teach: on a busy host the canaries flag a third of the runs or more, and
// a history without them would describe a calmer machine than the verdicts
// judge; entries of far noisier periods are set aside when the history is
// pooled instead (analysis.PoolHistory).
func Learn(ctx context.Context, st *store.Store, exp store.Experiment, runs []store.Run, results map[int64][]store.Result) error {
	if err := st.SaveNoise(ctx, exp.ID, Entries(exp, runs, results)); err != nil {
		return fmt.Errorf("learn noise of experiment %d: %w", exp.ID, err)
	}
	return nil
}

// backfillBatch is how many experiments Backfill reads and learns at once:
// few statements and commits for a long history, and only that many
// experiments' results in memory.
var backfillBatch = 100

// Backfill learns every experiment of the store the noise model has not
// learned yet, so experiments stored before the model existed or copied
// from another store count as history. Each is learned once, as
// LearnStored would learn it, but read and saved backfillBatch experiments
// at a time (store.ReadBatch, store.SaveNoiseMany): learning 1,000 copied
// experiments of 10,000 runs one by one took 8 s, one statement per run.
func Backfill(ctx context.Context, st *store.Store) error {
	ids, err := st.Unlearned(ctx)
	if err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), backfillBatch)
		b, err := st.ReadBatch(ctx, ids[:n])
		if err != nil {
			return fmt.Errorf("learn noise of experiments %d-%d: %w", ids[0], ids[n-1], err)
		}
		for _, rs := range b.Results {
			metric.Fill(rs)
		}
		learned := map[int64][]store.NoiseEntry{}
		for _, exp := range b.Experiments {
			learned[exp.ID] = Entries(exp, b.Runs[exp.ID], b.Results)
		}
		if err := st.SaveNoiseMany(ctx, learned); err != nil {
			return fmt.Errorf("learn noise of experiments %d-%d: %w", ids[0], ids[n-1], err)
		}
		ids = ids[n:]
	}
	return nil
}

// Model is the noise history that applies to one experiment: the priors
// of its tests from the host's other experiments, and the host's canary
// figures.
type Model struct {
	// Host is the host ID the history belongs to.
	Host   string
	suite  string
	priors map[cellKey]analysis.NoisePrior
	// Canaries are the host's canary figures over every stored run
	// (including this experiment's).
	Canaries CanaryBaseline
	// slow caches HostSlow's answers by run ID.
	slow map[int64]string
}

// HostSlow says why run counts as run on a slow host
// (CanaryBaseline.HostSlow), "" when it does not; a nil model flags
// nothing. Its answers are kept, as the report asks for every cell.
func (m *Model) HostSlow(run store.Run) string {
	if m == nil {
		return ""
	}
	if s, ok := m.slow[run.ID]; ok {
		return s
	}
	var s string
	if h, slow := m.Canaries.HostSlow(run); slow {
		s = h.String()
	}
	if m.slow == nil {
		m.slow = map[int64]string{}
	}
	m.slow[run.ID] = s
	return s
}

// HistoryReader is the part of the store the model is read from: reading
// needs no write access, so a report can be built from a store opened
// read-only.
type HistoryReader interface {
	NoiseHistory(ctx context.Context, key store.NoiseKey, exclude ...int64) ([]store.NoiseEntry, error)
	RecentRuns(ctx context.Context, limit, offset int) ([]store.Run, int, error)
}

// Load reads the history that applies to an experiment: for every engine,
// test and thread count in its results, the entries of the host's other
// experiments (neither exp nor an experiment any of runs belongs to: a
// comparison across experiments must not learn its prior from the runs it
// judges), and the canary baseline of the host. It writes nothing;
// the history is learned when results are stored (Learn, Backfill).
func Load(ctx context.Context, st HistoryReader, exp store.Experiment, runs []store.Run, results map[int64][]store.Result) (*Model, error) {
	m := &Model{Host: HostOf(runs), suite: suiteOf(exp), priors: map[cellKey]analysis.NoisePrior{}}
	if m.Host == "" || m.suite == "" {
		return m, nil
	}
	exclude := []int64{exp.ID}
	for _, run := range runs {
		if !slices.Contains(exclude, run.ExperimentID) {
			exclude = append(exclude, run.ExperimentID)
		}
	}
	for _, run := range runs {
		for _, r := range results[run.ID] {
			if !usable(run, r) {
				continue
			}
			k := cellKey{run.Engine, TestName(m.suite, r.Test), r.Threads}
			if _, done := m.priors[k]; done {
				continue
			}
			es, err := st.NoiseHistory(ctx, store.NoiseKey{Host: m.Host, Engine: k.engine, Test: k.test, Threads: k.threads}, exclude...)
			if err != nil {
				return nil, err
			}
			m.priors[k] = pool(es)
		}
	}
	// The baseline is the median of the newest runs' canaries: parsing every
	// manifest of a long history took most of a report's time (10,000 runs:
	// 1.1 s of CPU of the 1.3 s loading took).
	recent, _, err := st.RecentRuns(ctx, CanaryHistory, 0)
	if err != nil {
		return nil, err
	}
	m.Canaries = Baseline(m.Host, recent)
	return m, nil
}

// Prior is the pooled history of a test at a thread count over the
// engines of both sides of a comparison (one engine when they agree). A nil
// model has no history.
func (m *Model) Prior(engines []string, test string, threads int) analysis.NoisePrior {
	var p analysis.NoisePrior
	if m == nil {
		return p
	}
	seen := map[string]bool{}
	for _, e := range engines {
		if seen[e] {
			continue
		}
		seen[e] = true
		p = analysis.CombinePrior(p, m.priors[cellKey{e, TestName(m.suite, test), threads}])
	}
	return p
}

// Series is a result's per-second series in its metric's per-second unit
// (metric.Metric.Series: statements/s for qps, rows/s for ips, tpmC), over
// the measured seconds; nil for metrics no series measures (krps, from
// latency).
func Series(r store.Result) []float64 {
	m := metric.Of(r.Metric)
	if m.NoSeries {
		return nil
	}
	var out []float64
	for _, iv := range r.Intervals {
		if iv.Sec < 0 || iv.Seconds < 0.5 {
			continue
		}
		out = append(out, m.Series(metric.Counts{Seconds: iv.Seconds, Events: iv.Events, Statements: iv.Statements,
			Rows: iv.Rows, RowsPerOp: r.RowsPerOp}))
	}
	return out
}

// RunOf is a result as the verdict sees it: its throughput and the
// within-run variance of its log from batch means over its series.
func RunOf(r store.Result) analysis.Run {
	return analysis.Run{Value: r.Throughput(), RelVar: analysis.BatchMeansOf(Series(r)).RelVar()}
}

// LearnStored loads experiment id's runs and results from st and learns
// from them (Learn).
func LearnStored(ctx context.Context, st *store.Store, id int64) error {
	exp, err := st.Experiment(ctx, id)
	if err != nil {
		return err
	}
	runs, err := st.Runs(ctx, id)
	if err != nil {
		return err
	}
	results := map[int64][]store.Result{}
	for _, r := range runs {
		if results[r.ID], err = st.Results(ctx, r.ID, false); err != nil {
			return err
		}
		metric.Fill(results[r.ID])
	}
	return Learn(ctx, st, exp, runs, results)
}

// PriorFor is the host's noise history of a test at a thread count for an
// experiment that has not run yet, whose stored spec would be specTOML
// (spec.Spec.TOML), pooled over the engines of both sides of a comparison
// as Model.Prior pools them. It lets plan say what the history can call
// before anything runs.
func PriorFor(ctx context.Context, st *store.Store, host, specTOML string, engines []string, test string, threads int) (analysis.NoisePrior, error) {
	var p analysis.NoisePrior
	suite := suiteOf(store.Experiment{Spec: specTOML})
	if host == "" || suite == "" {
		return p, nil
	}
	seen := map[string]bool{}
	for _, e := range engines {
		if seen[e] {
			continue
		}
		seen[e] = true
		es, err := st.NoiseHistory(ctx, store.NoiseKey{Host: host, Engine: e, Test: TestName(suite, test), Threads: threads})
		if err != nil {
			return p, err
		}
		p = analysis.CombinePrior(p, pool(es))
	}
	return p, nil
}

// pool is the prior of a test's history entries: their variances pooled
// with their degrees of freedom, the entries of far noisier periods set
// aside (analysis.PoolHistory).
func pool(es []store.NoiseEntry) analysis.NoisePrior {
	ps := make([]analysis.NoisePrior, len(es))
	for i, e := range es {
		ps[i] = analysis.NoisePrior{Var: e.LogVar, DF: e.DF, Points: e.Runs}
	}
	p, _ := analysis.PoolHistory(ps)
	return p
}
