package report

import (
	"benchlab/internal/report/section"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/spec"
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
	d := &Data{Experiment: exp, Runs: runs, Results: map[int64][]store.Result{}}
	for _, r := range runs {
		if d.Results[r.ID], err = st.Results(ctx, r.ID, withIntervals); err != nil {
			return nil, fmt.Errorf("load results of run %d: %w", r.ID, err)
		}
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
	// METHOD.md 2.7's groups come in its order with tests sorted by name, as
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

// otherMetrics lists the metrics other than QPS that rows report, each
// with the tests that report it, in row order: what the legends must name.
func otherMetrics(s samples, keys []cellKey) []metricRows {
	var out []metricRows
	for _, k := range keys {
		for _, byKey := range s {
			for _, r := range byKey[k] {
				m := metric.Of(r.Metric)
				if m.Name == metric.QPS.Name {
					continue
				}
				i := slices.IndexFunc(out, func(x metricRows) bool { return x.m.Name == m.Name })
				if i < 0 {
					out = append(out, metricRows{m: m})
					i = len(out) - 1
				}
				if !slices.Contains(out[i].tests, k.test) {
					out[i].tests = append(out[i].tests, k.test)
				}
			}
		}
	}
	return out
}

// metricRows is a metric and the tests that report it.
type metricRows struct {
	m     metric.Metric
	tests []string
}

// compareLegend adds to a relative table's legend what rows of other
// metrics compare: "; scan compares thousand rows scanned per second".
func compareLegend(s samples, keys []cellKey) string {
	out := ""
	for _, o := range otherMetrics(s, keys) {
		out += "; " + strings.Join(o.tests, ", ") + " compares " + o.m.Legend
	}
	return out
}

// absoluteLegend says what the absolute table's numbers are: queries per
// second, and what rows of other metrics report.
func absoluteLegend(s samples, keys []cellKey) string {
	var parts []string
	for _, o := range otherMetrics(s, keys) {
		parts = append(parts, strings.Join(o.tests, ", ")+": "+o.m.Legend)
	}
	switch {
	case len(parts) == 0:
		return metric.QPS.Legend
	case !hasQPS(s, keys):
		return strings.Join(parts, "; ")
	}
	return metric.QPS.Legend + " (" + strings.Join(parts, "; ") + ")"
}

// absoluteTitle titles the table of absolute values after what its rows'
// metrics measure: "Absolute throughput" (queries, rows, transactions per
// second), "Absolute latency" (connect's milliseconds), "Absolute values"
// for rows of several quantities.
func absoluteTitle(s samples, keys []cellKey) string {
	if q := quantityOf(s, keys); q != "" {
		return "Absolute " + q
	}
	return "Absolute values"
}

// quantityOf is what every row's metric measures ("throughput",
// "latency"), "" when the rows measure several quantities.
func quantityOf(s samples, keys []cellKey) string {
	q := ""
	for _, k := range keys {
		switch mq := s.metricOf(k).QuantityOf(); {
		case q == "":
			q = mq
		case q != mq:
			return ""
		}
	}
	if q == "" {
		q = metric.QPS.QuantityOf()
	}
	return q
}

// relativeTitle titles the relative table after what its rows' metrics
// measure and how the ratio is taken: "Relative throughput: QPS(target) /
// QPS(base)" when queries per second head the rows (other throughputs are
// named in the legend), "Relative latency: ms(target) / ms(base)" for
// connect's rows, "Relative values: target / base" for rows of several
// quantities.
func relativeTitle(s samples, keys []cellKey, base string) string {
	q := quantityOf(s, keys)
	if q == "" {
		return "Relative values: target / " + base
	}
	m := metric.QPS
	if !hasQPS(s, keys) {
		if others := otherMetrics(s, keys); len(others) == 1 {
			m = others[0].m
		} else {
			return "Relative " + q + ": target / " + base
		}
	}
	return "Relative " + q + ": " + m.SymbolOf() + "(target) / " + m.SymbolOf() + "(" + base + ")"
}

// relativeMarks says how the relative table marks its ratios: 1.05 and
// more is better where more is better, worse where less is (latencies),
// and the other way round at 0.95 and less.
func relativeMarks(s samples, keys []cellKey) string {
	return section.RelativeMarks(uniqueTests(keys), lowerIsBetterTests(s, keys))
}

// verdictLegend says on which side of 1 the relative table's significant
// verdicts lie: - slower below 1 and + faster above where more is better,
// the other way round where less is (a latency ratio above 1 is slower).
func verdictLegend(s samples, keys []cellKey) string {
	return section.VerdictLegend(uniqueTests(keys), lowerIsBetterTests(s, keys))
}

// lowerIsBetterTests lists, once each and in order, the tests of keys
// whose metric is lower-is-better (latencies).
func lowerIsBetterTests(s samples, keys []cellKey) []string {
	var out []string
	for _, k := range keys {
		if s.metricOf(k).Direction == analysis.LowerIsBetter && !slices.Contains(out, k.test) {
			out = append(out, k.test)
		}
	}
	return out
}

// uniqueTests lists the tests of keys once each, in order.
func uniqueTests(keys []cellKey) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k.test) {
			out = append(out, k.test)
		}
	}
	return out
}

