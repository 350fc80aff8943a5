package report

import (
	"fmt"
	"strings"

	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// StalledMark is what a relative cell shows when every run of a side of
// its comparison completed no operation (store.Result.Stalled): a failure
// to measure, not a ratio of 0 (docs/statistics.md, "Stalled steps").
const StalledMark = "stalled"

// withoutStalls is rs without the results that completed no operation:
// what a verdict judges. A stall's zero is no rate of the engine, and on a
// log scale it is no value at all.
func withoutStalls(rs []store.Result) []store.Result {
	var out []store.Result
	for _, r := range rs {
		if !r.Stalled() {
			out = append(out, r)
		}
	}
	return out
}

// countStalls is how many of rs stalled.
func countStalls(rs []store.Result) int {
	return len(rs) - len(withoutStalls(rs))
}

// Unjudged is a compared cell that no verdict covers: every run of the
// base, or of the other target, completed no operation. Compare leaves it
// out, the relative table shows StalledMark, and a gate reports it as not
// judged rather than as a regression or a pass.
type Unjudged struct {
	Target  string
	Test    string
	Threads int
	// Stalled and Runs count each side's stalled runs and all its runs
	// (base first).
	Stalled, Runs [2]int
}

// Why says which side stalled, in words: "every run of the base (2 of 2)
// completed no operation".
func (u Unjudged) Why() string {
	var sides []string
	for i, name := range []string{"the base", u.Target} {
		if u.Runs[i] > 0 && u.Stalled[i] == u.Runs[i] {
			sides = append(sides, fmt.Sprintf("%s (%d of %d)", name, u.Stalled[i], u.Runs[i]))
		}
	}
	return "every run of " + strings.Join(sides, " and of ") + " completed no operation (stalled)"
}

// stallSides counts the stalled runs and all runs of a comparison's two
// sides, and says whether a side has no run left to judge.
func stallSides(base, other []store.Result) (stalled, runs [2]int, unjudged bool) {
	stalled = [2]int{countStalls(base), countStalls(other)}
	runs = [2]int{len(base), len(other)}
	unjudged = (runs[0] > 0 && stalled[0] == runs[0]) || (runs[1] > 0 && stalled[1] == runs[1])
	return stalled, runs, unjudged
}

// NotJudged lists the cells of d that Compare leaves out because a side's
// runs all stalled, in the order Compare judges the others.
func NotJudged(d *Data) []Unjudged {
	s, keys, _ := d.samples()
	targets := d.targets()
	var out []Unjudged
	for _, k := range keys {
		base := s[targets[0]][k]
		for _, t := range targets[1:] {
			other := s[t][k]
			if len(base) == 0 || len(other) == 0 {
				continue
			}
			if st, runs, no := stallSides(base, other); no {
				out = append(out, Unjudged{Target: t, Test: k.test, Threads: k.threads, Stalled: st, Runs: runs})
			}
		}
	}
	return out
}

// stalledCell is the relative cell of a comparison none of whose verdict
// could be made: StalledMark, uncoloured, with the reason as its detail.
func stalledCell(u Unjudged) Cell {
	return Cell{Kind: Text, Text: StalledMark, Detail: "not judged: " + u.Why()}
}

// StallNotes name every measured step that completed no operation or whose
// measured part overran (overrunNote), then say what the verdicts did with
// the stalled runs: cells judged without them, cells not judged at all. The
// report and compare (one experiment or across experiments) print the same
// lines.
func StallNotes(d *Data) []string {
	var out []string
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if r.Action || r.Warm || (len(r.Intervals) == 0 && !r.Stalled()) {
				continue
			}
			if n := overrunNote(r, run, sampledSeconds(r)); n != "" {
				out = append(out, n)
			}
		}
	}
	const maxNotes = 15
	if len(out) > maxNotes {
		out = append(out[:maxNotes], fmt.Sprintf("... and %d more stalled or late steps", len(out)-maxNotes))
	}
	return append(out, stallVerdictNotes(d)...)
}

// stallVerdictNotes say how the comparisons treated stalled runs: judged
// without them where each side kept a run, not judged where a side kept
// none. Empty with one target or no stall.
func stallVerdictNotes(d *Data) []string {
	targets := d.targets()
	if len(targets) < 2 {
		return nil
	}
	s, keys, _ := d.samples()
	partCells, partRuns := 0, 0
	for _, k := range keys {
		base := s[targets[0]][k]
		for _, t := range targets[1:] {
			other := s[t][k]
			if len(base) == 0 || len(other) == 0 {
				continue
			}
			if st, _, no := stallSides(base, other); !no && st[0]+st[1] > 0 {
				partCells, partRuns = partCells+1, partRuns+st[0]+st[1]
			}
		}
	}
	var out []string
	if partCells > 0 {
		out = append(out, fmt.Sprintf("stalled runs left out of the verdicts: %d cell(s) judged without %d run(s) that completed "+
			"no operation (a stall measures the machine, not the engine)", partCells, partRuns))
	}
	for _, u := range NotJudged(d) {
		out = append(out, fmt.Sprintf("not judged: %s @%d on %s: %s; its relative cell reads %q, and a gate reports it "+
			"as not judged (exit 1), neither a regression nor a pass", u.Test, u.Threads, u.Target, u.Why(), StalledMark))
	}
	return out
}

// sampledSeconds is how long r's measured seconds were sampled over.
func sampledSeconds(r store.Result) float64 {
	sampled := 0.0
	for _, iv := range r.Intervals {
		if iv.Sec >= 0 {
			sampled += iv.Seconds
		}
	}
	return sampled
}

// NotJudgedRows are rows of the verdicts table (ComparisonTableWith) for
// the cells no verdict covers: the stalled mark where the ratio would be,
// "not judged" as the verdict and the reason as the evidence.
func NotJudgedRows(us []Unjudged) []Row {
	var out []Row
	for _, u := range us {
		n := fmt.Sprintf("%d/%d", u.Runs[0]-u.Stalled[0], u.Runs[1]-u.Stalled[1])
		out = append(out, Row{Label: fmt.Sprintf("%s @%d", u.Test, u.Threads), Cells: []Cell{
			section.TextCell(u.Target), section.TextCell("n/a"), section.TextCell("n/a"), section.TextCell(StalledMark), section.TextCell("n/a"), section.TextCell(n),
			section.TextCell("not judged"), section.TextCell(u.Why()),
		}})
	}
	return out
}
