package mariadbreplicas_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mariadbreplicas"
	"benchlab/internal/server/servertest"
)

// TestPromote starts a primary with two asynchronous replicas, writes a
// row on the primary, checks every replica has it (Open waited for their
// catch-up of the database; the row is waited for through the lag view),
// kills the primary, promotes replica 1 and writes through Connect, which
// now reaches the new primary; replica 2 follows it and gets the new row.
// No server is left afterwards.
func TestPromote(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	tg := engine.Target{Name: "m", Engine: mariadbreplicas.Name, Getenv: getenv, Settings: map[string]string{
		"replicas": "2", "innodb_buffer_pool_size": "32M", "innodb_log_file_size": "16M", "performance_schema": "OFF"}}
	ctx := context.Background()
	d, _ := engine.Lookup(mariadbreplicas.Name)
	edb, err := d.Open(ctx, tg, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := edb.(*mariadbreplicas.DB)
	defer func() {
		db.Close()
		servertest.NoProcs(t, dir)
	}()
	exec := func(node int, q string) {
		t.Helper()
		c, err := db.ConnectNode(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("node %d: %s: %v", node+1, q, err)
		}
	}
	// waitRow waits until node has row id: replication is asynchronous.
	waitRow := func(node, id int) {
		t.Helper()
		c, err := db.ConnectNode(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for try := 0; ; try++ {
			v, err := c.Values(ctx, "SELECT COUNT(*) FROM r WHERE id = ?", id)
			if err == nil && len(v) == 1 && v[0][0] == "1" {
				return
			}
			if try == 3000 {
				t.Fatalf("node %d never got row %d (%v %v)", node+1, id, v, err)
			}
			lags, _ := db.ReplicaLags(ctx) // also a pause between polls
			_ = lags
		}
	}
	exec(0, "CREATE TABLE r (id INT PRIMARY KEY)")
	exec(0, "INSERT INTO r VALUES (1)")
	waitRow(1, 1)
	waitRow(2, 1)
	lags, err := db.ReplicaLags(ctx)
	if err != nil || len(lags) != 2 {
		t.Fatalf("lags %+v %v; want both replicas", lags, err)
	}
	for _, l := range lags {
		if l.ReplayBytes < 0 || l.Transactions < 0 || l.Seconds < 0 {
			t.Errorf("replica %d lag %+v: want bytes, transactions and seconds known", l.Node, l)
		}
	}
	if err := db.KillNode(0); err != nil {
		t.Fatal(err)
	}
	if err := db.Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if db.Primary() != 1 || db.Died() != nil {
		t.Fatalf("primary %d, died %v; want node 2 and alive", db.Primary()+1, db.Died())
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO r VALUES (2)"); err != nil {
		t.Fatalf("write on the promoted replica: %v", err)
	}
	c.Close()
	waitRow(2, 2)
}