// hasQPS reports whether any row reports queries per second.
func hasQPS(s samples, keys []cellKey) bool {
	for _, k := range keys {
		if s.metricOf(k).Name == metric.QPS.Name {
			return true
		}
	}
	return false
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

func header(d *Data) []string {
	e := d.Experiment
	h := []string{}
	if e.Preset == "smoke" {
		h = append(h, "SMOKE PRESET: NOT FOR CONCLUSIONS (tiny table, 1-second tests)")
	}
	if imported := importedFrom(d); imported != "" {
		// Runs another tool made: no preset, no duration, no host.
		h = append(h, fmt.Sprintf("imported %s, base %s", e.Created.Local().Format("2006-01-02 15:04:05"), e.Base))
		h = append(h, imported)
		seen := map[string]bool{}
		for _, run := range d.Runs {
			if !seen[run.Target] {
				seen[run.Target] = true
				h = append(h, importedTargetLine(d, run))
			}
		}
		return h
	}
	h = append(h, fmt.Sprintf("created %s, preset %s, base %s%s", e.Created.Local().Format("2006-01-02 15:04:05"),
		orDefault(e.Preset, "none"), e.Base, durationOf(d)))
	if sp := d.StoredSpec(); sp != nil {
		w := sp.Workload
		h = append(h, fmt.Sprintf("workload: %s, repeats %d", sp.Describe(), w.Repeats))
		for _, n := range w.StoredNotes() {
			h = append(h, "workload as run: "+n)
		}
	}
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
		h = append(h, targetLine(run, m))
	}
	if host != "" {
		h = append(h, host)
	}
	return h
}

// importedFrom is the header's line of an experiment `benchlab import`
// stored, "" for one benchlab ran: the tool, the tests and thread counts
// the files held, and the repeats.
func importedFrom(d *Data) string {
	tools := map[string]bool{}
	var list []string
	for _, run := range d.Runs {
		if src := store.ParseManifest(run.Manifest).Import; src != nil && !tools[src.Tool] {
			tools[src.Tool] = true
			list = append(list, src.Tool)
		}
	}
	if len(list) == 0 {
		return ""
	}
	line := "workload: imported from " + strings.Join(list, " and ") + " output (benchlab import), not run by benchlab"
	if sp := d.StoredSpec(); sp != nil {
		line += fmt.Sprintf("; tests %s, threads %v, repeats %d", strings.Join(sp.Workload.Tests, ", "),
			sp.Workload.Threads, sp.Workload.Repeats)
	}
	return line + "; no CPU, IO or host figures: the files have none"
}

