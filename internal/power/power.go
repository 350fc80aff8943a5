// Package power says, from a spec alone and before anything runs, how many
// cells an experiment compares and whether its repeats can reach a
// significant verdict at all (power before the run, so that hours are not
// spent on repeats that cannot decide anything). With n
// repeats per side the exact Mann-Whitney p-value cannot go below
// 2/C(2n, n), and a correction over many cells lowers the p a cell needs;
// a plan states both so that nobody runs hours of repeats for a gate that
// cannot fire.
package power

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/spec"
	"benchlab/internal/workload"
)

// Plan is the power of an experiment's comparisons.
type Plan struct {
	// Name and Base are the spec's.
	Name, Base string
	// Targets counts the targets, the base included.
	Targets int
	// Tests counts the measured steps × their thread counts of one target
	// (warm-ups and load or cleanup actions are not compared).
	Tests int
	// Cells is Tests × (Targets − 1): the cells compared with the base.
	Cells int
	// Repeats is the spec's repeats per target.
	Repeats int
	// Marks is the power of the report's verdict marks (Benjamini-Hochberg
	// at analysis.DefaultAlpha over all cells).
	Marks analysis.Power
	// GateOn says the spec asks for the gate ([gate] fail_on_regression).
	GateOn bool
	// Gate holds the gate's settings and Power its power under them.
	Gate      analysis.GateOptions
	GatePower analysis.Power
	// ShortestStep is the shortest measured part of a time-bound step (0
	// when every step ends by count).
	ShortestStep time.Duration
	// WithinRun says every verdict can use within-run variation
	// (analysis.CompareNoise's t-test over batch means), which has no
	// Mann-Whitney floor: at least 2 repeats and time-bound steps of at least
	// analysis.MinBatches seconds. Batch means may still fail on a series
	// too autocorrelated, so this is an expectation, not a promise.
	WithinRun bool
	// Paired says the targets take turns (spec workload.interleave) and
	// each has 3 repeats or more: verdicts are paired t-tests over the
	// repeats' ratios, which have no Mann-Whitney floor.
	Paired bool
	// Interleaved says the targets take turns, whatever the repeats.
	Interleaved bool
	// Welch says the targets run one after the other with 3 repeats or
	// more: verdicts without history are Welch's t-test on log throughput
	// over the repeats, which has no Mann-Whitney floor (a cell falls back
	// to the ranks only when an outlier decides the t-test's call).
	Welch bool
	// Compared lists one target's measured tests at their thread counts,
	// in plan order: the rows every other target is compared on.
	Compared []TestCell
	// History is what the host's noise history in the store lets each
	// compared row call, set by AddHistory (nil when no store was read).
	History []TestHistory
	// HistoryFrom names where History was read ("" when none was).
	HistoryFrom string
	// Schedule says how the targets of each repeat run and why (set by
	// the command that resolved workload.interleave; "" when it did not).
	Schedule string
}

// TestCell is one measured test at one thread count.
type TestCell struct {
	Test    string
	Threads int
}

// TestHistory is the power a noise history gives one compared row: for the
// report's verdict marks and for the gate, the weakest over the targets
// compared with the base.
type TestHistory struct {
	TestCell
	Marks, Gate analysis.PriorPower
}

// PriorSource returns the host's noise history of a test at a thread count
// for the comparison of the base with target (an index into the spec's
// targets, the base excluded).
type PriorSource func(target int, test string, threads int) (analysis.NoisePrior, error)

// AddHistory reads, for every compared row and target, the noise history
// prior gives and keeps per row the weakest power (the largest callable
// slowdown over the targets) for the verdict marks and the gate; from
// names the store for the plan's text.
func (p *Plan) AddHistory(from string, prior PriorSource) error {
	p.History = nil
	p.HistoryFrom = from
	if p.Targets < 2 {
		return nil
	}
	for _, c := range p.Compared {
		h := TestHistory{TestCell: c}
		for t := 0; t < p.Targets-1; t++ {
			pr, err := prior(t, c.Test, c.Threads)
			if err != nil {
				return err
			}
			marks := analysis.PriorPowerOf(pr, p.Repeats, p.Cells, analysis.DefaultAlpha, analysis.BH, 0, 0)
			gate := analysis.PriorPowerOf(pr, p.Repeats, p.Cells, p.Gate.Alpha, p.Gate.Correction, 0, p.Gate.MinEffect)
			if t == 0 || weaker(marks, h.Marks) {
				h.Marks = marks
			}
			if t == 0 || weaker(gate, h.Gate) {
				h.Gate = gate
			}
		}
		p.History = append(p.History, h)
	}
	return nil
}

