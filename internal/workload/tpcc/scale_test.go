package tpcc

import (
	"context"
	"io"
	"strconv"
	"sync"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccdoc"
	"benchlab/internal/workload/tpcc/tpccgen"
)

// TestScaleFactorOnSQLite loads one warehouse at scale factor 10 into
// SQLite and runs two terminals on it: the population is py-tpcc's at that
// factor, every key the terminals draw exists (a missing customer, item or
// last name fails the transaction), and the consistency conditions hold.
func TestScaleFactorOnSQLite(t *testing.T) {
	runScaled(t, openSQLite(t), 10, 400)
}

// TestScaleFactorOnPostgres does the same on a real PostgreSQL 15 at scale
// factor 100.
func TestScaleFactorOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	db := openServer(context.Background(), t, "postgres", map[string]string{"shared_buffers": "64MB"})
	defer db.Close()
	runScaled(t, db, 100, 300)
}

// runScaled loads one warehouse at scale factor f, checks the population,
// runs two terminals of ops transactions each and checks what they wrote
// stays within the population and keeps the consistency conditions.
func runScaled(t *testing.T, db engine.DB, f float64, ops int) {
	t.Helper()
	ctx := context.Background()
	o := &Options{Warehouses: 1, ScaleFactor: f}
	steps, err := Suite{}.Plan(workload.Params{Options: o, Seed: 7, Threads: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	sc := tpccgen.ScaleOf(f)
	c, _ := loadAndCount(ctx, t, db, steps[0])
	defer c.Close()
	count := func(q string) int {
		t.Helper()
		rows, err := c.Values(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		n, _ := strconv.Atoi(rows[0][0])
		return n
	}
	for q, want := range map[string]int{
		"SELECT count(*) FROM item":                              sc.Items,
		"SELECT count(*) FROM stock":                             sc.Items,
		"SELECT count(*) FROM customer":                          10 * sc.Customers,
		"SELECT count(*) FROM history":                           10 * sc.Customers,
		"SELECT count(*) FROM oorder":                            10 * sc.Orders(),
		"SELECT count(*) FROM new_order":                         10 * sc.NewOrders,
		"SELECT min(no_o_id) FROM new_order":                     sc.FirstNewOrder(),
		"SELECT max(d_next_o_id) FROM district":                  sc.Orders() + 1,
		"SELECT count(DISTINCT c_last) FROM customer":            min(sc.Customers, 1000),
		"SELECT count(*) FROM oorder WHERE o_carrier_id IS NULL": 10 * sc.NewOrders,
	} {
		if got := count(q); got != want {
			t.Errorf("after the load at scale factor %g: %s = %d, want %d", f, q, got, want)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var newOrders int64
	for id := range 2 {
		w, err := steps[2].NewWorker(ctx, db, id, 2, uint64(30+id))
		if err != nil {
			t.Fatal(err)
		}
		if got := w.(interface{ Facts() map[string]float64 }).Facts()[tpccdoc.FactScaleFactor]; got != f {
			t.Errorf("terminal's %s fact = %g, want %g", tpccdoc.FactScaleFactor, got, f)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			for range ops {
				tl, err := w.Op(ctx)
				if err != nil {
					t.Errorf("at scale factor %g: %v", f, err)
					return
				}
				mu.Lock()
				newOrders += tl.Rows
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if newOrders == 0 {
		t.Fatalf("no New-Order committed in %d transactions", 2*ops)
	}
	// Keys drawn within the population: no line of an item past the last,
	// no payment by a customer past the district's last.
	for q, limit := range map[string]int{
		"SELECT max(ol_i_id) FROM order_line": sc.Items,
		"SELECT max(h_c_id) FROM history":     sc.Customers,
		"SELECT max(o_c_id) FROM oorder":      sc.Customers,
	} {
		if got := count(q); got > limit {
			t.Errorf("after the run at scale factor %g: %s = %d, past %d", f, q, got, limit)
		}
	}
	if got := count("SELECT count(*) FROM oorder"); got != 10*sc.Orders()+int(newOrders) {
		t.Errorf("%d orders after %d committed New-Orders on %d loaded", got, newOrders, 10*sc.Orders())
	}
	if _, err := steps[3].Action(ctx, db, io.Discard); err != nil {
		t.Fatalf("consistency after the run at scale factor %g: %v", f, err)
	}
}