// importedTargetLine is the header's line of an imported target: its
// engine and version as the import named them, the tool's version line,
// and each file with the start of its SHA-256.
func importedTargetLine(d *Data, first store.Run) string {
	line := "target " + first.Target + ": " + orDefault(strings.TrimSpace(first.Engine+" "+first.Version), "engine not named")
	var files []string
	version := ""
	for _, run := range d.Runs {
		if run.Target != first.Target {
			continue
		}
		if src := store.ParseManifest(run.Manifest).Import; src != nil {
			files = append(files, fmt.Sprintf("%s (sha256 %.12s)", src.File, src.SHA256))
			version = orDefault(version, src.ToolVersion)
		}
	}
	if version != "" {
		line += "; " + version
	}
	return line + "; files " + strings.Join(files, ", ")
}

// targetLine is the header's line of one target: its engine, the version
// the server reported and its settings, each left out when the run never
// read it (a server that did not start).
func targetLine(run store.Run, m store.Manifest) string {
	line := "target " + run.Target + ": " + strings.TrimSpace(run.Engine+" "+run.Version)
	if set := settingsLine(m.Engine.Settings); set != "" {
		line += "; " + set
	}
	return line
}

// suiteOf is the experiment's suite as its stored spec names it.
func suiteOf(d *Data) string {
	sp := d.StoredSpec()
	if sp == nil {
		return ""
	}
	return sp.Workload.Suite
}

// durationOf says how long the experiment's runs took, first start to last end.
func durationOf(d *Data) string {
	var first, last time.Time
	for _, r := range d.Runs {
		if first.IsZero() || r.Started.Before(first) {
			first = r.Started
		}
		if r.Ended.After(last) {
			last = r.Ended
		}
	}
	if first.IsZero() || last.Before(first) {
		return ""
	}
	return fmt.Sprintf(", ran for %s", last.Sub(first).Round(time.Second))
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
	// A run's own notes (a cleanup part left out), one line per target and
	// note however many runs had it.
	var runNotes []string
	runsOf := map[string][]string{}
	for _, run := range d.Runs {
		for _, note := range store.ParseManifest(run.Manifest).Notes {
			k := run.Target + ": " + note
			if _, ok := runsOf[k]; !ok {
				runNotes = append(runNotes, k)
			}
			runsOf[k] = append(runsOf[k], fmt.Sprint(run.ID))
		}
	}
	for _, k := range runNotes {
		n = append(n, fmt.Sprintf("%s (run %s)", k, strings.Join(runsOf[k], ", ")))
	}
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
	if c := clientNote(d); c != "" {
		n = append(n, c)
	}
	return n
}

