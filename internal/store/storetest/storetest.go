// Package storetest reads a results store for tests that ran benchlab:
// its runs, in order, each with its results.
package storetest

import (
	"context"
	"testing"

	"benchlab/internal/store"
)

// Run is a stored run with its results.
type Run struct {
	store.Run
	Results []store.Result
}

// Open opens the store at db (a file or a DSN), failing the test on an
// error; the store is closed when the test ends.
func Open(t testing.TB, db string) *store.Store {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Runs opens the store at db (a file or a DSN) and returns every run of
// every experiment with its results (with their 1-second series when
// intervals), failing the test on any error.
func Runs(t testing.TB, db string, intervals bool) []Run {
	t.Helper()
	st := Open(t, db)
	ctx := context.Background()
	runs, err := st.Runs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Run, len(runs))
	for i, r := range runs {
		res, err := st.Results(ctx, r.ID, intervals)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = Run{Run: r, Results: res}
	}
	return out
}

// OneRun is Runs for a store that must hold exactly one run.
func OneRun(t testing.TB, db string, intervals bool) Run {
	t.Helper()
	runs := Runs(t, db, intervals)
	if len(runs) != 1 {
		t.Fatalf("store %s holds %d runs, want one", db, len(runs))
	}
	return runs[0]
}
