package report

import (
	"benchlab/internal/report/section"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// groupOrder is the order of docs/method.md 2.7's groups.
var groupOrder = []string{
	"point queries", "range queries without aggregation", "range queries with aggregation", "writes",
}

// Data is an experiment as loaded from the store, for the table builders.
type Data struct {
	Experiment store.Experiment
	Runs       []store.Run
	// Results maps run ID to its step results.
	Results map[int64][]store.Result
	// Noise is the host's noise history that applies to the experiment;
	// nil means none (verdicts then rest on the repeats).
	Noise *noise.Model

	// spec is the stored spec, parsed once (StoredSpec) from specOf, the
	// text it was parsed from; specRead says whether it was tried, so an
	// unreadable one is not tried again.
	spec     *spec.Spec
	specOf   string
	specRead bool
}

// StoredSpec is the experiment's stored spec, parsed on first use and then
// kept: the header, the sweeps, the sequence and the suites' sections all
// read it. Nil when it cannot be read (an experiment stored by an older
// benchlab, or none stored). A Data whose Experiment.Spec was set anew is
// parsed anew.
func (d *Data) StoredSpec() *spec.Spec {
	if !d.specRead || d.specOf != d.Experiment.Spec {
		d.specRead, d.specOf, d.spec = true, d.Experiment.Spec, nil
		if sp, err := spec.ParseStored([]byte(d.Experiment.Spec), "stored spec"); err == nil {
			d.spec = &sp
		}
	}
	return d.spec
}

// Reader is the part of the store a report is read from. It has no
// method that writes: building a report changes nothing in the store, so
// it works on a store opened read-only, and the noise history it uses is
// the one learned when the results were stored (noise.Learn after a run,
// an import or a copy; noise.Backfill before a report in the cli).
type Reader interface {
	noise.HistoryReader
	Experiment(ctx context.Context, id int64) (store.Experiment, error)
	Runs(ctx context.Context, experimentID int64) ([]store.Run, error)
	Results(ctx context.Context, runID int64, withIntervals bool) ([]store.Result, error)
}

// Load reads an experiment (0 = the most recent) with all its runs and
// results, and the host's noise history that applies to it. It parses the
// stored spec once, here, for every table that needs it.
func Load(ctx context.Context, st Reader, experimentID int64, withIntervals bool) (*Data, error) {
	exp, err := st.Experiment(ctx, experimentID)
	if err != nil {
		return nil, fmt.Errorf("load experiment %d: %w", experimentID, err)
	}
	runs, err := st.Runs(ctx, exp.ID)
	if err != nil {
		return nil, fmt.Errorf("load runs of experiment %d: %w", exp.ID, err)
	}
	// A superseded run (a queued job's attempt that lost the job to a
	// later one) is kept in the store and left out of reports.
	runs = slices.DeleteFunc(runs, func(r store.Run) bool { return r.Status == store.StatusSuperseded })
	d := &Data{Experiment: exp, Runs: runs, Results: map[int64][]store.Result{}}
	for _, r := range runs {
		if d.Results[r.ID], err = st.Results(ctx, r.ID, withIntervals); err != nil {
			return nil, fmt.Errorf("load results of run %d: %w", r.ID, err)
		}
		metric.Fill(d.Results[r.ID])
	}
	if d.Noise, err = noise.Load(ctx, st, exp, runs, d.Results); err != nil {
		return nil, fmt.Errorf("load noise history of experiment %d: %w", exp.ID, err)
	}
	d.StoredSpec()
	return d, nil
}

// cellKey identifies one row of the tables: a test at a thread count.
type cellKey struct {
	test    string
	threads int
}

// samples collects, per target and row, the results of every repeat.
type samples map[string]map[cellKey][]store.Result

func (d *Data) samples() (samples, []cellKey, map[cellKey]string) {
	s := samples{}
	groups := map[cellKey]string{}
	firstSeq := map[cellKey]int{}
	groupSeq := map[string]int{}
	var keys []cellKey
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.Warm || r.Action || r.Status != store.StatusOK || r.Role.Secondary {
				continue
			}
			k := cellKey{r.Test, r.Threads}
			if s[run.Target] == nil {
				s[run.Target] = map[cellKey][]store.Result{}
			}
			if _, seen := groups[k]; !seen {
				keys = append(keys, k)
				groups[k] = r.Group
				firstSeq[k] = r.Seq
			}
			if g, ok := groupSeq[r.Group]; !ok || r.Seq < g {
				groupSeq[r.Group] = r.Seq
			}
			s[run.Target][k] = append(s[run.Target][k], r)
		}
	}
	// docs/method.md 2.7's groups come in its order with tests sorted by name, as
	// the articles list them; other suites' groups and tests keep run order.
	gi := func(g string) int {
		if i := slices.Index(groupOrder, g); i >= 0 {
			return i
		}
		return len(groupOrder) + groupSeq[g]
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ga, gb := gi(groups[a]), gi(groups[b]); ga != gb {
			return ga < gb
		}
		if a.test != b.test {
			if slices.Contains(groupOrder, groups[a]) {
				return a.test < b.test
			}
			return firstSeq[a] < firstSeq[b]
		}
		return a.threads < b.threads
	})
	return s, keys, groups
}

