package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSaveNoiseMany saves more experiments and entries than one statement
// of SaveNoiseMany holds (noiseRows), then saves one experiment again:
// every entry reads back once, and saving again replaces what the
// experiment taught before.
func TestSaveNoiseMany(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := func(threads int) NoiseKey {
		return NoiseKey{Host: "h", Engine: "sqlite", Test: "sysbench/point-query", Threads: threads}
	}
	learned := map[int64][]NoiseEntry{}
	var first int64
	for i := range noiseRows + 5 {
		e := Experiment{Name: "e", Base: "a", Spec: "", Targets: []string{"a"}}
		if err := s.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// The first teaches noiseRows+50 thread counts, the others one.
			first = e.ID
			for th := 1; th <= noiseRows+50; th++ {
				learned[e.ID] = append(learned[e.ID], NoiseEntry{NoiseKey: key(th), Config: "c", Runs: 3, DF: 2, LogVar: float64(th)})
			}
			continue
		}
		learned[e.ID] = []NoiseEntry{{NoiseKey: key(1), Config: "c", Runs: 2, DF: 1, LogVar: 0.01}}
	}
	if err := s.SaveNoiseMany(ctx, learned); err != nil {
		t.Fatal(err)
	}
	count := func(threads int) int {
		t.Helper()
		es, err := s.NoiseHistory(ctx, key(threads), 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if n1, nLast := count(1), count(noiseRows+50); n1 != noiseRows+5 || nLast != 1 {
		t.Errorf("entries at 1 thread %d, at %d threads %d; want %d and 1", n1, noiseRows+50, nLast, noiseRows+5)
	}
	if es, _ := s.NoiseHistory(ctx, key(noiseRows+50), 0); len(es) == 1 && (es[0].ExperimentID != first || es[0].LogVar != noiseRows+50) {
		t.Errorf("entry %+v, want experiment %d's with variance %d", es[0], first, noiseRows+50)
	}
	if ids, err := s.Unlearned(ctx); err != nil || len(ids) != 0 {
		t.Errorf("unlearned %v (err %v), want none", ids, err)
	}
	// Learned again, the first teaches one thread count only.
	if err := s.SaveNoiseMany(ctx, map[int64][]NoiseEntry{first: {{NoiseKey: key(7), Config: "c", Runs: 2, DF: 1}}}); err != nil {
		t.Fatal(err)
	}
	if n1, n7, nLast := count(1), count(7), count(noiseRows+50); n1 != noiseRows+4 || n7 != 1 || nLast != 0 {
		t.Errorf("after saving the first again: %d, %d, %d entries at 1, 7, %d threads; want %d, 1, 0", n1, n7, nLast, noiseRows+50, noiseRows+4)
	}
}
