package report

import (
	"benchlab/internal/report/section"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/profile"
	"benchlab/internal/store"
)

// ProfileTop is how many functions a profile table lists.
const ProfileTop = 10

// selfPerOp is a profiled result's self CPU time per function, in
// microseconds per operation: samples as leaf / hz / operations of the
// measured part (statements, the QPS denominator of the other per-op
// tables). Nil when the result has no usable profile.
func selfPerOp(r store.Result) map[string]float64 {
	p := r.Profile
	if p == nil || p.Hz <= 0 || len(p.Folded) == 0 || r.Statements <= 0 {
		return nil
	}
	st, err := profile.Parse(p.Folded)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for f, n := range st.Self() {
		out[f] = float64(n) / float64(p.Hz) * 1e6 / float64(r.Statements)
	}
	return out
}

// profileCost is a cell's per-function self time per operation, the
// median over its profiled repeats (a function absent from a repeat's
// samples counts 0 there), and the total over all functions.
type profileCost struct {
	fn     map[string]float64
	total  float64
	repeat int
}

func costOf(rs []store.Result) *profileCost {
	var per []map[string]float64
	for _, r := range rs {
		if m := selfPerOp(r); m != nil {
			per = append(per, m)
		}
	}
	if len(per) == 0 {
		return nil
	}
	names := map[string]bool{}
	totals := make([]float64, len(per))
	for i, m := range per {
		for f, v := range m {
			names[f] = true
			totals[i] += v
		}
	}
	c := &profileCost{fn: map[string]float64{}, total: analysis.Median(totals), repeat: len(per)}
	vals := make([]float64, len(per))
	for f := range names {
		for i, m := range per {
			vals[i] = m[f]
		}
		c.fn[f] = analysis.Median(vals)
	}
	return c
}

// profileTables are, for each test and each target other than the base
// where both have profiles, the ProfileTop functions whose self CPU time
// per operation changed most, base against target, sorted by the change
// (most added time first) under a row for all functions; with one target,
// its ProfileTop most expensive functions.
func profileTables(d *Data, keys []cellKey, s samples, label func(cellKey) string) []Table {
	targets := d.targets()
	base := targets[0]
	var out []Table
	legend := "self CPU time of each function (the leaf frame of the sampled stacks) in microseconds per operation: " +
		"samples / Hz / statements of the measured part, median over the profiled repeats; the server's process tree, " +
		"or benchlab's for an in-process engine"
	for _, k := range keys {
		bc := costOf(s[base][k])
		if len(targets) == 1 {
			if bc == nil {
				continue
			}
			t := Table{Title: "CPU profile: " + label(k) + " (" + base + ")", Legend: legend,
				Columns: []string{"us/op", "share %"}}
			t.Rows = append(t.Rows, Row{Label: "all functions", Cells: []Cell{section.NumberCell(bc.total), section.NumberCell(100)}})
			for _, f := range topBy(bc.fn, nil, func(a, _ float64) float64 { return a }) {
				t.Rows = append(t.Rows, Row{Label: f, Cells: []Cell{section.NumberCell(bc.fn[f]), section.NumberCell(share(bc.fn[f], bc.total))}})
			}
			out = append(out, t)
			continue
		}
		for _, tg := range targets[1:] {
			tc := costOf(s[tg][k])
			if bc == nil || tc == nil {
				continue
			}
			t := Table{Title: "CPU profile: " + label(k) + ", " + tg + " vs " + base,
				Legend:  legend + "; diff = target - base (+ costs more)",
				Columns: []string{base + " us/op", tg + " us/op", "diff us/op", "diff %"}}
			row := func(name string, b, x float64) Row {
				return Row{Label: name, Cells: []Cell{section.NumberCell(b), section.NumberCell(x), section.NumberCell(x - b), section.NumberCell(pctDiff(b, x))}}
			}
			t.Rows = append(t.Rows, row("all functions", bc.total, tc.total))
			for _, f := range topBy(bc.fn, tc.fn, func(b, x float64) float64 { return x - b }) {
				t.Rows = append(t.Rows, row(f, bc.fn[f], tc.fn[f]))
			}
			out = append(out, t)
		}
	}
	return out
}