// weaker says a calls less than b: no usable history, or a larger
// smallest callable slowdown.
func weaker(a, b analysis.PriorPower) bool {
	if a.Usable != b.Usable {
		return !a.Usable
	}
	return a.Callable > b.Callable
}

// HistoryFires says the noise history lets the gate call a lone regression
// on every compared row: each has a usable prior. The gate's t-test has no
// floor, so a large enough slowdown is then always callable.
func (p Plan) HistoryFires() bool {
	if len(p.History) == 0 {
		return false
	}
	for _, h := range p.History {
		if !h.Gate.Usable {
			return false
		}
	}
	return true
}

// Of plans a validated spec.
func Of(s spec.Spec) (Plan, error) {
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return Plan{}, fmt.Errorf("unknown suite %q", s.Workload.Suite)
	}
	steps, err := suite.Plan(s.Params())
	if err != nil {
		return Plan{}, fmt.Errorf("plan the %s suite: %w", s.Workload.Suite, err)
	}
	p := Plan{Name: s.Name, Base: s.Base, Targets: len(s.Targets), Repeats: s.Workload.Repeats,
		GateOn: s.Gate.FailOnRegression, Gate: s.Gate.Options()}
	for _, st := range steps {
		if st.Action != nil || st.Warm {
			continue
		}
		if len(st.Threads) > 0 {
			p.Tests += len(st.Threads)
		} else {
			p.Tests += len(s.Workload.Threads)
		}
		threads := st.Threads
		if len(threads) == 0 {
			threads = s.Workload.Threads
		}
		for _, th := range threads {
			p.Compared = append(p.Compared, TestCell{Test: st.Name, Threads: th})
		}
		if st.Duration > 0 && (p.ShortestStep == 0 || st.Duration < p.ShortestStep) {
			p.ShortestStep = st.Duration
		}
	}
	p.WithinRun = p.Repeats >= 2 && p.ShortestStep >= analysis.MinBatches*time.Second
	p.Interleaved = s.Workload.Interleave.Duration > 0
	p.Paired = p.Interleaved && p.Repeats >= 3
	p.Welch = !p.Interleaved && p.Repeats >= analysis.MinWelchRepeats
	p.Cells = p.Tests * max(p.Targets-1, 0)
	p.Marks = analysis.PowerOf(p.Cells, p.Repeats, p.Repeats, analysis.DefaultAlpha, analysis.BH)
	p.GatePower = analysis.PowerOf(p.Cells, p.Repeats, p.Repeats, p.Gate.Alpha, p.Gate.Correction)
	return p, nil
}

// Check refuses a spec whose gate cannot fire: the gate needs at least two
// targets, and either repeats whose smallest Mann-Whitney p-value can pass
// its correction, 3 repeats or more for a t-test (Welch, Paired),
// within-run evidence (WithinRun), or a noise history in the store for
// every compared row (HistoryFires, after AddHistory). The
// error is a *spec.Error naming the field to change, so the command line
// exits 2.
func (p Plan) Check() error {
	if !p.GateOn {
		return nil
	}
	if p.Targets < 2 {
		return &spec.Error{Field: "gate.fail_on_regression", Msg: "the gate compares targets with the base; add a second [[target]]"}
	}
	if analysis.CanFire(p.GatePower) || p.WithinRun || p.Paired || p.Welch || p.HistoryFires() {
		return nil
	}
	history := "and the store has no noise history of these tests on this host"
	if len(p.History) > 0 {
		n := 0
		for _, h := range p.History {
			if !h.Gate.Usable {
				n++
			}
		}
		history = fmt.Sprintf("and %d of the %d compared tests have too little noise history on this host (%s)", n, len(p.History), p.HistoryFrom)
	}
	g := p.GatePower
	return &spec.Error{Field: "workload.repeats", Msg: fmt.Sprintf("%d repeats cannot fail the gate ([gate] fail_on_regression = true): "+
		"%d cells under %s at alpha %g need p < %.2g for a lone regression, and %d against %d repeats reach %.2g at best "+
		"(exact Mann-Whitney floor 2/C(2n,n)), a t-test on the repeats needs %d of them, within-run evidence needs 2 "+
		"repeats and measured steps of %d s or more, %s; want repeats = %d or more (the ranks alone need %d)", p.Repeats,
		g.Cells, g.Correction, g.Alpha, g.Threshold, p.Repeats, p.Repeats, g.Floor, analysis.MinWelchRepeats, analysis.MinBatches,
		history, analysis.MinWelchRepeats, g.RepeatsNeeded)}
}

