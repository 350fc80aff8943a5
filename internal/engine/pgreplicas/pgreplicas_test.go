package pgreplicas_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/pgreplicas"
	"benchlab/internal/server/servertest"
)

// TestPromote starts a primary with two asynchronous streaming replicas,
// writes a row on the primary and waits until both replicas have it, reads
// both replicas' lag from pg_stat_replication, kills the primary, promotes
// replica 1 and writes through Connect, which now reaches the new
// primary; replica 2 follows the new primary (a slot on it, its
// primary_conninfo reloaded) and gets the new row. No server is left.
func TestPromote(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	tg := engine.Target{Name: "p", Engine: pgreplicas.Name, Getenv: getenv, Settings: map[string]string{
		"replicas": "2", "shared_buffers": "32MB"}}
	ctx := context.Background()
	d, _ := engine.Lookup(pgreplicas.Name)
	edb, err := d.Open(ctx, tg, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := edb.(*pgreplicas.DB)
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
	waitRow := func(node int, id string) {
		t.Helper()
		c, err := db.ConnectNode(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for try := 0; ; try++ {
			v, err := c.Values(ctx, "SELECT COUNT(*) FROM r WHERE id = "+id)
			if err == nil && len(v) == 1 && v[0][0] == "1" {
				return
			}
			if try == 3000 {
				t.Fatalf("node %d never got row %s (%v %v)", node+1, id, v, err)
			}
			db.ReplicaLags(ctx) // a pause between polls
		}
	}
	exec(0, "CREATE TABLE r (id INT PRIMARY KEY)")
	exec(0, "INSERT INTO r VALUES (1)")
	waitRow(1, "1")
	waitRow(2, "1")
	lags, err := db.ReplicaLags(ctx)
	if err != nil || len(lags) != 2 {
		t.Fatalf("lags %+v %v; want both replicas", lags, err)
	}
	for _, l := range lags {
		if l.ReplayBytes < 0 || l.SentBytes < 0 || l.Seconds < 0 || l.Transactions != -1 {
			t.Errorf("replica %d lag %+v: want bytes and seconds known, transactions unknown", l.Node, l)
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
	waitRow(2, "2")
}
