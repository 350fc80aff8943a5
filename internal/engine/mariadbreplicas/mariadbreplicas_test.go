package mariadbreplicas_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/mariadbreplicas"
	"benchlab/internal/server/servertest"
)

// TestPromote runs enginetest.Promote on a primary with two asynchronous
// replicas (Open waited for their catch-up of the database): every lag
// figure, GTID transactions included, is known. No server is left
// afterwards.
func TestPromote(t *testing.T) {
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	tg := engine.Target{Name: "m", Engine: mariadbreplicas.Name, Getenv: getenv, Settings: map[string]string{
		"replicas": "2", "innodb_buffer_pool_size": "32M", "innodb_log_file_size": "16M", "performance_schema": "OFF"}}
	d, _ := engine.Lookup(mariadbreplicas.Name)
	edb, err := d.Open(context.Background(), tg, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := edb.(*mariadbreplicas.DB)
	defer func() {
		db.Close()
		servertest.NoProcs(t, dir)
	}()
	enginetest.Promote(t, db, func(l engine.ReplicaLag) bool {
		return l.ReplayBytes >= 0 && l.Transactions >= 0 && l.Seconds >= 0
	}, "bytes, transactions and seconds known")
}
