package tpcc

import (
	"context"
	"io"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/mysql"
	_ "benchlab/internal/engine/postgres"
	"benchlab/internal/workload"
)

// BenchmarkNewOrder is one New-Order transaction (prepared statements) on a
// 1-warehouse SQLite database, with allocations per transaction.
func BenchmarkNewOrder(b *testing.B) {
	benchNewOrder(b, engine.Target{Name: "bench", Engine: "sqlite", Settings: map[string]string{"journal_mode": "wal"}}, false)
}

// BenchmarkNewOrderPostgres is New-Order on a PostgreSQL server on loopback,
// with prepared statements (benchlab's default) and sent as text, as
// sysbench-tpcc's tpcc.lua sends them.
func BenchmarkNewOrderPostgres(b *testing.B) {
	for _, text := range []bool{false, true} {
		b.Run(protocol(text), func(b *testing.B) { benchNewOrder(b, engine.Target{Name: "bench", Engine: "postgres"}, text) })
	}
}

// BenchmarkNewOrderMariaDB is New-Order on a MariaDB server on loopback,
// prepared and as text.
func BenchmarkNewOrderMariaDB(b *testing.B) {
	for _, text := range []bool{false, true} {
		b.Run(protocol(text), func(b *testing.B) { benchNewOrder(b, engine.Target{Name: "bench", Engine: "mariadb"}, text) })
	}
}

func protocol(text bool) string {
	if text {
		return "text"
	}
	return "prepared"
}

// benchNewOrder loads one warehouse on the target (starting a server for a
// server engine) and runs b.N New-Order transactions on one terminal,
// reporting allocations per transaction (the workload's and the driver's).
func benchNewOrder(b *testing.B, target engine.Target, text bool) {
	ctx := context.Background()
	db := enginetest.Open(b, target)
	steps, err := Suite{}.Plan(workload.Params{Options: &Options{Warehouses: 1}, Seed: 5, Threads: []int{1}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		b.Fatal(err)
	}
	t, err := newTerminal(ctx, db, &Options{Warehouses: 1}, 0, 5, text)
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