// topBy picks the ProfileTop functions of a and b with the largest
// |key(a, b)| and returns them sorted by key, largest first (name breaks
// ties).
func topBy(a, b map[string]float64, key func(a, b float64) float64) []string {
	names := map[string]bool{}
	for f := range a {
		names[f] = true
	}
	for f := range b {
		names[f] = true
	}
	all := make([]string, 0, len(names))
	for f := range names {
		all = append(all, f)
	}
	kv := func(f string) float64 { return key(a[f], b[f]) }
	slices.SortFunc(all, func(x, y string) int {
		return cmp.Or(cmp.Compare(math.Abs(kv(y)), math.Abs(kv(x))), strings.Compare(x, y))
	})
	all = all[:min(len(all), ProfileTop)]
	slices.SortFunc(all, func(x, y string) int { return cmp.Or(cmp.Compare(kv(y), kv(x)), strings.Compare(x, y)) })
	return all
}

func share(v, total float64) float64 {
	if total <= 0 {
		return math.NaN()
	}
	return 100 * v / total
}

// pctDiff is the change from b to x in percent of b; NaN when b is 0.
func pctDiff(b, x float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * (x - b) / b
}

// profileNotes say which steps were profiled without a profile, and why
// (perf missing or refused, no samples), once per distinct reason.
func profileNotes(d *Data, keys []cellKey, s samples) []string {
	why := map[string][]string{}
	var order []string
	for _, t := range d.targets() {
		for _, k := range keys {
			for _, r := range s[t][k] {
				if r.Profile == nil || r.Profile.Note == "" {
					continue
				}
				n := r.Profile.Note
				if _, ok := why[n]; !ok {
					order = append(order, n)
				}
				w := fmt.Sprintf("%s on %s", r.Test, t)
				if !slices.Contains(why[n], w) {
					why[n] = append(why[n], w)
				}
			}
		}
	}
	var out []string
	for _, n := range order {
		steps := why[n]
		more := ""
		if len(steps) > 5 {
			more = fmt.Sprintf(" and %d more", len(steps)-5)
			steps = steps[:5]
		}
		out = append(out, fmt.Sprintf("CPU profile: none for %s%s: %s", strings.Join(steps, ", "), more, n))
	}
	return out
}

// Folded returns the folded stacks of one test of a target (the base when
// target is empty), summed over its profiled repeats, with the number of
// repeats summed. threads 0 takes the test's only thread count; with
// several, the error lists them.
func Folded(d *Data, test, target string, threads int) ([]byte, int, error) {
	if target == "" {
		target = d.Experiment.Base
	}
	if !slices.Contains(d.targets(), target) {
		return nil, 0, fmt.Errorf("no target %q in experiment %d; its targets are %s", target, d.Experiment.ID,
			strings.Join(d.targets(), ", "))
	}
	s, keys, _ := d.samples()
	var counts []int
	var tests []string
	for _, k := range keys {
		if !slices.Contains(tests, k.test) {
			tests = append(tests, k.test)
		}
		if k.test == test && (threads == 0 || k.threads == threads) {
			counts = append(counts, k.threads)
		}
	}
	switch {
	case len(counts) == 0 && threads == 0:
		return nil, 0, fmt.Errorf("no test %q in experiment %d; its tests are %s", test, d.Experiment.ID, strings.Join(tests, ", "))
	case len(counts) == 0:
		return nil, 0, fmt.Errorf("test %q did not run with %d threads in experiment %d", test, threads, d.Experiment.ID)
	case len(counts) > 1:
		return nil, 0, fmt.Errorf("test %q ran with %v threads; choose one with --threads", test, counts)
	}
	sum := profile.Stacks{}
	n := 0
	for _, r := range s[target][cellKey{test, counts[0]}] {
		if r.Profile == nil || len(r.Profile.Folded) == 0 {
			continue
		}
		st, err := profile.Parse(r.Profile.Folded)
		if err != nil {
			return nil, 0, fmt.Errorf("stored profile of %s: %w", test, err)
		}
		for k, v := range st {
			sum[k] += v
		}
		n++
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("test %q on %s has no CPU profile (run with --profile)", test, target)
	}
	return sum.Text(), n, nil
}