// clientNote says how benchlab's workers ran, per target and thread count,
// from the client_* facts of the measured results (runner.clientFacts): the
// processors Go had, whether server clients waited through Go's poller or in
// blocking reads, and which tests ran several operations per call. These
// choices change what a step costs the client, so a comparison across them
// is worth knowing about. Empty when no result has the facts.
func clientNote(d *Data) string {
	type key struct {
		target  string
		threads int
	}
	var keys []key
	how := map[key][]string{}
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			procs, ok := r.Facts[store.FactClientGOMAXPROCS]
			if !ok || r.Action {
				continue
			}
			desc := fmt.Sprintf("GOMAXPROCS %d", int(procs))
			if polled, remote := r.Facts[store.FactClientPolledIO]; remote {
				desc += map[bool]string{true: ", poller IO", false: ", blocking reads"}[polled == 1]
			}
			if ops := r.Facts[store.FactClientOpsPerCall]; ops > 1 {
				desc += fmt.Sprintf(", %s %d operations per call", r.Test, int(ops))
			}
			k := key{run.Target, r.Threads}
			if _, seen := how[k]; !seen {
				keys = append(keys, k)
			}
			if !slices.Contains(how[k], desc) {
				how[k] = append(how[k], desc)
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	order := map[string]int{}
	for _, k := range keys {
		if _, ok := order[k.target]; !ok {
			order[k.target] = len(order)
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(order[a.target], order[b.target]), cmp.Compare(a.threads, b.threads))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		unit := "threads"
		if k.threads == 1 {
			unit = "thread"
		}
		parts[i] = fmt.Sprintf("%s at %d %s: %s", k.target, k.threads, unit, strings.Join(how[k], "; "))
	}
	return "client (how benchlab's workers ran): " + strings.Join(parts, " | ")
}

// effMetric is one per-operation efficiency column (issue 3 item 5, METHOD.md
// 2.6 and 3). value returns the figure of one result, a store sentinel
// (NotMeasured, NotReadable), or NaN when the result has no efficiency.
type effMetric struct {
	column string
	value  func(store.Result) float64
	// relative marks the columns of the relative table (METHOD.md 2.7 sum_met.sh).
	relative bool
}

// perOp divides a step total by the step's operations: total / sampled
// seconds / QPS, with "op" the QPS denominator (statements, METHOD.md 2.6).
func perOp(r store.Result, total float64, scale float64) float64 {
	if r.Eff == nil {
		return math.NaN()
	}
	v := r.Eff.PerOp(total, r.QPS())
	if v < 0 {
		return v
	}
	return v * scale
}

// engineIO picks the IO of the processes doing the engine's work: the
// server tree's, or benchlab's own for an in-process engine.
func engineIO(e *store.Efficiency, server, client int64) float64 {
	if e.ServerCPU == store.NotMeasured {
		return float64(client)
	}
	return float64(server)
}

var effMetrics = []effMetric{
	{"cpu us/op client", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return e.ClientCPU }), 1e6)
	}, true},
	{"cpu us/op server", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return e.ServerCPU }), 1e6)
	}, true},
	{"cpu us/op total", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return section.SumOf(e.ServerCPU, e.ClientCPU) }), 1e6)
	}, true},
	{"KB read/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerReadBytes, e.ClientReadBytes) }), 1.0/1024)
	}, true},
	{"KB written/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerWriteBytes, e.ClientWriteBytes) }), 1.0/1024)
	}, true},
	{"reads/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerReadCalls, e.ClientReadCalls) }), 1)
	}, false},
	{"writes/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return engineIO(e, e.ServerWriteCalls, e.ClientWriteCalls) }), 1)
	}, false},
	{"dev reads/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevReads) }), 1)
	}, false},
	{"dev KB read/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevReadBytes) }), 1.0/1024)
	}, false},
	{"dev KB written/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return float64(e.DevWriteBytes) }), 1.0/1024)
	}, false},
	{"cs/op", func(r store.Result) float64 {
		return perOp(r, effF(r, func(e *store.Efficiency) float64 { return section.SumOf(float64(e.ServerCS), float64(e.ClientCS)) }), 1)
	}, true},
	{"peak server RSS MB", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return section.MiB(e.ServerPeakRSS) })
	}, false},
	{"peak client RSS MB", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return section.MiB(e.ClientPeakRSS) })
	}, false},
	{"peak client own MB", func(r store.Result) float64 {
		return effF(r, func(*store.Efficiency) float64 { return factMB(r, store.FactClientOwnPeakRSS) })
	}, false},
	{"steal %", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return e.StealPct() })
	}, false},
	{"foreign cpu %", func(r store.Result) float64 {
		return effF(r, func(e *store.Efficiency) float64 { return e.ForeignPct() })
	}, false},
}

// effF applies f to r's efficiency, NaN when there is none.
func effF(r store.Result, f func(*store.Efficiency) float64) float64 {
	if r.Eff == nil {
		return math.NaN()
	}
	return f(r.Eff)
}

