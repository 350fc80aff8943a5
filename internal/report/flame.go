package report

import (
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"slices"
	"strings"

	"benchlab/internal/profile"
)

// Flame graph geometry: an icicle chart, the root on top, each frame's
// width its share of the samples; frames narrower than flameMinWidth
// pixels are left out (their samples still count in their parents).
const (
	flameWidth    = 1200.0
	flameRow      = 17.0
	flameMinWidth = 0.5
	flameFont     = 11.0
	// flameCharWidth is the width of a character of the label font,
	// roughly, to cut labels to their frame.
	flameCharWidth = 6.6
)

// flameNode is a frame of a merged call tree holding V: its name, what
// the graph draws of it and its callees by name.
type flameNode[V any] struct {
	name     string
	v        V
	children map[string]*flameNode[V]
}

// child is n's callee name, added when new.
func (n *flameNode[V]) child(name string) *flameNode[V] {
	if n.children == nil {
		n.children = map[string]*flameNode[V]{}
	}
	c := n.children[name]
	if c == nil {
		c = &flameNode[V]{name: name}
		n.children[name] = c
	}
	return c
}

// FlameSVG draws folded stacks as an icicle flame graph in SVG, offline
// (no script): frames are rectangles whose width is their share of all
// samples, callers above callees, siblings in name order; each rectangle's
// tooltip gives the frame, its samples and share. Empty stacks draw
// nothing.
func FlameSVG(st profile.Stacks) string {
	root := &flameNode[int64]{name: "all"}
	for stack, n := range st {
		if n <= 0 {
			continue
		}
		root.v += n
		cur := root
		for _, f := range strings.Split(stack, ";") {
			cur = cur.child(f)
			cur.v += n
		}
	}
	if root.v == 0 {
		return ""
	}
	scale := flameWidth / float64(root.v)
	return drawFlame(root,
		func(n *flameNode[int64]) float64 { return float64(n.v) * scale },
		func(n *flameNode[int64]) (string, string) {
			tip := fmt.Sprintf("%s: %d samples, %.2f%%", n.name, n.v, 100*float64(n.v)/float64(root.v))
			return tip, fmt.Sprintf(`fill="%s"`, flameColor(n.name))
		})
}

// drawFlame draws the tree under root as an icicle SVG, the root on top:
// each frame a rectangle width(n) pixels wide, with look's tooltip and
// paint attributes (fill, stroke) and its name cut to fit, its callees
// below it left to right in name order; a frame narrower than
// flameMinWidth is left out with its callees.
func drawFlame[V any](root *flameNode[V], width func(*flameNode[V]) float64,
	look func(*flameNode[V]) (tip, paint string)) string {
	var b strings.Builder
	depth := 0
	var draw func(n *flameNode[V], x float64, level int) float64
	draw = func(n *flameNode[V], x float64, level int) float64 {
		w := width(n)
		if w < flameMinWidth {
			return w
		}
		depth = max(depth, level+1)
		y := float64(level) * flameRow
		tip, paint := look(n)
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s rx="2"/>`,
			html.EscapeString(tip), x, y, w, flameRow-1, paint)
		if chars := int((w - 6) / flameCharWidth); chars >= 3 {
			label := n.name
			if len(label) > chars {
				label = label[:chars-2] + ".."
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`, x+3, y+flameRow-5, html.EscapeString(label))
		}
		b.WriteString("</g>\n")
		names := make([]string, 0, len(n.children))
		for k := range n.children {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			x += draw(n.children[k], x, level+1)
		}
		return w
	}
	draw(root, 0, 0)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" class="flame" viewBox="0 0 %.0f %.0f" width="100%%" `+
		`font-family="monospace" font-size="%.0f">`+"\n%s</svg>", flameWidth, float64(depth)*flameRow, flameFont, b.String())
}

// flameColor is a warm colour picked by a hash of the frame's name, so a
// function keeps its colour from one graph to the next.
func flameColor(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	g := 80 + (v>>8)%140
	bl := 40 + (v>>16)%50
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
}

// htmlFlame is one flame graph of the HTML report.
type htmlFlame struct {
	Title string
	SVG   template.HTML
}

// flamesOf draws, for every test and target with a profile, its stacks
// summed over the repeats.
func flamesOf(d *Data) []htmlFlame {
	s, keys, _ := d.samples()
	label, _ := labeler(keys)
	var out []htmlFlame
	for _, k := range keys {
		for _, t := range d.targets() {
			if costOf(s[t][k]) == nil {
				continue
			}
			text, n, err := Folded(d, k.test, t, k.threads)
			if err != nil {
				continue
			}
			st, err := profile.Parse(text)
			if err != nil {
				continue
			}
			svg := FlameSVG(st)
			if svg == "" {
				continue
			}
			out = append(out, htmlFlame{
				Title: fmt.Sprintf("%s on %s: %d samples over %d repeat(s)", label(k), t, st.Samples(), n),
				SVG:   template.HTML(svg),
			})
		}
	}
	return out
}
