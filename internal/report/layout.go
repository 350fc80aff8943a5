package report

import (
	"fmt"

	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// Build makes the report of an experiment: what ran, relative and absolute
// throughput, latency, and the notes a reader must see.
func Build(d *Data) *Report { return BuildWith(d, Options{}) }

// BuildWith is Build with explicit options. The report is a list of
// section builders over one view of the experiment: each adds tables,
// notes or both. A suite's sections (package section) add its tables and
// notes; when they replace the generic result tables, every note kind
// still comes, so the two layouts differ only in their tables.
func BuildWith(d *Data, opt Options) *Report {
	v := newView(d, opt)
	r := &Report{Title: fmt.Sprintf("benchlab experiment %d: %s", d.Experiment.ID, d.Experiment.Name),
		Header: header(d)}
	tables := genericTables
	if v.sec.Replace {
		tables = replacedTables
	}
	for _, b := range tables {
		r.Tables = append(r.Tables, b(v)...)
	}
	for _, b := range noteBuilders {
		r.Notes = append(r.Notes, b(v)...)
	}
	// The verdicts are corrected for multiple comparisons over each table
	// once every table is in, and the evidence notes read the outcome.
	correctTables(r, opt.Verdict)
	for _, b := range afterCorrection {
		r.Notes = append(r.Notes, b(v)...)
	}
	r.Summary = summary(v, r)
	return r
}

// view is what every section builder reads: the experiment, the options,
// its measured results grouped by target and row, and the suite's
// sections.
type view struct {
	d       *Data
	opt     Options
	s       samples
	keys    []cellKey
	groups  map[cellKey]string
	targets []string
	label   func(cellKey) string
	sec     section.Sections
	// comparisons are Compare's verdicts, made once for the evidence
	// notes and the summary (compared is whether they were).
	comparisons []Comparison
	compared    bool
}

// compare is Compare(v.d) made once.
func (v *view) compare() []Comparison {
	if !v.compared {
		v.comparisons, v.compared = Compare(v.d, v.opt.Verdict), true
	}
	return v.comparisons
}

func newView(d *Data, opt Options) *view {
	s, keys, groups := d.samples()
	label, _ := labeler(keys)
	return &view{d: d, opt: opt, s: s, keys: keys, groups: groups, targets: d.targets(), label: label,
		sec: sectionsOf(d, opt)}
}

// tableBuilder adds tables to the report.
type tableBuilder func(v *view) []Table

// noteBuilder adds notes to the report.
type noteBuilder func(v *view) []string

// genericTables are the tables of a suite without a layout of its own, in
// the order they are shown.
var genericTables = []tableBuilder{
	relativeTables,
	func(v *view) []Table { return sweepTables(v.d, v.keys, v.s, v.label, v.groups, v.opt.Verdict) },
	absoluteTables,
	func(v *view) []Table { return ptrTable(spreadTable(v.keys, v.s, v.targets, v.groups, v.label)) },
	latencyTables,
	func(v *view) []Table { return ptrTable(kindTable(v.keys, v.s, v.targets, v.groups, v.label)) },
	func(v *view) []Table { return efficiencyTables(v.d, v.keys, v.s, v.label, v.opt) },
	func(v *view) []Table { return memoryLimitTables(v.d, v.keys, v.s, v.label) },
	func(v *view) []Table { return counterTables(v.d, v.keys, v.s, v.label, v.opt) },
	func(v *view) []Table { return engineStatTables(v.d, v.keys, v.s, v.label, v.opt) },
	func(v *view) []Table { return lsmTables(v.d, v.keys, v.s, v.label, v.opt) },
	func(v *view) []Table { return profileTables(v.d, v.keys, v.s, v.label) },
	func(v *view) []Table { return offCPUTables(v.d, v.keys, v.s, v.label) },
	suiteTables,
}

// replacedTables are the tables of a suite whose sections replace the
// generic result tables (the Insert Benchmark): its own, then the sweeps,
// then the engine's own counters, which no suite's tables show.
var replacedTables = []tableBuilder{
	suiteTables,
	func(v *view) []Table { return sweepTables(v.d, v.keys, v.s, v.label, v.groups, v.opt.Verdict) },
	func(v *view) []Table { return engineStatTables(v.d, v.keys, v.s, v.label, v.opt) },
	func(v *view) []Table { return lsmTables(v.d, v.keys, v.s, v.label, v.opt) },
}

// noteBuilders are the notes of every layout, in the order they are shown.
var noteBuilders = []noteBuilder{
	func(v *view) []string { return notes(v.d, v.sec.Planned) },
	func(v *view) []string { return v.sec.Notes },
	func(v *view) []string { return efficiencyNotes(v.d, v.keys, v.s) },
	func(v *view) []string { return counterNotes(v.keys, v.s) },
	func(v *view) []string { return engineStatNotes(v.d, v.keys, v.s) },
	func(v *view) []string { return sweepNotes(v.d) },
	func(v *view) []string { return profileNotes(v.d, v.keys, v.s) },
	func(v *view) []string {
		lo, hi := repeatRange(v.s, v.keys)
		return verdictNotes(lo, hi, v.opt.Verdict)
	},
}

// afterCorrection are the notes that read the corrected verdicts, and the
// machine's notes after them.
var afterCorrection = []noteBuilder{
	func(v *view) []string {
		if len(v.targets) < 2 {
			return nil
		}
		return evidenceNotes(v.compare(), v.d.Noise)
	},
	internalsNotes,
	func(v *view) []string { return canaryNotes(v.d) },
	func(v *view) []string { return disturbedNotes(v.d) },
	func(v *view) []string { return StallNotes(v.d) },
	func(v *view) []string { return stabilityNotes(v.d, v.sec.Planned) },
	func(v *view) []string {
		if n := spreadNote(v.keys, v.s, v.targets, v.label); n != "" {
			return []string{n}
		}
		return nil
	},
}

// suiteTables are the tables of the experiment's suite.
func suiteTables(v *view) []Table { return v.sec.Tables }

// ptrTable is t as a list: empty when t is nil.
func ptrTable(t *Table) []Table {
	if t == nil {
		return nil
	}
	return []Table{*t}
}

// relativeTables are the table of headline ratios to the base, with
// verdicts, and the sequence's change points when the targets are a
// release sequence; none with a single target.
func relativeTables(v *view) []Table {
	if len(v.targets) < 2 {
		return nil
	}
	s, keys, targets := v.s, v.keys, v.targets
	rel := Table{
		Title:    relativeTitle(s, keys, v.d.Experiment.Base),
		Legend:   "2 decimals; " + relativeMarks(s, keys) + compareLegend(s, keys),
		Columns:  targets[1:],
		Relative: true,
	}
	verdicts := false
	for _, k := range keys {
		row := Row{Group: v.groups[k], Label: v.label(k)}
		for _, t := range targets[1:] {
			c := v.d.throughputCell(s[targets[0]][k], s[t][k], targets[0], t, k, v.opt.Verdict)
			verdicts = verdicts || c.Verdict != ""
			row.Cells = append(row.Cells, c)
		}
		rel.Rows = append(rel.Rows, row)
	}
	if _, hi := repeatRange(s, keys); hi >= 2 || verdicts {
		rel.Legend = "ratio over the repeats, 2 decimals; " + verdictLegend(s, keys) +
			"; = same, ? unknown (grey); the notes say which evidence each rests on" + compareLegend(s, keys)
	}
	if stalls := NotJudged(v.d); len(stalls) > 0 {
		rel.Legend += "; " + StalledMark + ": every run of a side completed no operation, not judged (see the notes)"
	}
	out := []Table{rel}
	if seq := sequenceTable(v.d, keys, s, v.label, v.groups, v.opt); seq != nil {
		out = append(out, *seq)
	}
	return out
}

// absoluteTables is the table of headline values per target.
func absoluteTables(v *view) []Table {
	tput := func(x store.Result) float64 { return x.Throughput() }
	abs := Table{Title: absoluteTitle(v.s, v.keys), Legend: absoluteLegend(v.s, v.keys), Columns: v.targets}
	for _, k := range v.keys {
		row := Row{Group: v.groups[k], Label: v.label(k)}
		for _, t := range v.targets {
			row.Cells = append(row.Cells, section.NumberCell(section.Median(v.s[t][k], tput)))
		}
		abs.Rows = append(abs.Rows, row)
	}
	return []Table{abs}
}