// factMB is a fact in bytes as MB; NotMeasured when r does not have it
// (results stored before it was measured).
func factMB(r store.Result, name string) float64 {
	v, ok := r.Facts[name]
	if !ok {
		return store.NotMeasured
	}
	return v / (1 << 20)
}

// effValues returns the figures of a row's repeats and whether all of them
// are numbers; otherwise the cell that says why not ("n/a" when not
// measured or not sampled, "not readable" when a counter could not be read).
func effValues(rs []store.Result, f func(store.Result) float64) ([]float64, *Cell) {
	if len(rs) == 0 {
		return nil, &Cell{Missing: true}
	}
	var out []float64
	for _, r := range rs {
		v := f(r)
		switch {
		case math.IsNaN(v) || v == store.NotMeasured:
			return nil, &Cell{Missing: true}
		case v == store.NotReadable:
			c := section.TextCell("not readable")
			return nil, &c
		}
		out = append(out, v)
	}
	return out, nil
}

// hasEfficiency reports whether any measured result was sampled.
func hasEfficiency(s samples, keys []cellKey) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if r.Eff != nil {
					return true
				}
			}
		}
	}
	return false
}

// hasFact reports whether a result of the keys' cells holds the fact.
func hasFact(s samples, keys []cellKey, fact string) bool {
	for _, byKey := range s {
		for _, k := range keys {
			for _, r := range byKey[k] {
				if _, ok := r.Facts[fact]; ok {
					return true
				}
			}
		}
	}
	return false
}

// efficiencyTables builds the absolute per-operation efficiency table and,
// with more than one target, the table relative to the base (METHOD.md 2.6,
// 2.7 sum_met.sh blocks: one row per target under each test). Costs are
// lower-is-better, so a ratio >= 1.05 is red. Shown only when measured.
func efficiencyTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options) []Table {
	if !hasEfficiency(s, keys) {
		return nil
	}
	return costTables(d, keys, s, label, opt, effMetrics, "Efficiency per operation",
		"op = statement (the QPS denominator); cpu in microseconds (client = benchlab, server = the server's "+
			"process tree); KB, reads and writes of the engine's processes (/proc/<pid>/io), dev = the data dir's block "+
			"device (/proc/diskstats, all processes); cs = context switches, server + client; steal and foreign "+
			"(other processes') cpu in % of all CPU time; median over repeats; n/a = not measured",
		"Relative efficiency: cost per operation(target) / cost per operation("+d.Experiment.Base+")")
}

// costTables builds an absolute table of per-operation costs, one row per
// target under each test, and, with more than one target, the table of
// the relative columns against the base. Costs are lower-is-better, so a
// ratio >= 1.05 is red.
func costTables(d *Data, keys []cellKey, s samples, label func(cellKey) string, opt Options, metrics []effMetric,
	title, legend, relTitle string) []Table {
	targets := d.targets()
	abs := Table{Title: title, Legend: legend}
	for _, m := range metrics {
		abs.Columns = append(abs.Columns, m.column)
	}
	for _, k := range keys {
		for _, t := range targets {
			row := Row{Group: label(k), Label: t}
			for _, m := range metrics {
				vals, c := effValues(s[t][k], m.value)
				if c != nil {
					row.Cells = append(row.Cells, *c)
					continue
				}
				row.Cells = append(row.Cells, section.NumberCell(analysis.Median(vals)))
			}
			abs.Rows = append(abs.Rows, row)
		}
	}
	if len(targets) < 2 {
		return []Table{abs}
	}
	rel := Table{Title: relTitle,
		Legend: "lower is better: - (red) >= 1.05 costs more, + (green) <= 0.95 costs less, grey between; " +
			"1 when both are 0, inf when only the base is 0"}
	for _, m := range metrics {
		if m.relative {
			rel.Columns = append(rel.Columns, m.column)
		}
	}
	for _, k := range keys {
		for _, t := range targets[1:] {
			row := Row{Group: label(k), Label: t}
			for _, m := range metrics {
				if !m.relative {
					continue
				}
				base, bc := effValues(s[targets[0]][k], m.value)
				other, oc := effValues(s[t][k], m.value)
				switch {
				case bc != nil && bc.Kind == Text:
					row.Cells = append(row.Cells, *bc)
				case oc != nil && oc.Kind == Text:
					row.Cells = append(row.Cells, *oc)
				case bc != nil || oc != nil:
					row.Cells = append(row.Cells, Cell{Missing: true})
				default:
					row.Cells = append(row.Cells, relativeCell(base, other, analysis.LowerIsBetter, opt.Verdict))
				}
			}
			rel.Rows = append(rel.Rows, row)
		}
	}
	return []Table{abs, rel}
}

