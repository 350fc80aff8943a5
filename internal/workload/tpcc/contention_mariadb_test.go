package tpcc

import (
	"context"
	"io"
	"testing"
	"time"

	_ "benchlab/internal/engine/mysql"
	"benchlab/internal/runner"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// TestContentionMariaDB runs TPC-C on a real MariaDB 10.11 at REPEATABLE
// READ (set on each terminal's session by the isolation option) with 8
// terminals on 1 warehouse for a few seconds, where New-Order, Payment and
// Delivery write the same district and warehouse rows. With InnoDB's
// default locking those transactions wait for each other and none fails
// (the stock rows are locked in item order, so New-Orders do not deadlock:
// 1291 committed, 0 retries, when this test was written); with
// innodb_snapshot_isolation = ON (MariaDB's write-write conflict check at
// REPEATABLE READ, the default from 11.6) a transaction that writes a row
// changed since its snapshot fails with error 1020, as PostgreSQL's
// serialization failures. Those are rolled back and run again (max_tries,
// default 10): retries are counted, the transactions that still failed are
// errors and not events, every event is a committed transaction of one of
// the five kinds, tpmC counts the New-Orders the database committed, the
// committed mix is the standard one, and the consistency conditions hold
// (retries must not turn conflicts into lost or doubled work).
func TestContentionMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and loads a warehouse")
	}
	ctx := context.Background()
	db := openServer(ctx, t, "mariadb", map[string]string{"innodb_buffer_pool_size": "256M", "innodb_snapshot_isolation": "ON"})
	defer db.Close()
	const terminals = 8
	steps, err := Suite{}.Plan(workload.Params{Options: &Options{Warehouses: 1, Isolation: "rr"}, Seed: 7,
		Threads: []int{terminals}, WriteTime: 5 * time.Second, PostwriteWait: 0})
	if err != nil {
		t.Fatal(err)
	}
	c, orders := loadAndCount(ctx, t, db, steps[0])
	defer c.Close()
	before := orders()
	r, err := runner.Measure(ctx, db, steps[2], terminals, 11, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	committed := orders() - before
	var ops, errs, kindRetries float64
	for _, k := range Kinds {
		ops += r.Facts[k+"_ops"]
		errs += r.Facts[k+"_errors"]
		kindRetries += r.Facts[k+"_retries"]
	}
	shares, departs := CommittedMix(r.Facts)
	t.Logf("mariadb, %d terminals, 1 warehouse: %d committed, %d failed, %v retries in %v transactions, %.0f tpmC; "+
		"%d New-Orders counted, %d committed in the database; mix %.1f; errors %q",
		terminals, r.Events, r.Errors, r.Facts[store.FactRetries], r.Facts[store.FactRetried], r.Throughput(), r.Rows,
		committed, shares, r.ErrorSamples)
	if Isolation(r.Facts[FactIsolation]) != RepeatableRead {
		t.Errorf("session isolation %v, want repeatable read", Isolation(r.Facts[FactIsolation]))
	}
	if r.Facts[store.FactRetries] == 0 || r.Facts[store.FactRetried] == 0 || kindRetries != r.Facts[store.FactRetries] {
		t.Errorf("retries %v in %v transactions, per kind %v; want conflicts retried and counted",
			r.Facts[store.FactRetries], r.Facts[store.FactRetried], kindRetries)
	}
	if r.Errors*100 > r.Events {
		t.Errorf("%d of %d transactions failed after 10 tries; want under 1%%", r.Errors, r.Events)
	}
	if ops != float64(r.Events) || errs != float64(r.Errors) {
		t.Errorf("kinds' ops %v and errors %v; want the %d committed transactions and the %d failed, apart",
			ops, errs, r.Events, r.Errors)
	}
	if committed < r.Rows || committed > r.Rows+terminals {
		t.Errorf("tpmC counted %d New-Orders; the database committed %d (want the same, plus at most one per terminal finishing after the end)",
			r.Rows, committed)
	}
	if departs != "" {
		t.Errorf("committed mix departs from the standard one: %s", departs)
	}
	if _, err := steps[3].Action(ctx, db, io.Discard); err != nil {
		t.Errorf("consistency after the run: %v", err)
	}
}
