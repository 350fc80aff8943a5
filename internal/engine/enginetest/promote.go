package enginetest

import (
	"context"
	"fmt"
	"testing"

	"benchlab/internal/engine"
)

// Replicas is what the promotion scenario needs of a primary with
// replicas: its nodes, promotion and lag views, and its liveness.
type Replicas interface {
	engine.Promoter
	engine.Lagger
	engine.Liveness
}

// Promote runs the promotion scenario on db, a primary (node 0) with two
// replicas opened by the caller: a row written on the primary reaches
// both replicas (replication is asynchronous: each read waits on the
// previous lag reading, not a sleep), both replicas' lag reads as lagOK
// says (why names what it wants), then the primary is killed, replica 1
// promoted, a row written through Connect (which now reaches it) and
// replica 2, following the new primary, gets that row too.
func Promote(t *testing.T, db Replicas, lagOK func(engine.ReplicaLag) bool, why string) {
	t.Helper()
	ctx := context.Background()
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
	waitRow := func(node, id int) {
		t.Helper()
		c, err := db.ConnectNode(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		q := fmt.Sprintf("SELECT COUNT(*) FROM r WHERE id = %d", id)
		for try := 0; ; try++ {
			v, err := c.Values(ctx, q)
			if err == nil && len(v) == 1 && v[0][0] == "1" {
				return
			}
			if try == 3000 {
				t.Fatalf("node %d never got row %d (%v %v)", node+1, id, v, err)
			}
			db.ReplicaLags(ctx) // a pause between polls, as long as the server takes
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
		if !lagOK(l) {
			t.Errorf("replica %d lag %+v: want %s", l.Node, l, why)
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
