package sysbench

import (
	"context"
	"io"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/mysql"
	_ "benchlab/internal/engine/postgres"
	"benchlab/internal/workload"
)

// benchWorker loads a 10,000-row table on SQLite and returns a worker of the
// named test, closed when the benchmark ends.
func benchWorker(b *testing.B, test string) workload.Worker {
	return benchWorkerOn(b, "sqlite", test, false)
}

// benchWorkerOn is benchWorker on an engine (a server is started for a
// server engine), with statements sent as text when unprepared.
func benchWorkerOn(b *testing.B, eng, test string, unprepared bool) workload.Worker {
	b.Helper()
	ctx := context.Background()
	db := enginetest.Open(b, engine.Target{Name: "bench", Engine: eng})
	p := workload.Params{Tables: 1, TableSize: 10_000, Threads: []int{1}, ReadTime: time.Second,
		WriteTime: time.Second, Tests: []string{test}, Seed: 1, Unprepared: unprepared, Options: &Options{KRandType: KUniform}}
	steps, err := Suite{}.Plan(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		b.Fatal(err)
	}
	for _, st := range steps {
		if st.Name == test {
			w, err := st.NewWorker(ctx, db, 0, 1, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { w.Close() })
			return w
		}
	}
	b.Fatalf("no step %s in the plan", test)
	return nil
}

// benchOps runs b.N operations of w, reporting allocations per operation
// (the workload's and the driver's: the runner adds none, see
// runner.TestRunnerAllocatesNothingPerOp).
func benchOps(b *testing.B, w workload.Worker) {
	// Cancellable, as the runner's step context is: drivers watch it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := w.Op(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPointQuery is the point query's operation on cached SQLite.
func BenchmarkPointQuery(b *testing.B) { benchOps(b, benchWorker(b, "point-query")) }

// BenchmarkInsert is the insert test's operation (a text statement, as
// sysbench sends it) on SQLite.
func BenchmarkInsert(b *testing.B) { benchOps(b, benchWorker(b, "insert")) }

// BenchmarkPointQueryPostgresText is the point query sent as text
// (--db-ps-mode=disable) to a PostgreSQL server on loopback: allocations per
// query include the driver's cancellation watcher unless the statement is
// run without the step's context.
func BenchmarkPointQueryPostgresText(b *testing.B) {
	benchOps(b, benchWorkerOn(b, "postgres", "point-query", true))
}

// BenchmarkPointQueryPostgres is the prepared point query (sysbench's
// default) on a PostgreSQL server on loopback.
func BenchmarkPointQueryPostgres(b *testing.B) {
	benchOps(b, benchWorkerOn(b, "postgres", "point-query", false))
}

// BenchmarkPointQueryMariaDB is the prepared point query (COM_STMT_EXECUTE,
// sysbench's default) on a MariaDB server on loopback.
func BenchmarkPointQueryMariaDB(b *testing.B) {
	benchOps(b, benchWorkerOn(b, "mariadb", "point-query", false))
}

// BenchmarkPointQueryMariaDBText is the point query sent as text
// (--db-ps-mode=disable) to a MariaDB server on loopback.
func BenchmarkPointQueryMariaDBText(b *testing.B) {
	benchOps(b, benchWorkerOn(b, "mariadb", "point-query", true))
}
