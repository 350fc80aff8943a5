package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// groupOrder is the order of METHOD.md 2.7's groups.
var groupOrder = []string{
	"point queries", "range queries without aggregation", "range queries with aggregation", "writes",
}

// Data is an experiment as loaded from the store, for the table builders.
type Data struct {
	Experiment store.Experiment
	Runs       []store.Run
	// Results maps run ID to its step results.
	Results map[int64][]store.Result
}

// Load reads an experiment (0 = the most recent) with all its runs and results.
func Load(ctx context.Context, st *store.Store, experimentID int64, withIntervals bool) (*Data, error) {
	exp, err := st.Experiment(ctx, experimentID)
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	d := &Data{Experiment: exp, Runs: runs, Results: map[int64][]store.Result{}}
	for _, r := range runs {
		if d.Results[r.ID], err = st.Results(ctx, r.ID, withIntervals); err != nil {
			return nil, err
		}
	}
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
	var keys []cellKey
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.Warm || r.Action || r.Status != store.StatusOK {
				continue
			}
			k := cellKey{r.Test, r.Threads}
			if s[run.Target] == nil {
				s[run.Target] = map[cellKey][]store.Result{}
			}
			if _, seen := groups[k]; !seen {
				keys = append(keys, k)
				groups[k] = r.Group
			}
			s[run.Target][k] = append(s[run.Target][k], r)
		}
	}
	gi := func(g string) int {
		if i := slices.Index(groupOrder, g); i >= 0 {
			return i
		}
		return len(groupOrder)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ga, gb := gi(groups[a]), gi(groups[b]); ga != gb {
			return ga < gb
		}
		if a.test != b.test {
			return a.test < b.test
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

func median(rs []store.Result, f func(store.Result) float64) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Build makes the report of an experiment: what ran, relative and absolute
// throughput, latency, and the notes a reader must see.
func Build(d *Data) *Report { return BuildWith(d, Options{}) }

// BuildWith is Build with explicit options.
func BuildWith(d *Data, opt Options) *Report {
	r := &Report{Title: fmt.Sprintf("benchlab experiment %d: %s", d.Experiment.ID, d.Experiment.Name)}
	r.Header = header(d)
	s, keys, groups := d.samples()
	targets := d.targets()
	threadCounts := map[int]bool{}
	for _, k := range keys {
		threadCounts[k.threads] = true
	}
	label := func(k cellKey) string {
		if len(threadCounts) > 1 {
			return fmt.Sprintf("%s @%d", k.test, k.threads)
		}
		return k.test
	}
	tput := func(x store.Result) float64 { return x.Throughput() }
	if len(targets) > 1 {
		rel := Table{
			Title: "Relative throughput: QPS(target) / QPS(" + d.Experiment.Base + ")",
			Legend: "2 decimals; + (green) >= 1.05 better, - (red) <= 0.95 worse, grey between; " +
				"scan compares thousand rows scanned/s",
			Columns: targets[1:],
		}
		if _, hi := repeatRange(s, keys); hi >= 2 {
			rel.Legend = "ratio of medians over the repeats, 2 decimals; - slower and + faster: significant verdicts " +
				"(coloured red and green), = same, ? unknown (grey); scan compares thousand rows scanned/s"
		}
		for _, k := range keys {
			base := values(s[targets[0]][k], tput)
			row := Row{Group: groups[k], Label: label(k)}
			for _, t := range targets[1:] {
				row.Cells = append(row.Cells, relativeCell(base, values(s[t][k], tput), analysis.HigherIsBetter, opt.Verdict))
			}
			rel.Rows = append(rel.Rows, row)
		}
		r.Tables = append(r.Tables, rel)
		if seq := sequenceTable(d, keys, s, label, groups, opt); seq != nil {
			r.Tables = append(r.Tables, *seq)
		}
	}
	abs := Table{Title: "Absolute throughput", Legend: "queries per second (scan: thousand rows scanned per second)",
		Columns: targets}
	for _, k := range keys {
		row := Row{Group: groups[k], Label: label(k)}
		for _, t := range targets {
			row.Cells = append(row.Cells, NumberCell(median(s[t][k], tput)))
		}
		abs.Rows = append(abs.Rows, row)
	}
	r.Tables = append(r.Tables, abs)
	lat := Table{Title: "Latency per event", Legend: "milliseconds, from HDR histograms of the measured part (median over repeats)"}
	for _, t := range targets {
		lat.Columns = append(lat.Columns, t+" p50", t+" p99")
	}
	for _, k := range keys {
		row := Row{Group: groups[k], Label: label(k)}
		for _, t := range targets {
			row.Cells = append(row.Cells,
				NumberCell(median(s[t][k], func(x store.Result) float64 { return ms(x.Latency.P50.Seconds()) })),
				NumberCell(median(s[t][k], func(x store.Result) float64 { return ms(x.Latency.P99.Seconds()) })))
		}
		lat.Rows = append(lat.Rows, row)
	}
	r.Tables = append(r.Tables, lat)
	r.Notes = notes(d)
	minRep, maxRep := repeatRange(s, keys)
	r.Notes = append(r.Notes, verdictNotes(minRep, maxRep, opt.Verdict)...)
	r.Notes = append(r.Notes, stabilityNotes(d)...)
	return r
}

func ms(secs float64) float64 { return secs * 1000 }

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

func header(d *Data) []string {
	e := d.Experiment
	h := []string{}
	if e.Preset == "smoke" {
		h = append(h, "SMOKE PRESET: NOT FOR CONCLUSIONS (tiny table, 1-second tests)")
	}
	h = append(h, fmt.Sprintf("created %s, preset %s, base %s", e.Created.Local().Format("2006-01-02 15:04:05"),
		orDefault(e.Preset, "none (faithful defaults)"), e.Base))
	seen := map[string]bool{}
	var host string
	for _, run := range d.Runs {
		m := store.ParseManifest(run.Manifest)
		if host == "" {
			host = fmt.Sprintf("host: %s, %d cores, %s MHz, kernel %s, %d MB RAM, cpus allowed %s; benchlab %s (%s)",
				m.Host.CPUModel, m.Host.Cores, firstField(m.Host.CPUMHz), m.Host.Kernel, m.Host.MemTotalMB,
				m.Host.Affinity, m.Benchlab.Version, m.Benchlab.Commit)
		}
		if seen[run.Target] {
			continue
		}
		seen[run.Target] = true
		h = append(h, fmt.Sprintf("target %s: %s %s; %s", run.Target, run.Engine, run.Version, settingsLine(m.Engine.Settings)))
	}
	if host != "" {
		h = append(h, host)
	}
	return h
}

func firstField(s string) string {
	f, _, _ := strings.Cut(s, ",")
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func settingsLine(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// Thresholds beyond which a run is flagged as noisy.
const (
	// NoisyStealPct is the CPU steal share (percent of all CPU time).
	NoisyStealPct = 5
	// NoisyLoadPerCore is the 1-minute load average per core at the start.
	NoisyLoadPerCore = 0.5
)

func notes(d *Data) []string {
	var n []string
	repeats := map[string]int{}
	builds := map[string]bool{}
	for _, run := range d.Runs {
		if run.Status == store.StatusOK {
			repeats[run.Target]++
		} else {
			msg := fmt.Sprintf("run %d (%s, repeat %d) is %s", run.ID, run.Target, run.Repeat, run.Status)
			if run.Error != "" {
				msg += ": " + run.Error
			}
			n = append(n, msg+"; its completed steps are included")
		}
		m := store.ParseManifest(run.Manifest)
		if m.Engine.Build != "" {
			builds[m.Engine.Build] = true
		}
		loads := m.MachineLoad
		if len(loads) == 2 && loads[1].StealPct > NoisyStealPct {
			n = append(n, fmt.Sprintf("noisy: run %d (%s): %.1f%% CPU steal during the run; results may be disturbed",
				run.ID, run.Target, loads[1].StealPct))
		}
		if len(loads) == 2 && loads[0].LoadAvg1 > float64(m.Host.Cores)*NoisyLoadPerCore {
			n = append(n, fmt.Sprintf("noisy: run %d (%s) started with load average %.2f on %d cores",
				run.ID, run.Target, loads[0].LoadAvg1, m.Host.Cores))
		}
		for _, r := range d.Results[run.ID] {
			if r.Errors > 0 && len(r.ErrorSamples) > 0 {
				n = append(n, fmt.Sprintf("%s on %s (%d threads): %d failed operations, first: %s",
					r.Test, run.Target, r.Threads, r.Errors, r.ErrorSamples[0]))
			}
		}
	}
	maxRep := 0
	for _, c := range repeats {
		maxRep = max(maxRep, c)
	}
	if maxRep <= 1 {
		n = append(n, "each cell ran once: no significance was tested; colours use the plain 0.95/1.05 thresholds")
	}
	if len(builds) > 1 {
		n = append(n, "targets come from different builds; a compiler or build change can look like a version regression")
	}
	return n
}