// Thresholds beyond which a sampled second counts as disturbed.
const (
	// DisturbedStealPct is the steal share of one second (percent of all CPU time).
	DisturbedStealPct = 10
	// DisturbedForeignPct is the CPU share of other processes in one second.
	DisturbedForeignPct = 25
)

// efficiencyNotes explain how the efficiency figures were made and what is
// not measured, give the database size after load, and flag disturbed
// steps and seconds.
func efficiencyNotes(d *Data, keys []cellKey, s samples) []string {
	if !hasEfficiency(s, keys) && !hasDBSize(d) {
		return nil
	}
	var n []string
	if hasEfficiency(s, keys) {
		n = append(n, "efficiency: per-op = counter total over the sampled part of a step / its seconds / its QPS; "+
			"process CPU from /proc comes in 10 ms ticks, so a step with under a few hundred ms of server CPU gives a "+
			"rough server cpu us/op; client CPU comes from getrusage and includes benchlab's own sampling, less the CPU "+
			"speed probes' own CPU time (fact cpu_speed_probe_cpu_s)")
	}
	inProcess := map[string]bool{}
	devices := map[string]bool{}
	noDevice := map[string]bool{}
	for _, t := range d.targets() {
		for _, k := range keys {
			for _, r := range s[t][k] {
				if r.Eff == nil {
					continue
				}
				if r.Eff.ServerCPU == store.NotMeasured {
					inProcess[t] = true
				}
				if r.Eff.Device != "" {
					devices[r.Eff.Device] = true
				} else {
					noDevice[t] = true
				}
				steal := r.Eff.StealPct()
				bad, all := disturbedSeconds(r)
				if steal > NoisyStealPct || bad > 0 {
					n = append(n, fmt.Sprintf("noisy step: %s on %s (%d threads): %.1f%% CPU steal over the step; %d of %d measured "+
						"seconds had steal > %d%%, other processes using > %d%% of all CPU, or CPUs slower than x%.2f of the "+
						"step's median second (speed probes)", r.Test, t, r.Threads, steal,
						bad, all, DisturbedStealPct, DisturbedForeignPct, noise.SlowCPUFactor))
				}
			}
		}
	}
	if len(inProcess) > 0 {
		n = append(n, fmt.Sprintf("efficiency: %s run in-process (no server process): server cpu and RSS are n/a, "+
			"the engine's CPU is inside the client figures, and its IO (KB, reads, writes per op) is benchlab's own "+
			"/proc/self/io", strings.Join(sortedKeys(inProcess), ", ")))
	}
	if hasFact(s, keys, store.FactClientOwnPeakRSS) {
		n = append(n, "efficiency: peak client RSS MB is benchlab's whole resident set, an in-process engine's memory "+
			"included; peak client own MB is that less what in-process engines held from their own allocators at the same "+
			"moment (SQLite: sqlite3_memory_used, its page caches of cache_size per connection), so benchlab's own memory "+
			"is told from the engine's")
	}
	if len(inProcess) < len(d.targets()) && hasEfficiency(s, keys) {
		n = append(n, "efficiency: for servers, KB read/written per op are bytes the server processes caused storage to "+
			"read or write (/proc/<pid>/io read_bytes, write_bytes; cache hits are no reads); reads and writes per op are "+
			"their read and write system calls on any descriptor, sockets included")
	}
	if len(devices) > 0 {
		n = append(n, "efficiency: dev columns are the whole device ("+strings.Join(sortedKeys(devices), ", ")+
			"), so other processes' IO on it is included")
	}
	if len(noDevice) > 0 {
		n = append(n, "efficiency: dev columns not readable for "+strings.Join(sortedKeys(noDevice), ", ")+
			": the data dir's block device is not in /proc/diskstats (tmpfs or overlay)")
	}
	if sz := dbSizeLine(d); sz != "" {
		n = append(n, sz)
	}
	if ld := loadLine(d); ld != "" {
		n = append(n, ld)
	}
	return n
}

