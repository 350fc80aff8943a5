package calibrate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"benchlab/internal/analysis"
	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/store"
)

// tally counts cells and hits.
type tally struct{ cells, hits int }

func (t *tally) add(hit bool) {
	t.cells++
	if hit {
		t.hits++
	}
}

func (t tally) String() string {
	if t.cells == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", t.hits, t.cells, 100*float64(t.hits)/float64(t.cells))
}

// subset is d restricted to some targets (the first is the base) and to
// the repeats lo to hi; without history (withNoise false) the verdicts rest
// on the repeats alone.
func subset(d *report.Data, targets []string, lo, hi int, withNoise bool) *report.Data {
	out := *d
	out.Experiment.Base = targets[0]
	out.Experiment.Targets = targets
	out.Runs = nil
	for _, r := range d.Runs {
		if r.Repeat >= lo && r.Repeat <= hi && slices.Contains(targets, r.Target) {
			out.Runs = append(out.Runs, r)
		}
	}
	if !withNoise {
		out.Noise = nil
	}
	return &out
}

// pairs lists every pair of the identical targets, each an A/A comparison
// as a user makes one: the first of the pair is its base, and its tests
// are the family the correction runs over.
func pairs(copies []string) [][]string {
	var out [][]string
	for i := range copies {
		for j := i + 1; j < len(copies); j++ {
			out = append(out, []string{copies[i], copies[j]})
		}
	}
	return out
}

// windows are the disjoint groups of n consecutive repeats of an
// experiment of c.Repeats: each is one comparison at n repeats, so an
// experiment of 3 repeats gives three single-run comparisons (repeat 1, 2
// and 3 on their own) and one of 3 repeats.
func (c Size) windows(n int) [][2]int {
	var out [][2]int
	for lo := 1; lo+n-1 <= c.Repeats; lo += n {
		out = append(out, [2]int{lo, lo + n - 1})
	}
	return out
}

// repeatCounts are the repeat counts verdicts are measured at.
func (c Size) repeatCounts() []int {
	var out []int
	for _, n := range []int{1, 3, 5} {
		if n <= c.Repeats {
			out = append(out, n)
		}
	}
	if !slices.Contains(out, c.Repeats) {
		out = append(out, c.Repeats)
	}
	return out
}

// gateFires reports whether the default gate (Holm at alpha) fails cmps on
// a slowdown of at least threshold.
func gateFires(cmps []report.Comparison, alpha, threshold float64) bool {
	return len(analysis.Gate(report.Verdicts(cmps), analysis.GateOptions{Alpha: alpha, Threshold: threshold}).Failed) > 0
}

// mode is the evidence a row's verdicts had: the repeats alone (a fresh
// store) or with the host's history.
type mode struct {
	name      string
	withNoise bool
}

var modes = []mode{{"no history", false}, {"noise prior", true}}

// rowKey is a row of the false-alarm and detection tables.
type rowKey struct {
	mode    string
	repeats int
}

// judged is what the planted experiments' verdicts came to.
type judged struct {
	c      Size
	copies []string // the base and its identical targets
	aa     map[rowKey]*tally
	basis  map[rowKey]map[string]int
	detect map[rowKey]map[float64]*tally
	ratios map[float64][]float64
	gateAA map[int]*tally
	// slowCanaries, runs and slowHost count the runs, those with a slow
	// canary and those on a slow host.
	slowCanaries, runs, slowHost int
	disturbed                    report.Disturbance // loop and A/A results on a busy machine or slow CPUs
	memWalks                     [2][]float64       // 32 MiB walks before and after the runs
}

func newJudged(c Size) *judged {
	j := &judged{c: c, copies: []string{"base"}, aa: map[rowKey]*tally{}, basis: map[rowKey]map[string]int{},
		detect: map[rowKey]map[float64]*tally{}, ratios: map[float64][]float64{}, gateAA: map[int]*tally{}}
	for i := 2; i <= c.Copies; i++ {
		j.copies = append(j.copies, copyTarget(i))
	}
	return j
}

