package insertbench

import (
	"context"
	"io"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
)

// BenchmarkInsertBatch is l.i0's insert operation (one 100-row multi-row
// INSERT as text, as iibench.py sends it) on SQLite after setup, with
// allocations per batch. (l.i1's inserter waits for its deleter, so it is
// not run alone.)
func BenchmarkInsertBatch(b *testing.B) {
	ctx := context.Background()
	db := enginetest.Open(b, engine.Target{Name: "bench", Engine: "sqlite"})
	p := params()
	opts(p).Clients = 1
	steps, err := Suite{}.Plan(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil { // setup
		b.Fatal(err)
	}
	if steps[1].Name != "l.i0" {
		b.Fatalf("step 2 is %s, want l.i0", steps[1].Name)
	}
	w, err := steps[1].Roles[0].NewWorker(ctx, db, 0, 1, 3)
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
