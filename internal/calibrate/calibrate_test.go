package calibrate

import (
	"slices"
	"testing"

	_ "benchlab/internal/all"
	"benchlab/internal/spec"
)

// TestSpecs parses the planted and gate specs of every preset size: each
// is a valid experiment whose targets are the base, its copies and one
// target per effect, whose loop count grows by 1/(1-e).
func TestSpecs(t *testing.T) {
	for _, c := range []Size{Quick, Full, Sequential} {
		s, err := spec.Parse([]byte(c.PlantedSpec()), "planted", "")
		if err != nil {
			t.Fatalf("%+v: planted spec: %v", c, err)
		}
		var names []string
		for _, tg := range s.Targets {
			names = append(names, tg.Name)
		}
		want := []string{"base"}
		for i := 2; i <= c.Copies; i++ {
			want = append(want, copyTarget(i))
		}
		for _, e := range c.Effects {
			want = append(want, effectTarget(e))
		}
		if !slices.Equal(names, want) {
			t.Errorf("planted targets %v, want %v", names, want)
		}
		if _, err := spec.Parse([]byte(c.SyncSpec()), "sync", ""); err != nil {
			t.Errorf("%+v: sync spec: %v", c, err)
		}
	}
}

// TestWindows checks the repeat windows: disjoint runs of n repeats, and
// the repeat counts judged (1, 3, 5 up to the repeats, and the repeats).
func TestWindows(t *testing.T) {
	c := Size{Repeats: 4}
	if got := c.windows(1); len(got) != 4 || got[3] != [2]int{4, 4} {
		t.Errorf("windows(1) of 4 repeats: %v", got)
	}
	if got := c.windows(3); len(got) != 1 || got[0] != [2]int{1, 3} {
		t.Errorf("windows(3) of 4 repeats: %v", got)
	}
	if got := c.repeatCounts(); !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("repeat counts of 4 repeats: %v, want [1 3 4]", got)
	}
	if got := pairs([]string{"a", "b", "c"}); len(got) != 3 || !slices.Equal(got[2], []string{"b", "c"}) {
		t.Errorf("pairs of 3: %v", got)
	}
	if got := EffectList([]float64{0.05, 0.3}); got != "5%, 30%" {
		t.Errorf("EffectList = %q", got)
	}
}
