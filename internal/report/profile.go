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

// costPerOp is a profiled result's self and inclusive CPU time per
// function, in microseconds per operation: samples as leaf (self) or
// anywhere on the stack (inclusive) / hz / operations of the measured part
// (statements, the QPS denominator of the other per-op tables). Nil when
// the result has no usable profile.
func costPerOp(r store.Result) (self, incl map[string]float64) {
	p := r.Profile
	if p == nil || p.Hz <= 0 || len(p.Folded) == 0 || r.Statements <= 0 {
		return nil, nil
	}
	st, err := profile.Parse(p.Folded)
	if err != nil {
		return nil, nil
	}
	scale := 1e6 / float64(p.Hz) / float64(r.Statements)
	self, incl = map[string]float64{}, map[string]float64{}
	for f, n := range st.Self() {
		self[f] = float64(n) * scale
	}
	for f, n := range st.Inclusive() {
		incl[f] = float64(n) * scale
	}
	return self, incl
}

// profileCost is a cell's per-function self and inclusive time per
// operation, the median over its profiled repeats (a function absent from
// a repeat's samples counts 0 there), the total over all functions, and
// the profile's coverage.
type profileCost struct {
	fn, incl map[string]float64
	total    float64
	repeat   int
	// coverage is the profiled CPU per operation over the CPU per
	// operation /proc counted for the same processes, in percent, the
	// median over repeats; NaN when /proc's figure is missing.
	coverage float64
}

// medianByName is, for every name of any map, the median of its values
// over the maps (0 where a map lacks it).
func medianByName(per []map[string]float64) map[string]float64 {
	names := map[string]bool{}
	for _, m := range per {
		for f := range m {
			names[f] = true
		}
	}
	out := map[string]float64{}
	vals := make([]float64, len(per))
	for f := range names {
		for i, m := range per {
			vals[i] = m[f]
		}
		out[f] = analysis.Median(vals)
	}
	return out
}

func costOf(rs []store.Result) *profileCost {
	var self, incl []map[string]float64
	var totals, covs []float64
	for _, r := range rs {
		s, in := costPerOp(r)
		if s == nil {
			continue
		}
		self, incl = append(self, s), append(incl, in)
		total := 0.0
		for _, v := range s {
			total += v
		}
		totals = append(totals, total)
		if c := coverage(r, total); !math.IsNaN(c) {
			covs = append(covs, c)
		}
	}
	if len(self) == 0 {
		return nil
	}
	c := &profileCost{fn: medianByName(self), incl: medianByName(incl), total: analysis.Median(totals),
		repeat: len(self), coverage: math.NaN()}
	if len(covs) > 0 {
		c.coverage = analysis.Median(covs)
	}
	return c
}

// coverage is a result's profiled CPU per operation (profiled, us/op) over
// the CPU per operation /proc counted for the processes profiled: the
// server's, or benchlab's own for an in-process engine; NaN when /proc's
// figure is missing.
func coverage(r store.Result, profiled float64) float64 {
	if r.Eff == nil {
		return math.NaN()
	}
	cpu := r.Eff.ServerCPU
	if cpu == store.NotMeasured {
		cpu = r.Eff.ClientCPU
	}
	proc := perOp(r, cpu, 1e6)
	if math.IsNaN(proc) || proc <= 0 {
		return math.NaN()
	}
	return 100 * profiled / proc
}

// CoverageWarnPct is the coverage under which a profile is flagged: it
// saw too little of the CPU time /proc counted to say where it went.
const CoverageWarnPct = 80

// coverageText is " (coverage N%)" for a title, "" when unknown.
func coverageText(c *profileCost) string {
	if math.IsNaN(c.coverage) {
		return ""
	}
	return fmt.Sprintf(" (coverage %.0f%%)", c.coverage)
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
	legend := "self CPU time of each function (the leaf frame of the sampled stacks) and inclusive time (anywhere on " +
		"the stack) in microseconds per operation: samples / Hz / statements of the measured part, median over the " +
		"profiled repeats; the server's processes, or benchlab's for an in-process engine; coverage = profiled CPU " +
		"per op / CPU per op counted in /proc for the same processes"
	for _, k := range keys {
		bc := costOf(s[base][k])
		if len(targets) == 1 {
			if bc == nil {
				continue
			}
			t := Table{Title: "CPU profile: " + label(k) + " (" + base + ")" + coverageText(bc), Legend: legend,
				Columns: []string{"us/op", "share %", "incl us/op", "incl %"}}
			row := func(name string, self, incl float64) Row {
				return Row{Label: name, Cells: []Cell{section.NumberCell(self), section.NumberCell(share(self, bc.total)),
					section.NumberCell(incl), section.NumberCell(share(incl, bc.total))}}
			}
			t.Rows = append(t.Rows, row("all functions", bc.total, bc.total))
			for _, f := range topBy(bc.fn, nil, func(a, _ float64) float64 { return a }) {
				t.Rows = append(t.Rows, row(f, bc.fn[f], bc.incl[f]))
			}
			out = append(out, t)
			continue
		}
		for _, tg := range targets[1:] {
			tc := costOf(s[tg][k])
			if bc == nil || tc == nil {
				continue
			}
			t := Table{Title: "CPU profile: " + label(k) + ", " + tg + coverageText(tc) + " vs " + base + coverageText(bc),
				Legend:  legend + "; diff = target - base (+ costs more)",
				Columns: []string{base + " us/op", tg + " us/op", "diff us/op", "diff %", "incl diff us/op"}}
			row := func(name string, b, x, inclDiff float64) Row {
				return Row{Label: name, Cells: []Cell{section.NumberCell(b), section.NumberCell(x), section.NumberCell(x - b),
					section.NumberCell(pctDiff(b, x)), section.NumberCell(inclDiff)}}
			}
			t.Rows = append(t.Rows, row("all functions", bc.total, tc.total, tc.total-bc.total))
			for _, f := range topBy(bc.fn, tc.fn, func(b, x float64) float64 { return x - b }) {
				t.Rows = append(t.Rows, row(f, bc.fn[f], tc.fn[f], tc.incl[f]-bc.incl[f]))
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
	out := coverageNotes(d, keys, s)
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

// coverageNotes warn of profiles that saw under CoverageWarnPct of the CPU
// time /proc counted for the processes profiled.
func coverageNotes(d *Data, keys []cellKey, s samples) []string {
	var out []string
	for _, t := range d.targets() {
		for _, k := range keys {
			c := costOf(s[t][k])
			if c == nil || math.IsNaN(c.coverage) || c.coverage >= CoverageWarnPct {
				continue
			}
			out = append(out, fmt.Sprintf("CPU profile: %s on %s covers %.0f%% of the CPU time /proc counted "+
				"(profiled %s us/op of %s): under %d%%, it misses where much of the time went (processes the profile "+
				"did not follow, such as ones forked during the step when perf cannot filter by cgroup)", k.test, t,
				c.coverage, FormatValue(c.total), FormatValue(100*c.total/c.coverage), CoverageWarnPct))
		}
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
