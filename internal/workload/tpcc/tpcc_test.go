package tpcc

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/workload"
)

func TestRandomValues(t *testing.T) {
	if got := lastName(371); got != "PRICALLYOUGHT" {
		t.Errorf("lastName(371) = %q, want PRICALLYOUGHT (clause 4.3.2.3's example)", got)
	}
	for n, want := range map[int]string{1234: "12.34", 5: "0.05", -1000: "-10.00", 0: "0.00"} {
		if got := fixed(n, 2); got != want {
			t.Errorf("fixed(%d, 2) = %q, want %q", n, got, want)
		}
	}
	if got := fixed(1999, 4); got != "0.1999" {
		t.Errorf("fixed(1999, 4) = %q", got)
	}
	r := newRand(1)
	seen := map[int]int{}
	for range 100000 {
		v := r.NURand(1023, cID, 1, 3000)
		if v < 1 || v > 3000 {
			t.Fatalf("NURand(1023, 1, 3000) = %d", v)
		}
		seen[v]++
	}
	// NURand is skewed: the most drawn id comes far more often than uniform's 33.
	top := 0
	for _, c := range seen {
		top = max(top, c)
	}
	if top < 100 || len(seen) < 2500 {
		t.Errorf("NURand: top id drawn %d times, %d distinct ids; want a skewed draw over most ids", top, len(seen))
	}
	for range 1000 {
		s := r.Data()
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("data %q has %d characters, want 26 to 50", s, len(s))
		}
	}
}

// TestOnSQLite loads one warehouse, runs two terminals concurrently and
// checks TPC-C's consistency conditions, the mix, and that the check finds
// a broken condition.
func TestOnSQLite(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	p := workload.Params{Options: &Options{Warehouses: 1}, Seed: 5, Threads: []int{2}}
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "prepare postload tpcc consistency" {
		t.Fatalf("steps %q", got)
	}
	load, err := steps[0].Action(ctx, db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// 100k items, 100k stock, 10 districts, 30k customers and history rows,
	// 30k orders, 9k new orders, one warehouse, and 5-15 lines per order.
	fixedRows := int64(100_000 + 1 + 100_000 + 10 + 30_000 + 30_000 + 30_000 + 9_000)
	if lines := load.Rows - fixedRows; lines < 5*30_000 || lines > 15*30_000 {
		t.Fatalf("load: %d rows, so %d order lines; want 5 to 15 per order", load.Rows, lines)
	}
	var mu sync.Mutex
	var events, newOrders int64
	var wg sync.WaitGroup
	for id := range 2 {
		w, err := steps[2].NewWorker(ctx, db, id, 2, uint64(10+id))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			for range 1000 {
				tl, err := w.Op(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				events++
				newOrders += tl.Rows
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if share := float64(newOrders) / float64(events); share < 0.40 || share > 0.49 {
		t.Errorf("%d new orders committed in %d transactions (%.3f), want about 0.45 less 1%% rolled back", newOrders, events, share)
	}
	// Statements sent as text (prepared = false) do the same work.
	text, err := newTerminal(ctx, db, &Options{Warehouses: 1}, 0, 99, true)
	if err != nil {
		t.Fatal(err)
	}
	runOps(t, text, 200)
	if _, err := steps[3].Action(ctx, db, io.Discard); err != nil {
		t.Fatalf("consistency after the run: %v", err)
	}
	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(ctx, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 3"); err != nil {
		t.Fatal(err)
	}
	if err := Consistent(ctx, conn); err == nil || !strings.Contains(err.Error(), "w_ytd = sum(d_ytd)") {
		t.Errorf("a broken condition 1 went unseen: %v", err)
	}
}

// TestTwoWarehouses runs terminals of two warehouses on SQLite: New-Order
// lines supplied by the other warehouse and payments by its customers
// happen, and the consistency conditions hold.
func TestTwoWarehouses(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	steps, err := Suite{}.Plan(workload.Params{Options: &Options{Warehouses: 2}, Seed: 8, Threads: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		w, err := steps[2].NewWorker(ctx, db, id, 2, uint64(20+id))
		if err != nil {
			t.Fatal(err)
		}
		runOps(t, w, 800)
	}
	if _, err := steps[3].Action(ctx, db, io.Discard); err != nil {
		t.Fatalf("consistency: %v", err)
	}
	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for what, q := range map[string]string{
		"remote order lines": "SELECT count(*) FROM order_line WHERE ol_supply_w_id <> ol_w_id",
		"remote payments":    "SELECT count(*) FROM history WHERE h_c_w_id <> h_w_id",
		"remote stock":       "SELECT sum(s_remote_cnt) FROM stock",
	} {
		v, err := conn.Values(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if v[0][0] == "0" || v[0][0] == "" {
			t.Errorf("%s: none in 1600 transactions", what)
		}
	}
}

// openSQLite opens a SQLite database in WAL mode in a temp dir, closed when
// the test ends.
func openSQLite(t *testing.T) engine.DB {
	return enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite", Settings: map[string]string{"journal_mode": "wal"}})
}

// runOps runs n operations of w, which must all succeed, and closes it.
func runOps(t *testing.T, w workload.Worker, n int) {
	t.Helper()
	defer w.Close()
	for range n {
		if _, err := w.Op(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUnknownDialect refuses to spell the schema for a dialect the suite does
// not know.
func TestUnknownDialect(t *testing.T) {
	if _, err := schema(engine.Dialect{Name: "oracle"}); err == nil || !strings.Contains(err.Error(), `"oracle"`) {
		t.Errorf("got %v, want an error naming the dialect", err)
	}
}

// TestIsolationOption checks the isolation option: sysbench-tpcc's
// trx_level names and the SQL names are levels, anything else is an error
// naming workload.tpcc.isolation, and SQLite, whose transactions are all
// serializable, refuses another level rather than run at one it cannot set.
func TestIsolationOption(t *testing.T) {
	for in, want := range map[string]Isolation{"RC": ReadCommitted, "rr": RepeatableRead, "SER": Serializable,
		"read-committed": ReadCommitted, "Repeatable Read": RepeatableRead, "serializable": Serializable,
		"snapshot": IsolationUnknown, "read uncommitted": IsolationUnknown, "": IsolationUnknown} {
		if got := levelOf(in); got != want {
			t.Errorf("levelOf(%q) = %v, want %v", in, got, want)
		}
		err := Suite{}.Check(workload.Params{Options: &Options{Warehouses: 1, Isolation: in}})
		var fe *workload.FieldError
		switch {
		case want == IsolationUnknown && in != "":
			if !errors.As(err, &fe) || fe.Field != "tpcc.isolation" {
				t.Errorf("isolation %q: %v; want an error naming tpcc.isolation", in, err)
			}
		case err != nil:
			t.Errorf("isolation %q: %v", in, err)
		}
	}
	db := openSQLite(t)
	_, err := newTerminal(context.Background(), db, &Options{Warehouses: 1, Isolation: "rr"}, 0, 1, false)
	if err == nil || !strings.Contains(err.Error(), "SQLite runs every transaction serializable") {
		t.Errorf("rr on SQLite: %v; want a refusal", err)
	}
}
