package tpcc

import (
	"context"
	"io"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/workload"
)

// BenchmarkNewOrder is one New-Order transaction (prepared statements) on a
// 1-warehouse SQLite database, with allocations per transaction.
func BenchmarkNewOrder(b *testing.B) {
	ctx := context.Background()
	db := enginetest.Open(b, engine.Target{Name: "bench", Engine: "sqlite", Settings: map[string]string{"journal_mode": "wal"}})
	steps, err := Suite{}.Plan(workload.Params{Options: &Options{Warehouses: 1}, Seed: 5, Threads: []int{1}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		b.Fatal(err)
	}
	t, err := newTerminal(ctx, db, &Options{Warehouses: 1}, 0, 5, false)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := t.txn(ctx, true, t.newOrder); err != nil {
			b.Fatal(err)
		}
	}
}
