package noise

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/postgres" // starts the real server the PostgreSQL store lives on
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// fillHistory stores, without learning them, experiments of two hosts and
// two workload shapes: A/A pairs and distinct configurations, 1 to 4
// repeats, two tests at one and four threads, and what must not teach (a
// failed run, a warm-up, an action, a secondary role, a spec without a
// suite, an experiment without runs). Throughputs are drawn from a seeded
// source, so the variances differ from entry to entry.
func fillHistory(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 19))
	specs := []string{
		"[workload]\nsuite = \"sysbench\"\ntable_size = 1000\n",
		"[workload]\nsuite = \"sysbench\"\ntable_size = 5000\nread_time = \"2s\"\n",
	}
	for i := range 9 {
		host := fmt.Sprintf("h%d", 1+i%2)
		sp := specs[(i/2)%2]
		switch i {
		case 6:
			sp = "name = \"no suite\"\n"
		case 7:
			sp = "[workload\n" // unreadable
		}
		exp := store.Experiment{Name: fmt.Sprint("e", i), Base: "a", Spec: sp, Targets: []string{"a", "b", "c"}}
		if err := st.CreateExperiment(ctx, &exp); err != nil {
			t.Fatal(err)
		}
		if i == 8 {
			continue // an experiment without runs
		}
		repeats := 1 + i%4
		for rep := 1; rep <= repeats; rep++ {
			// a and b are an A/A pair; c runs another setting.
			for _, target := range []struct{ name, sync string }{{"a", "off"}, {"b", "off"}, {"c", "full"}} {
				var m store.Manifest
				m.Host = store.Host{Hostname: host, CPUModel: "cpu", Cores: 2}
				m.Target.Name, m.Target.Engine = target.name, "sqlite"
				m.Target.Settings = map[string]string{"synchronous": target.sync}
				m.Engine.Version = "3.x"
				status := store.StatusOK
				if i == 3 && rep == 2 && target.name == "c" {
					status = store.StatusFailed
				}
				r := store.Run{ExperimentID: exp.ID, Target: target.name, Engine: "sqlite", Repeat: rep, Status: status,
					Manifest: m.JSON()}
				if err := st.CreateRun(ctx, &r); err != nil {
					t.Fatal(err)
				}
				seq := 0
				save := func(res store.Result) {
					t.Helper()
					seq++
					res.RunID, res.Seq, res.Metric, res.Seconds = r.ID, seq, "qps", 1+rng.Float64()
					if res.Status == "" {
						res.Status = store.StatusOK
					}
					if err := st.SaveResult(ctx, &res); err != nil {
						t.Fatal(err)
					}
				}
				save(store.Result{Test: "prepare", Action: true, Statements: 50})
				for _, test := range []string{"point-query", "update-index"} {
					for _, threads := range []int{1, 4} {
						save(store.Result{Test: test, Threads: threads, Warm: true, Statements: 10 + rng.Int64N(90)})
						save(store.Result{Test: test, Threads: threads, Statements: 1000 + rng.Int64N(500)})
					}
				}
				save(store.Result{Test: "point-query", Threads: 1, Statements: 70 + rng.Int64N(30),
					Role: store.RoleInfo{Name: "insert", Secondary: true}})
			}
		}
	}
}

// noiseRows is every row of the noise model and of the learned list, in
// one order, as the store holds them.
type noiseRows struct {
	Entries []store.NoiseEntry
	Learned []int64
}

func readNoise(t *testing.T, db *sql.DB) noiseRows {
	t.Helper()
	var out noiseRows
	q := `SELECT experiment_id, host, engine, test, threads, config, runs, df, log_var FROM noise
		ORDER BY experiment_id, host, engine, test, threads, config`
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e store.NoiseEntry
		if err := rows.Scan(&e.ExperimentID, &e.Host, &e.Engine, &e.Test, &e.Threads, &e.Config, &e.Runs, &e.DF, &e.LogVar); err != nil {
			t.Fatal(err)
		}
		out.Entries = append(out.Entries, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	ids, err := db.Query(`SELECT experiment_id FROM noise_learned ORDER BY experiment_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer ids.Close()
	for ids.Next() {
		var id int64
		if err := ids.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out.Learned = append(out.Learned, id)
	}
	return out
}

// checkBackfillLearnsAsOneByOne learns the history fillHistory stored
// once experiment by experiment (LearnStored, as the runner learns each
// experiment it stores) and once in batches that cut across experiments
// (Backfill), and wants the same noise rows, bit for bit.
func checkBackfillLearnsAsOneByOne(t *testing.T, st *store.Store, db *sql.DB) {
	ctx := context.Background()
	fillHistory(t, st)
	ids, err := st.Unlearned(ctx)
	if err != nil || len(ids) != 9 {
		t.Fatalf("unlearned %v (err %v), want the 9 experiments stored", ids, err)
	}
	for _, id := range ids {
		if err := LearnStored(ctx, st, id); err != nil {
			t.Fatal(err)
		}
	}
	oneByOne := readNoise(t, db)
	hosts, exps := map[string]bool{}, map[int64]bool{}
	for _, e := range oneByOne.Entries {
		hosts[e.Host], exps[e.ExperimentID] = true, true
	}
	// Experiments 6-8 (no suite, unreadable spec, no runs) teach nothing;
	// the others teach two tests at two thread counts for the A/A pair and,
	// from two repeats on, for c: 4 entries for experiments 0 and 4 (one
	// repeat), 8 for 1-3 and 5.
	if len(hosts) != 2 || len(exps) != 6 || len(oneByOne.Entries) != 40 || len(oneByOne.Learned) != 9 {
		t.Fatalf("one by one: %d entries of %d hosts and %d experiments, %d learned; want 40 entries of 2 hosts and 6 experiments, 9 learned",
			len(oneByOne.Entries), len(hosts), len(exps), len(oneByOne.Learned))
	}

	for _, q := range []string{`DELETE FROM noise`, `DELETE FROM noise_learned`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	defer func(n int) { backfillBatch = n }(backfillBatch)
	backfillBatch = 4 // batches of 4, 4 and 1 experiments
	if err := Backfill(ctx, st); err != nil {
		t.Fatal(err)
	}
	batched := readNoise(t, db)
	if !reflect.DeepEqual(batched, oneByOne) {
		t.Errorf("Backfill learned\n%+v\none by one:\n%+v", batched, oneByOne)
	}
	if ids, err := st.Unlearned(ctx); err != nil || len(ids) != 0 {
		t.Errorf("unlearned after Backfill: %v (err %v)", ids, err)
	}
}

// TestBackfillLearnsAsOneByOne: on a SQLite file, learning a history in
// batches (Backfill) stores exactly what learning it experiment by
// experiment stores.
func TestBackfillLearnsAsOneByOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkBackfillLearnsAsOneByOne(t, st, db)
}

// TestBackfillLearnsAsOneByOnePostgres: the same on a store in a real
// PostgreSQL server.
func TestBackfillLearnsAsOneByOnePostgres(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	srv := enginetest.Open(t, engine.Target{Name: "lab", Engine: "postgres",
		Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] }})
	in := srv.(interface{ Instance() *server.Instance }).Instance()
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port)
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkBackfillLearnsAsOneByOne(t, st, db)
}
