package custom

import (
	"context"
	"io"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
)

// BenchmarkCustomRead is the custom suite's point read (one statement, one
// uniform argument) on SQLite, with allocations per operation.
func BenchmarkCustomRead(b *testing.B) {
	ctx := context.Background()
	db := enginetest.Open(b, engine.Target{Name: "bench", Engine: "sqlite"})
	steps, err := Suite{}.Plan(accounts(10_000))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		b.Fatal(err)
	}
	for _, st := range steps {
		if st.Name != "balance" {
			continue
		}
		w, err := st.NewWorker(ctx, db, 0, 1, 9)
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
		return
	}
	b.Fatal("no balance step")
}
