package report

import (
	"strings"
	"testing"
)

// TestDrawFlame: the drawing both flame graphs share: siblings in name
// order, each placed after the widths of those before it (a frame too
// narrow to draw still takes its place), a narrow frame left out with its
// callees, the paint attributes as given, long names cut to the frame and
// the height from the deepest frame drawn.
func TestDrawFlame(t *testing.T) {
	root := &flameNode[float64]{name: "root", v: 1200}
	root.child("b").v = 600
	root.child("a").v = 0.3 // too narrow: left out with its callee
	root.child("a").child("deep").v = 0.3
	root.child("c").v = 30 // 4 characters fit: the name is cut
	root.child("c").child("c1").v = 30
	root.child("c").child("c1").child("c2").v = 30
	long := "a_very_long_function_name"
	root.child(long).v = 500
	svg := drawFlame(root, func(n *flameNode[float64]) float64 { return n.v },
		func(n *flameNode[float64]) (string, string) { return "tip " + n.name, `fill="red" data-x="1"` })
	for _, want := range []string{
		`<g><title>tip root</title><rect x="0.0" y="0.0" width="1200.0" height="16.0" fill="red" data-x="1" rx="2"/>`,
		`<rect x="0.3" y="17.0" width="500.0" height="16.0"`,   // the long name, after a's 0.3
		`<rect x="500.3" y="17.0" width="600.0" height="16.0"`, // b
		`<rect x="1100.3" y="17.0" width="30.0" height="16.0"`, // c
		`<rect x="1100.3" y="51.0" width="30.0"`,               // c2, level 3
		`<text x="1103.3" y="29.0">c</text>`,
		`<text x="1103.3" y="63.0">c2</text>`,
		`viewBox="0 0 1200 68"`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %s:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "tip a<") || strings.Contains(svg, "deep") {
		t.Errorf("a frame under the minimum width, or its callee, was drawn:\n%s", svg)
	}
	// 500 px hold (500-6)/6.6 = 74 characters: the long name whole.
	if !strings.Contains(svg, ">"+long+"</text>") {
		t.Errorf("the long name was cut in a frame wide enough:\n%s", svg)
	}
	if i, j := strings.Index(svg, "tip "+long), strings.Index(svg, "tip b<"); i < 0 || j < 0 || i > j {
		t.Errorf("siblings not in name order:\n%s", svg)
	}
}

// TestDrawFlameCutsLabels: a name longer than its frame holds is cut,
// ending in "..", and a frame holding under 3 characters has no label.
func TestDrawFlameCutsLabels(t *testing.T) {
	root := &flameNode[float64]{name: "function_name_of_twenty", v: 60}
	root.child("xyz").v = 20
	svg := drawFlame(root, func(n *flameNode[float64]) float64 { return n.v },
		func(n *flameNode[float64]) (string, string) { return n.name, `fill="red"` })
	// 60 px hold (60-6)/6.6 = 8 characters: 6 of the name and "..".
	if !strings.Contains(svg, ">functi..</text>") {
		t.Errorf("want the name cut to 8 characters:\n%s", svg)
	}
	// 20 px hold 2 characters: no label.
	if strings.Contains(svg, ">xyz</text>") || strings.Contains(svg, ">x..</text>") {
		t.Errorf("a frame too narrow for 3 characters has a label:\n%s", svg)
	}
}
