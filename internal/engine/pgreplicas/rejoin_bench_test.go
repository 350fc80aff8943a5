package pgreplicas

import (
	"context"
	"fmt"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server/servertest"
)

// BenchmarkRejoin times Rejoin after a switchover on a primary with one
// replica holding about 300 MB (a table of 500,000 rows of 500 bytes):
// by pg_rewind, and by a base backup (wal_log_hints off, which pg_rewind
// refuses). Each op switches the primary to the other node (not timed)
// and rejoins the old one. Run it with -bench Rejoin -benchtime 3x.
func BenchmarkRejoin(b *testing.B) {
	for _, c := range []struct{ name, hints string }{{"rewind", "on"}, {"basebackup", "off"}} {
		b.Run(c.name, func(b *testing.B) {
			logs, dir := b.TempDir(), b.TempDir()
			getenv := func(k string) string {
				if k == "BENCHLAB_SERVER_LOGS" {
					return logs
				}
				return ""
			}
			set := map[string]string{"replicas": "1", "shared_buffers": "128MB", "wal_log_hints": c.hints, "max_wal_size": "2GB"}
			edb, err := Driver{}.Open(context.Background(), engine.Target{Name: "p", Engine: Name, Getenv: getenv, Settings: set}, dir)
			if err != nil {
				b.Fatal(err)
			}
			db := edb.(*DB)
			defer func() {
				db.Close()
				if left := servertest.Procs(dir); len(left) > 0 {
					b.Errorf("processes left under %s: %v", dir, left)
				}
			}()
			ctx := context.Background()
			pc, err := db.ConnectNode(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			_, err = pc.Exec(ctx, "CREATE TABLE big AS SELECT g AS id, repeat('x', 500) AS pad FROM generate_series(1, 500000) g")
			pc.Close()
			if err != nil {
				b.Fatal(err)
			}
			if err := db.waitReplicas(ctx, mustConn(b, db, 0), "SELECT application_name FROM pg_stat_replication "+
				"WHERE replay_lsn >= pg_current_wal_lsn()", db.catchup, "replay the load"); err != nil {
				b.Fatal(err)
			}
			bytes, err := engine.DirBytes(db.set.At(0).DataDir)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				old := db.Primary()
				if err := db.Switchover(ctx, 1-old); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				how, err := db.Rejoin(ctx, old)
				if err != nil {
					b.Fatal(err)
				}
				if how.Copied != (c.hints == "off") {
					b.Fatalf("rejoined %+v", how)
				}
			}
			b.ReportMetric(float64(bytes)/1e6, "datadir_MB") // after ResetTimer, which drops it

		})
	}
}

// mustConn is a connection to node i, closed when b ends.
func mustConn(b *testing.B, db *DB, i int) engine.Conn {
	c, err := db.ConnectNode(context.Background(), i)
	if err != nil {
		b.Fatal(fmt.Errorf("node %d: %w", i+1, err))
	}
	b.Cleanup(func() { c.Close() })
	return c
}