// Evaluate judges the stored experiments and prints the tables.
func (c Size) Evaluate(w io.Writer, planted, syncs []int64) error {
	ctx := context.Background()
	st, err := store.Open(c.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	j := newJudged(c)
	for _, id := range planted {
		d, err := report.Load(ctx, st, id, true)
		if err != nil {
			return err
		}
		j.add(d)
	}
	j.printFalseAlarms(w)
	j.printDetection(w)
	if err := j.printGate(ctx, w, st, syncs); err != nil {
		return err
	}
	j.printNotes(w)
	return nil
}

// add judges one planted experiment.
func (j *judged) add(d *report.Data) {
	c := j.c
	vopt := report.VerdictOptions{Alpha: c.Alpha}
	j.addConditions(d)
	for _, m := range modes {
		for _, n := range c.repeatCounts() {
			k := rowKey{m.name, n}
			if j.aa[k] == nil {
				j.aa[k], j.basis[k], j.detect[k] = &tally{}, map[string]int{}, map[float64]*tally{}
			}
			for _, w := range c.windows(n) {
				for _, pair := range pairs(j.copies) {
					for _, cmp := range report.Compare(subset(d, pair, w[0], w[1], m.withNoise), vopt) {
						o := cmp.Verdict.Outcome
						j.aa[k].add(o == analysis.Slower || o == analysis.Faster)
						j.basis[k][cmp.Noise.Short()]++
					}
				}
				for _, e := range c.Effects {
					if j.detect[k][e] == nil {
						j.detect[k][e] = &tally{}
					}
					for _, cmp := range report.Compare(subset(d, []string{"base", effectTarget(e)}, w[0], w[1], m.withNoise), vopt) {
						if !slices.Contains(plantedTests, cmp.Test) {
							continue
						}
						j.detect[k][e].add(cmp.Verdict.Outcome == analysis.Slower)
						if m.withNoise && n == c.Repeats {
							j.ratios[e] = append(j.ratios[e], cmp.Verdict.Ratio)
						}
					}
				}
			}
		}
	}
	if c.Repeats >= 5 {
		for _, cp := range j.copies[1:] {
			for _, m := range modes {
				if j.gateAA[boolIndex(m.withNoise)] == nil {
					j.gateAA[boolIndex(m.withNoise)] = &tally{}
				}
				fires := gateFires(report.Compare(subset(d, []string{"base", cp}, 1, 5, m.withNoise), vopt), c.Alpha, c.Threshold)
				j.gateAA[boolIndex(m.withNoise)].add(!fires)
			}
		}
	}
}

// addConditions counts the experiment's runs that ran disturbed, with a
// slow canary or on a slow host, and keeps their memory canaries.
func (j *judged) addConditions(d *report.Data) {
	ds := report.Disturbances(d)
	j.disturbed.Results += ds.Results
	j.disturbed.Busy += ds.Busy
	j.disturbed.SlowCPU += ds.SlowCPU
	for _, r := range d.Runs {
		j.runs++
		if _, slow := d.Noise.Canaries.Check(r); slow {
			j.slowCanaries++
		}
		if d.Noise.HostSlow(r) != "" {
			j.slowHost++
		}
		m := store.ParseManifest(r.Manifest)
		for i, c := range []*store.Canary{m.Canary, m.CanaryAfter} {
			if c != nil && c.MemLoadsPerSec > 0 {
				j.memWalks[i] = append(j.memWalks[i], c.MemLoadsPerSec)
			}
		}
	}
}

func (j *judged) printFalseAlarms(w io.Writer) {
	c := j.c
	fmt.Fprintf(w, "A/A false alarms: cells where one of two identical targets was called slower or faster than the other "+
		"(every pair, alpha %g, minimum effect %g%%)\n", c.Alpha, analysis.DefaultMinEffect*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "evidence\trepeats\tfalse alarms\tverdicts rest on\t")
	for _, m := range modes {
		for _, n := range c.repeatCounts() {
			k := rowKey{m.name, n}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", m.name, n, j.aa[k], basisText(j.basis[k]))
		}
	}
	tw.Flush()
}

func (j *judged) printDetection(w io.Writer) {
	c := j.c
	fmt.Fprintf(w, "\nPlanted regressions: cells of the %d loop tests called slower (detection rate)\n", len(plantedTests))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "evidence\trepeats\t")
	for _, e := range c.Effects {
		fmt.Fprintf(tw, "%g%% (measured x%.3f %s)\t", e*100, analysis.Median(j.ratios[e]), spread(j.ratios[e]))
	}
	fmt.Fprintln(tw)
	for _, m := range modes {
		for _, n := range c.repeatCounts() {
			fmt.Fprintf(tw, "%s\t%d\t", m.name, n)
			for _, e := range c.Effects {
				fmt.Fprintf(tw, "%s\t", j.detect[rowKey{m.name, n}][e])
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

// printGate judges the gate trials syncs and prints the gate's table with
// the planted experiments' A/A gate.
func (j *judged) printGate(ctx context.Context, w io.Writer, st *store.Store, syncs []int64) error {
	c := j.c
	vopt := report.VerdictOptions{Alpha: c.Alpha}
	fmt.Fprintf(w, "\nGate (compare --fail-on-regression: Holm over the cells at alpha %g, slowdown >= %g%%)\n", c.Alpha, c.Threshold*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "experiment\tevidence\texit as expected\t")
	for _, m := range modes {
		fires, quiet := &tally{}, &tally{}
		for _, id := range syncs {
			d, err := report.Load(ctx, st, id, true)
			if err != nil {
				return err
			}
			fires.add(gateFires(report.Compare(subset(d, []string{"off", "full"}, 1, 5, m.withNoise), vopt), c.Alpha, c.Threshold))
			quiet.add(!gateFires(report.Compare(subset(d, []string{"off", "off2"}, 1, 5, m.withNoise), vopt), c.Alpha, c.Threshold))
		}
		fmt.Fprintf(tw, "synchronous off vs full, 5 repeats (exit 3)\t%s\t%s\t\n", m.name, fires)
		fmt.Fprintf(tw, "A/A off vs off, 5 repeats (exit 0)\t%s\t%s\t\n", m.name, quiet)
		if g := j.gateAA[boolIndex(m.withNoise)]; g != nil {
			fmt.Fprintf(tw, "A/A planted experiments, 5 repeats (exit 0)\t%s\t%s\t\n", m.name, g)
		}
	}
	tw.Flush()
	return nil
}

func (j *judged) printNotes(w io.Writer) {
	c := j.c
	history := "the store's other experiments (" + c.Store + ")"
	if c.Temp {
		history = "this invocation's other experiments (a temporary store)"
	}
	fmt.Fprintf(w, "\nnotes: 'no history' judges each experiment on its own repeats (what a fresh store gives); "+
		"'noise prior' adds the host's history from %s. At 1 repeat each repeat of an experiment is a comparison of its own. "+
		"A/A pairs of one experiment share their targets' runs, so their false alarms are not independent. "+
		"%d of %d runs had a canary slower than the host's median by the flag thresholds.\n",
		history, j.slowCanaries, j.runs)
	if mw := j.memWalks; len(mw[0]) > 0 {
		fmt.Fprintf(w, "notes: memory canary (32 MiB walk, Mloads/s): before the runs median %.2f %s, after %.2f %s; "+
			"%d of %d runs ran on a slow host by their memory canaries (set aside when slower than their side's others; "+
			"a side with one and fewer than 3 runs left is not called the worse).\n",
			analysis.Median(mw[0])/1e6, spreadMillions(mw[0]), analysis.Median(mw[1])/1e6, spreadMillions(mw[1]), j.slowHost, j.runs)
	}
	if ds := j.disturbed; ds.Results > 0 {
		fmt.Fprintf(w, "notes: measured during the runs: %d of %d test results ran on a busy machine (other processes used "+
			"more than %d%% of all CPU and the step's threads waited for a CPU at least %.0f%% of their running time), %d on "+
			"slow CPUs (speed probes below x%.2f of the cell's median); verdicts set these aside when they came out worse "+
			"than their side's undisturbed runs (with 1 repeat per target a cell has too few runs for a speed median).\n",
			ds.Busy, ds.Results, noise.BusyForeignPct, 100*noise.BusyWaitShare, ds.SlowCPU, noise.SlowCPUFactor)
	}
	if total := j.aa[rowKey{"noise prior", c.Repeats}]; total != nil && total.cells < 200 {
		fmt.Fprintf(w, "notes: %d A/A cells per row, fewer than 200: use more --rounds or --copies for a rate to rely on\n", total.cells)
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func basisText(m map[string]int) string {
	var parts []string
	for _, k := range []string{"prior", "prior-1", "prior,1run", "rep+within", "rep-t", "rep-welch", "repeats"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// spreadMillions is the range of canary rates in millions, "[lo-hi]".
func spreadMillions(xs []float64) string {
	if len(xs) == 0 {
		return "[-]"
	}
	return fmt.Sprintf("[%.2f-%.2f]", slices.Min(xs)/1e6, slices.Max(xs)/1e6)
}

// spread is the range of the cells' measured ratios, "[lo-hi]".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "[-]"
	}
	return fmt.Sprintf("[%.3f-%.3f]", slices.Min(xs), slices.Max(xs))
}
