package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"benchlab/internal/profile"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// perOpStacks is a cell's folded stacks in microseconds of CPU per
// operation (samples / Hz / statements of the measured part), the mean
// over its profiled repeats; nil without a usable profile.
func perOpStacks(rs []store.Result) map[string]float64 {
	var out map[string]float64
	n := 0
	for _, r := range rs {
		p := r.Profile
		if p == nil || p.Hz <= 0 || len(p.Folded) == 0 || r.Statements <= 0 {
			continue
		}
		st, err := profile.Parse(p.Folded)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		for k, c := range st {
			out[k] += float64(c) / float64(p.Hz) * 1e6 / float64(r.Statements)
		}
		n++
	}
	for k := range out {
		out[k] /= float64(n)
	}
	return out
}

// diffTimes is a frame of the merged call tree of two profiles: its
// inclusive time per operation in each and its self time (as the leaf).
type diffTimes struct {
	base, target         float64
	selfBase, selfTarget float64
}

// diffNode is a frame of the merged call tree of two profiles.
type diffNode = flameNode[diffTimes]

// DiffFlameSVG draws a differential flame graph of two profiles given in
// microseconds per operation per stack (the idea of Brendan Gregg's
// difffolded): the frames are the target's, as wide as its time per
// operation (the whole width is the larger of the two profiles' totals, so
// a cheaper target draws narrower), each coloured, as difffolded does, by
// how its self time per operation (as the leaf) changed from the base: red
// where the target spends more, blue where less, white where the same, the
// deepest colour the largest change of any frame. The tooltip gives the
// inclusive times. A frame the target no longer has does not show; the
// profile table lists it. Offline SVG with a tooltip per frame; empty when
// the target has no samples.
func DiffFlameSVG(base, target map[string]float64) string {
	root := &diffNode{name: "all"}
	add := func(st map[string]float64, incl, self func(*diffNode) *float64) {
		for stack, v := range st {
			if v <= 0 {
				continue
			}
			*incl(root) += v
			cur := root
			for _, f := range strings.Split(stack, ";") {
				cur = cur.child(f)
				*incl(cur) += v
			}
			*self(cur) += v
		}
	}
	add(base, func(n *diffNode) *float64 { return &n.v.base }, func(n *diffNode) *float64 { return &n.v.selfBase })
	add(target, func(n *diffNode) *float64 { return &n.v.target }, func(n *diffNode) *float64 { return &n.v.selfTarget })
	if root.v.target <= 0 {
		return ""
	}
	var maxDelta float64
	var walk func(*diffNode)
	walk = func(n *diffNode) {
		if n.v.target > 0 {
			maxDelta = max(maxDelta, math.Abs(n.v.selfTarget-n.v.selfBase))
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	scale := flameWidth / max(root.v.base, root.v.target)
	return drawFlame(root, func(n *diffNode) float64 { return n.v.target * scale },
		func(n *diffNode) (string, string) {
			d := n.v.target - n.v.base
			tip := fmt.Sprintf("%s: %s us/op (base %s), %+.3g us/op", n.name, FormatValue(n.v.target), FormatValue(n.v.base), d)
			if n.v.base > 0 {
				tip += fmt.Sprintf(" (%+.1f%%)", 100*d/n.v.base)
			} else {
				tip += " (new)"
			}
			// A grey outline, so that unchanged (white) frames show.
			return tip, fmt.Sprintf(`fill="%s" stroke="#bbb" stroke-width="0.5"`,
				diffColor(n.v.selfTarget-n.v.selfBase, maxDelta))
		})
}

// diffColor is white for no change, deepening to red (more time) or blue
// (less) as |d| nears the largest change m.
func diffColor(d, m float64) string {
	if m <= 0 {
		return "rgb(255,255,255)"
	}
	f := math.Min(1, math.Abs(d)/m)
	fade := 255 - int(math.Round(f*175))
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", fade, fade)
	}
	if d < 0 {
		return fmt.Sprintf("rgb(%d,%d,255)", fade, fade)
	}
	return "rgb(255,255,255)"
}

// diffFlamesOf draws, for every test and every target other than the base
// where both have profiles, the target's differential flame graph against
// the base.
func diffFlamesOf(d *Data) []htmlFlame {
	targets := d.targets()
	if len(targets) < 2 {
		return nil
	}
	s, keys, _ := d.samples()
	label, _ := labeler(keys)
	var out []htmlFlame
	for _, k := range keys {
		base := perOpStacks(s[targets[0]][k])
		if base == nil {
			continue
		}
		for _, t := range targets[1:] {
			tg := perOpStacks(s[t][k])
			if tg == nil {
				continue
			}
			if svg := DiffFlameSVG(base, tg); svg != "" {
				out = append(out, htmlFlame{Title: fmt.Sprintf("%s: %s against %s (red: more us/op, blue: less)",
					label(k), t, targets[0]), SVG: template.HTML(svg)})
			}
		}
	}
	return out
}

// OffCPUFactor is how many times its on-CPU time a step's threads must
// spend off CPU for the report to show where they waited: a step whose
// CPU time is far below its wall time is explained by its waits, not by
// its CPU profile.
const OffCPUFactor = 2

// offCPUPerOp is a cell's off-CPU time per function the threads waited in
// (the leaf of the off-CPU stacks), in microseconds per operation, the mean
// over its repeats with an off-CPU profile; nil without one.
func offCPUPerOp(rs []store.Result) map[string]float64 {
	var out map[string]float64
	n := 0
	for _, r := range rs {
		p := r.Profile
		if p == nil || len(p.OffCPU) == 0 || r.Statements <= 0 {
			continue
		}
		st, err := profile.Parse(p.OffCPU)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		for f, us := range st.Self() {
			out[f] += float64(us) / float64(r.Statements)
		}
		n++
	}
	for f := range out {
		out[f] /= float64(n)
	}
	return out
}

// offCPUTables are, for every test and target whose threads were off CPU
// more than OffCPUFactor times their profiled CPU time per operation, the
// ProfileTop functions they waited in longest.
func offCPUTables(d *Data, keys []cellKey, s samples, label func(cellKey) string) []Table {
	var out []Table
	for _, k := range keys {
		for _, tg := range d.targets() {
			off := offCPUPerOp(s[tg][k])
			c := costOf(s[tg][k])
			if off == nil || c == nil {
				continue
			}
			total := 0.0
			for _, v := range off {
				total += v
			}
			if total <= OffCPUFactor*c.total {
				continue
			}
			t := Table{Title: "Off-CPU profile: " + label(k) + " (" + tg + ")",
				Legend: fmt.Sprintf("the step's threads were off CPU %s us/op against %s us/op on it: where they waited, "+
					"by the function they left the CPU in (the kernel's scheduler frames left out), in microseconds per "+
					"operation from each switch off the CPU to the thread's next (the wait and the run after it), mean "+
					"over the repeats", FormatValue(total), FormatValue(c.total)),
				Columns: []string{"off-cpu us/op", "share %"}}
			t.Rows = append(t.Rows, Row{Label: "all waits", Cells: []Cell{section.NumberCell(total), section.NumberCell(100)}})
			for _, f := range topBy(off, nil, func(a, _ float64) float64 { return a }) {
				t.Rows = append(t.Rows, Row{Label: f, Cells: []Cell{section.NumberCell(off[f]), section.NumberCell(share(off[f], total))}})
			}
			out = append(out, t)
		}
	}
	return out
}
