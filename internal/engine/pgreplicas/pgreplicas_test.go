package pgreplicas_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/pgreplicas"
	"benchlab/internal/server/servertest"
)

// TestPromote runs enginetest.Promote on a primary with two asynchronous
// streaming replicas: their lag, from pg_stat_replication, has bytes and
// seconds but no transaction count; replica 2 follows the new primary by
// a slot on it and its primary_conninfo reloaded. No server is left.
func TestPromote(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	tg := engine.Target{Name: "p", Engine: pgreplicas.Name, Getenv: getenv, Settings: map[string]string{
		"replicas": "2", "shared_buffers": "32MB"}}
	d, _ := engine.Lookup(pgreplicas.Name)
	edb, err := d.Open(context.Background(), tg, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := edb.(*pgreplicas.DB)
	defer func() {
		db.Close()
		servertest.NoProcs(t, dir)
	}()
	enginetest.Promote(t, db, func(l engine.ReplicaLag) bool {
		return l.ReplayBytes >= 0 && l.SentBytes >= 0 && l.Seconds >= 0 && l.Transactions == -1
	}, "bytes and seconds known, transactions unknown")
}
