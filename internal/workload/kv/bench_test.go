package kv

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/pebble"
	"benchlab/internal/runner"
	"benchlab/internal/workload"
)

// BenchmarkGet is readrandom's operation (one get of a random key) on
// in-process Pebble after fillseq of 20,000 keys, with allocations per get.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	p := testParams(20_000)
	steps, err := Suite{}.Plan(p)
	if err != nil {
		b.Fatal(err)
	}
	byName := map[string]workload.Step{}
	for _, s := range steps {
		byName[s.Name] = s
	}
	d := pebble.Driver{}
	db, err := d.Open(ctx, engine.Target{Name: d.Name(), Engine: d.Name()}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := runner.MeasureRoles(ctx, db, byName["fillseq"], 1, p.Seed, runner.Options{}); err != nil {
		b.Fatal(err)
	}
	w, err := byName["readrandom"].NewWorker(ctx, db, 0, 1, 3)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := w.Op(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
