package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// querier runs one query per operation on its own connection.
type querier struct {
	conn  engine.Conn
	query string
}

func (w *querier) Op(ctx context.Context) (workload.Tally, error) {
	if _, err := w.conn.Query(ctx, w.query); err != nil {
		return workload.Tally{}, err
	}
	return workload.Tally{Statements: 1}, nil
}

func (w *querier) Close() error { return w.conn.Close() }

// TestInterleavedEffSQLite interleaves two real SQLite targets in 20 ms
// turns: one runs a trivial query, the other a query that counts 20,000
// rows of a recursive CTE, hundreds of times the CPU. benchlab's one
// process runs both engines, and the turns split its counters: each target
// gets a client CPU per operation, both over its own turns, and the heavy
// query's is the larger by far (a relation that holds at any speed of the
// machine). What one process cannot split stays not measured.
func TestInterleavedEffSQLite(t *testing.T) {
	ctx := context.Background()
	parts := sqliteParts(t, "light", "heavy")
	queries := map[engine.DB]string{
		parts[0].db: "SELECT 1",
		parts[1].db: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000) SELECT count(*) FROM c",
	}
	st := workload.Step{Name: "cost", Warmup: 200 * time.Millisecond, Duration: 800 * time.Millisecond,
		NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			conn, err := db.(engine.SQL).Connect(ctx)
			if err != nil {
				return nil, err
			}
			return &querier{conn: conn, query: queries[db]}, nil
		}}
	rs, errs := measureParts(ctx, parts, st, 1, 20*time.Millisecond, Options{SpeedProbeEvery: -1})
	var cpu [2]float64
	for i, err := range errs {
		if err != nil {
			t.Fatalf("target %d: %v", i, err)
		}
		r := rs[i][0]
		e := r.Eff
		if e == nil {
			t.Fatalf("%s: no efficiency", parts[i].name)
		}
		cpu[i] = e.PerOp(e.ClientCPU, r.QPS(), r.Seconds) * 1e6
		t.Logf("%s: %d ops in %.3f s of turns (Eff %.3f s), client %.2f us/op, %.3f cs/op", parts[i].name, r.Events,
			r.Seconds, e.Seconds, cpu[i], e.PerOp(float64(e.ClientCS), r.QPS(), r.Seconds))
		if r.Events == 0 || !(cpu[i] > 0) || r.Facts[store.FactEffByTurns] != 1 {
			t.Errorf("%s: %d operations, client cpu %.3f us/op, fact %s %v; want operations, cpu > 0, fact 1",
				parts[i].name, r.Events, cpu[i], store.FactEffByTurns, r.Facts[store.FactEffByTurns])
		}
		// Both come from the same turns' measured parts.
		if d := e.Seconds - r.Seconds; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: efficiency over %.6f s, measured %.6f s: want the same turns", parts[i].name, e.Seconds, r.Seconds)
		}
		if e.ServerCPU != store.NotMeasured || e.ClientPeakRSS != store.NotMeasured || e.DevWriteBytes != store.NotMeasured {
			t.Errorf("%s: server cpu %v, client peak RSS %v, device %v: want not measured", parts[i].name, e.ServerCPU,
				e.ClientPeakRSS, e.DevWriteBytes)
		}
		if e.ClientCS < 0 || e.ClientWriteBytes < 0 {
			t.Errorf("%s: client cs %d, write bytes %d: want counted", parts[i].name, e.ClientCS, e.ClientWriteBytes)
		}
	}
	if cpu[1] <= 10*cpu[0] {
		t.Errorf("client cpu per op: heavy query %.2f us, trivial %.2f us; want the heavy one over 10x", cpu[1], cpu[0])
	}
}

// sqliteParts opens a SQLite target per name, each in a dir of its own
// and closed when the test ends: the parts of an interleaved step.
func sqliteParts(t *testing.T, names ...string) []stepPart {
	t.Helper()
	drv, ok := engine.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	dir := t.TempDir()
	var parts []stepPart
	for _, name := range names {
		db, err := drv.Open(context.Background(), engine.Target{Name: name, Engine: "sqlite"}, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		parts = append(parts, stepPart{name: name, db: db, seed: 1})
	}
	return parts
}
