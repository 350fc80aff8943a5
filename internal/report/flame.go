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

// flameNode is a frame of the merged call tree.
type flameNode struct {
	name     string
	value    int64
	children map[string]*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	if n.children == nil {
		n.children = map[string]*flameNode{}
	}
	c := n.children[name]
	if c == nil {
		c = &flameNode{name: name}
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
	root := &flameNode{name: "all"}
	for stack, n := range st {
		if n <= 0 {
			continue
		}
		root.value += n
		cur := root
		for _, f := range strings.Split(stack, ";") {
			cur = cur.child(f)
			cur.value += n
		}
	}
	if root.value == 0 {
		return ""
	}
	var b strings.Builder
	depth := 0
	var draw func(n *flameNode, x float64, level int)
	scale := flameWidth / float64(root.value)
	draw = func(n *flameNode, x float64, level int) {
		w := float64(n.value) * scale
		if w < flameMinWidth {
			return
		}
		depth = max(depth, level+1)
		y := float64(level) * flameRow
		tip := fmt.Sprintf("%s: %d samples, %.2f%%", n.name, n.value, 100*float64(n.value)/float64(root.value))
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" rx="2"/>`,
			html.EscapeString(tip), x, y, w, flameRow-1, flameColor(n.name))
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
			c := n.children[k]
			draw(c, x, level+1)
			x += float64(c.value) * scale
		}
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
