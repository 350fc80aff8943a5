package servertest

import (
	"context"
	"io"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/workload"
)

// Settled runs the first two steps a sysbench test selection plans on a
// fresh server of the engine: the load, then the cleanup that settles it
// before the first measured read (so repeats do not differ by when vacuum,
// hint bits or a dirty-page flush land in the measured seconds). fresh is called after the
// load, settled after the cleanup, each with a connection, to check the
// engine's state; a plan without the cleanup fails.
func Settled(t *testing.T, eng string, fresh, settled func(t *testing.T, c engine.Conn)) {
	t.Helper()
	getenv, _ := Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "settle", Engine: eng, Getenv: getenv})
	suite, _ := workload.Lookup("sysbench")
	steps, err := suite.Plan(workload.Params{Tests: []string{"point-query"}, Tables: 2, TableSize: 20000,
		Threads: []int{1}, Seed: 5, ReadTime: 1, WriteTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 3 || steps[0].Name != "prepare" || steps[1].Name != "postload" || steps[1].Action == nil {
		var names []string
		for _, s := range steps {
			names = append(names, s.Name)
		}
		t.Fatalf("plan %v: want prepare, then the postload cleanup, then the tests", names)
	}
	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	fresh(t, conn)
	if _, err := steps[1].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	settled(t, conn)
}