// targets returns the experiment's targets with the base first.
func (d *Data) targets() []string {
	out := []string{d.Experiment.Base}
	for _, t := range d.Experiment.Targets {
		if t != d.Experiment.Base {
			out = append(out, t)
		}
	}
	return out
}

// metricOf is the metric a row reports (its first result's).
func (s samples) metricOf(k cellKey) metric.Metric {
	for _, byKey := range s {
		for _, r := range byKey[k] {
			return metric.Of(r.Metric)
		}
	}
	return metric.QPS
}

// directionOf is the direction of the metric the repeats rs report.
func directionOf(rs []store.Result) analysis.Direction {
	if len(rs) == 0 {
		return metric.QPS.Direction
	}
	return metric.Of(rs[0].Metric).Direction
}

// kindTable shows, for tests whose operations come in kinds (TPC-C's
// transactions, custom mixes), each kind's share of the operations and its
// p99 latency, per target (medians over repeats), the most frequent kinds
// first. Nil when no test has kinds.
func kindTable(keys []cellKey, s samples, targets []string, groups map[cellKey]string, label func(cellKey) string) *Table {
	t := &Table{Title: "Operations by kind",
		Legend: "per kind of operation (TPC-C transactions, custom mix tests): share of the operations in %, and p99 latency in ms (median over repeats)"}
	var kinds []string
	total := map[string]float64{}
	for _, k := range keys {
		for _, tg := range targets {
			for _, r := range s[tg][k] {
				for _, ks := range r.Kinds() {
					if !slices.Contains(kinds, ks.Kind) {
						kinds = append(kinds, ks.Kind)
					}
					total[ks.Kind] += float64(ks.Ops)
				}
			}
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	// The most frequent kinds first (TPC-C: New-Order, then Payment).
	slices.SortStableFunc(kinds, func(a, b string) int { return cmp.Compare(total[b], total[a]) })
	t.Columns = []string{"target"}
	for _, kind := range kinds {
		t.Columns = append(t.Columns, kind+" %", kind+" p99")
	}
	for _, k := range keys {
		for _, tg := range targets {
			rs := s[tg][k]
			if len(rs) == 0 || len(rs[0].Kinds()) == 0 {
				continue
			}
			row := Row{Group: groups[k], Label: label(k), Cells: []Cell{{Kind: Text, Text: tg}}}
			for _, kind := range kinds {
				share := section.Median(rs, func(r store.Result) float64 {
					if r.Events == 0 {
						return math.NaN()
					}
					ks, _ := r.Kind(kind)
					return 100 * float64(ks.Ops) / float64(r.Events)
				})
				p99 := section.Median(rs, func(r store.Result) float64 {
					ks, _ := r.Kind(kind)
					return ms(ks.P99.Seconds())
				})
				row.Cells = append(row.Cells, section.NumberCell(share), section.NumberCell(p99))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func ms(secs float64) float64 { return secs * 1000 }

// latencyMS is a stored latency figure in milliseconds, NaN (an empty
// cell) when it is 0: not measured, as the percentiles an imported tool's
// output did not print, or a program's step that reports no latency (the
// command suite's regex steps).
func latencyMS(d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return ms(d.Seconds())
}

// labeler returns how rows are labelled: the test name, with "@threads"
// when the experiment ran several thread counts; and those thread counts.
func labeler(keys []cellKey) (func(cellKey) string, map[int]bool) {
	threadCounts := map[int]bool{}
	for _, k := range keys {
		threadCounts[k.threads] = true
	}
	return func(k cellKey) string {
		if len(threadCounts) > 1 {
			return fmt.Sprintf("%s @%d", k.test, k.threads)
		}
		return k.test
	}, threadCounts
}

// repeatRange returns the fewest and most repeats any target has in any row.
func repeatRange(s samples, keys []cellKey) (lo, hi int) {
	lo = math.MaxInt
	for _, byKey := range s {
		for _, k := range keys {
			n := len(byKey[k])
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	if hi == 0 {
		lo = 0
	}
	return lo, hi
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