// loadLine gives, for every run, the load's rate and its cost per inserted
// row (METHOD.md 2.2, sysbench's sb.prepare.met): CPU microseconds of the
// server and of benchlab, and KB the engine read and wrote.
func loadLine(d *Data) string {
	var parts []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if !r.Action || r.Test != "prepare" || r.Rows <= 0 || r.Seconds <= 0 {
				continue
			}
			p := fmt.Sprintf("%s repeat %d: %s rows/s", run.Target, run.Repeat, FormatValue(float64(r.Rows)/r.Seconds))
			if e := r.Eff; e != nil {
				per := func(v, scale float64) string {
					switch {
					case v == store.NotMeasured:
						return "n/a"
					case v < 0:
						return "not readable"
					}
					return FormatValue(v * scale / float64(r.Rows))
				}
				p += fmt.Sprintf(", per row: cpu us server %s client %s, KB read %s, KB written %s",
					per(e.ServerCPU, 1e6), per(e.ClientCPU, 1e6),
					per(engineIO(e, e.ServerReadBytes, e.ClientReadBytes), 1.0/1024),
					per(engineIO(e, e.ServerWriteBytes, e.ClientWriteBytes), 1.0/1024))
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "load (prepare, index included): " + strings.Join(parts, "; ")
}

// disturbedSeconds counts the measured seconds of r whose steal or foreign
// CPU share passed the thresholds, or whose CPU speed fell below
// noise.SlowCPUFactor of the step's median second, and the measured
// seconds sampled.
func disturbedSeconds(r store.Result) (bad, all int) {
	var speeds []float64
	for _, iv := range r.Intervals {
		if iv.Sec >= 0 && iv.Load != nil && iv.Load.CPUSpeed > 0 {
			speeds = append(speeds, iv.Load.CPUSpeed)
		}
	}
	slow := 0.0
	if len(speeds) > 0 {
		slow = noise.SlowCPUFactor * analysis.Median(speeds)
	}
	for _, iv := range r.Intervals {
		if iv.Sec < 0 || iv.Load == nil {
			continue
		}
		all++
		if iv.Load.StealPct > DisturbedStealPct || iv.Load.ForeignPct > DisturbedForeignPct ||
			(iv.Load.CPUSpeed > 0 && iv.Load.CPUSpeed < slow) {
			bad++
		}
	}
	return bad, all
}

func hasDBSize(d *Data) bool {
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.DBBytes != 0 {
				return true
			}
		}
	}
	return false
}

// dbSizeLine lists the database size after load of every run (METHOD.md
// 1.11 dbdirGB: du of the data dir after the load step).
func dbSizeLine(d *Data) string {
	var parts []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			switch {
			case r.DBBytes > 0:
				parts = append(parts, fmt.Sprintf("%s repeat %d: %s MB", run.Target, run.Repeat, FormatValue(section.MiB(r.DBBytes))))
			case r.DBBytes == store.NotReadable:
				parts = append(parts, fmt.Sprintf("%s repeat %d: not readable", run.Target, run.Repeat))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "database size after load (du of the data dir): " + strings.Join(parts, "; ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