// Write prints the plan: what is compared, then for the gate (or, without
// one, the report's verdict marks) cells, repeats, alpha, correction, the
// smallest p, whether a regression can be called and the repeats needed.
func (p Plan) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: experiment %q: %d target(s), base %s; %d measured tests per target\n", p.Name, p.Targets, p.Base, p.Tests)
	if p.Schedule != "" {
		b.WriteString(p.Schedule + "\n")
	}
	if p.Targets < 2 {
		b.WriteString("nothing is compared: one target (add a second [[target]] to compare)\n")
	} else {
		if p.GateOn {
			p.writePower(&b, fmt.Sprintf("gate ([gate] fail_on_regression; fails on a slowdown of %g%% or more):", p.Gate.Threshold*100), p.GatePower)
		}
		p.writePower(&b, "verdict marks of the report and compare:", p.Marks)
		if p.WithinRun {
			fmt.Fprintf(&b, "\nwithin-run evidence: expected (%d repeats, measured steps of %s or more): verdicts then use a t-test "+
				"on log throughput with batch-means variance, which has no Mann-Whitney floor; the figures above are for "+
				"repeats alone\n", p.Repeats, p.ShortestStep)
		} else {
			fmt.Fprintf(&b, "\nwithin-run evidence: not expected (needs 2 repeats and measured steps of %d s or more); "+
				"a host noise prior in the store can still add evidence when the runs are judged\n", analysis.MinBatches)
		}
		switch {
		case p.Paired:
			fmt.Fprintf(&b, "\ninterleaved pairs: the targets take turns (workload.interleave), so each cell's %d repeats are "+
				"pairs judged by a paired t-test on their ratios, which has no Mann-Whitney floor; the figures above are "+
				"for independent repeats\n", p.Repeats)
		case p.Interleaved:
			fmt.Fprintf(&b, "\ninterleaved pairs: the targets take turns (workload.interleave), but %d repeats are too few "+
				"for a paired t-test without history (3 or more); a noise history of interleaved runs can still judge them\n",
				p.Repeats)
		case p.Welch:
			fmt.Fprintf(&b, "\nrepeats: without a noise history each cell's %d against %d repeats are judged by Welch's t-test "+
				"on log throughput, which has no Mann-Whitney floor; the figures above are for the ranks, which judge a cell "+
				"only when an outlier decides the t-test's call\n", p.Repeats, p.Repeats)
		}
		p.writeHistory(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (p Plan) writePower(b *strings.Builder, title string, pw analysis.Power) {
	yes := "no"
	if pw.Callable {
		yes = "yes"
	}
	fmt.Fprintf(b, "\n%s\n", title)
	fmt.Fprintf(b, "  cells            %d\n", pw.Cells)
	fmt.Fprintf(b, "  repeats          %d per target\n", p.Repeats)
	fmt.Fprintf(b, "  alpha            %g\n", pw.Alpha)
	fmt.Fprintf(b, "  correction       %s\n", pw.Correction.Long())
	fmt.Fprintf(b, "  smallest p       %.2g (exact Mann-Whitney, %d vs %d repeats)\n", pw.Floor, pw.NBase, pw.NOther)
	fmt.Fprintf(b, "  needed p         %.2g (a lone regression)\n", pw.Threshold)
	fmt.Fprintf(b, "  callable         %s\n", yes)
	fmt.Fprintf(b, "  repeats needed   %d per target\n", pw.RepeatsNeeded)
	if !pw.Callable && pw.MinChanged > 1 {
		fmt.Fprintf(b, "  note             with %d repeats only a change moving at least %d of the %d cells together can be called\n",
			p.Repeats, pw.MinChanged, pw.Cells)
	}
}

// writeHistory prints, per compared row, what the store's noise history
// lets the planned repeats call.
func (p Plan) writeHistory(b *strings.Builder) {
	if p.HistoryFrom == "" {
		b.WriteString("\nnoise history: no store read (give --store, or run in the directory of the results database)\n")
		return
	}
	fmt.Fprintf(b, "\nnoise history of this host in %s (t-test on log throughput, %d repeats per side, the weakest target; "+
		"callable: the smallest slowdown called, found about half of the time; %.0f%%: found %.0f%% of the time):\n",
		p.HistoryFrom, p.Repeats, 100*analysis.DetectPower, 100*analysis.DetectPower)
	known := false
	for _, h := range p.History {
		known = known || h.Marks.Prior.Points > 0
	}
	if !known {
		fmt.Fprintf(b, "  none of the %d compared tests has history on this host: verdicts rest on the repeats (and within-run variance)\n",
			len(p.History))
		if p.GateOn {
			b.WriteString("  the gate cannot rely on history\n")
		}
		return
	}
	usable := 0
	for _, h := range p.History {
		label := h.Test
		if h.Threads > 0 {
			label = fmt.Sprintf("%s @%d", h.Test, h.Threads)
		}
		if !h.Marks.Usable {
			fmt.Fprintf(b, "  %-28s %s\n", label, h.Marks)
			continue
		}
		usable++
		line := fmt.Sprintf("  %-28s s=%.1f%% (%d df): marks callable %.1f%%, %.0f%%: %.1f%%", label,
			100*math.Sqrt(h.Marks.Prior.Var), h.Marks.Prior.DF, 100*h.Marks.Callable, 100*analysis.DetectPower, 100*h.Marks.Likely)
		if p.GateOn {
			line += fmt.Sprintf("; gate callable %.1f%%, %.0f%%: %.1f%%", 100*math.Max(h.Gate.Callable, p.Gate.Threshold),
				100*analysis.DetectPower, 100*math.Max(h.Gate.Likely, p.Gate.Threshold))
		}
		b.WriteString(line + "\n")
	}
	switch {
	case len(p.History) == 0:
	case p.GateOn && p.HistoryFires():
		b.WriteString("  the gate can fire with this history on every compared test\n")
	case p.GateOn:
		fmt.Fprintf(b, "  the gate cannot rely on history: %d of %d compared tests have a usable one (%d degrees of freedom needed)\n",
			usable, len(p.History), analysis.DefaultMinPriorDF)
	}
}

// Lines are the one-line power statements `run` prints before measuring.
func (p Plan) Lines() []string {
	if p.Targets < 2 {
		return nil
	}
	var out []string
	if p.Schedule != "" {
		out = append(out, p.Schedule)
	}
	out = append(out, "verdict marks "+p.Marks.String())
	if p.GateOn {
		out = append(out, "gate "+p.GatePower.String())
	}
	if len(p.History) > 0 {
		usable, worst, best := 0, 0.0, 1.0
		for _, h := range p.History {
			if h.Marks.Usable {
				usable++
				worst, best = math.Max(worst, h.Marks.Callable), math.Min(best, h.Marks.Callable)
			}
		}
		l := fmt.Sprintf("noise history (%s): %d of %d compared tests have one", p.HistoryFrom, usable, len(p.History))
		if usable > 0 {
			l += fmt.Sprintf("; with %d repeats the smallest callable slowdown is %.1f%%-%.1f%%", p.Repeats, 100*best, 100*worst)
		}
		out = append(out, l)
	}
	if p.Paired {
		out = append(out, fmt.Sprintf("interleaved: %d pairs per cell, judged by a paired t-test on their ratios "+
			"(no Mann-Whitney floor)", p.Repeats))
	}
	if p.Welch {
		out = append(out, fmt.Sprintf("repeats: %d per target, judged without history by Welch's t-test on log throughput "+
			"(no Mann-Whitney floor; the ranks only when an outlier decides its call)", p.Repeats))
	}
	if p.WithinRun {
		out = append(out, fmt.Sprintf("within-run evidence expected (steps of %s or more): verdicts can go beyond the repeats' floor", p.ShortestStep))
	}
	return out
}
