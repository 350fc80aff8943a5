package pgreplicas

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server/servertest"
)

// TestRejoin switches a primary with one replica over, writes on the new
// primary and rejoins the old one: by pg_rewind on its own data dir (the
// dir and the table's file keep their inodes), then, switched back, the
// other node likewise; and, with wal_log_hints off, which pg_rewind
// refuses, by a new base backup that says why. Either way the rejoined
// replica replays every write the primaries acknowledged. No server is
// left.
func TestRejoin(t *testing.T) {
	for _, c := range []struct {
		name  string
		hints string // wal_log_hints; "" leaves benchlab's default
	}{{"rewind", ""}, {"fallback", "off"}} {
		t.Run(c.name, func(t *testing.T) {
			getenv, _ := servertest.Env(t)
			dir := t.TempDir()
			set := map[string]string{"replicas": "1", "shared_buffers": "32MB"}
			if c.hints != "" {
				set["wal_log_hints"] = c.hints
			}
			edb, err := Driver{}.Open(context.Background(), engine.Target{Name: "p", Engine: Name, Getenv: getenv, Settings: set}, dir)
			if err != nil {
				t.Fatal(err)
			}
			db := edb.(*DB)
			defer func() {
				db.Close()
				servertest.NoProcs(t, dir)
			}()
			rewind := c.hints == ""
			info, err := db.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if way := info.Settings["benchlab.rejoin"]; strings.HasPrefix(way, "pg_rewind") != rewind {
				t.Errorf("manifest's benchlab.rejoin %q; want pg_rewind first: %v", way, rewind)
			}
			if hints := info.Settings["wal_log_hints"]; (hints == "on") != rewind {
				t.Errorf("manifest's wal_log_hints %q; want on: %v", hints, rewind)
			}
			r := rejoinRig{t: t, db: db}
			r.exec(0, "CREATE TABLE acked (id INT PRIMARY KEY, pad TEXT)")
			r.write(0, 1, 500)
			file := r.value(0, "SELECT pg_relation_filepath('acked')")
			before := [2]uint64{inode(t, db.set.At(0).DataDir), inode(t, filepath.Join(db.set.At(0).DataDir, file))}
			r.switchAndRejoin(0, 1, rewind)
			r.write(1, 501, 1000)
			r.caughtUp(0, 1000)
			after := [2]uint64{inode(t, db.set.At(0).DataDir), inode(t, filepath.Join(db.set.At(0).DataDir, file))}
			if !rewind {
				return // the copy's inodes may reuse the removed dir's numbers
			}
			if after != before {
				t.Errorf("node 1's data dir and table file inodes %v before, %v after the rejoin; want them kept", before, after)
			}
			r.switchAndRejoin(1, 0, true)
			r.write(0, 1001, 1500)
			r.caughtUp(1, 1500)
		})
	}
}

// rejoinRig drives TestRejoin's cluster.
type rejoinRig struct {
	t  *testing.T
	db *DB
}

// exec runs q on node i.
func (r rejoinRig) exec(i int, q string) {
	r.t.Helper()
	c, err := r.db.ConnectNode(context.Background(), i)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(context.Background(), q); err != nil {
		r.t.Fatalf("node %d: %s: %v", i+1, q, err)
	}
}

// value reads one value on node i.
func (r rejoinRig) value(i int, q string) string {
	r.t.Helper()
	c, err := r.db.ConnectNode(context.Background(), i)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Values(context.Background(), q)
	if err != nil || len(v) != 1 || len(v[0]) != 1 {
		r.t.Fatalf("node %d: %s: %v %v", i+1, q, v, err)
	}
	return v[0][0]
}

// write inserts rows lo to hi on node i, each acknowledged.
func (r rejoinRig) write(i, lo, hi int) {
	r.t.Helper()
	r.exec(i, fmt.Sprintf("INSERT INTO acked SELECT g, repeat('x', 200) FROM generate_series(%d, %d) g", lo, hi))
}

// switchAndRejoin moves the primary from node from to node to and
// rejoins from, checking how (rewound: its data kept).
func (r rejoinRig) switchAndRejoin(from, to int, rewound bool) {
	r.t.Helper()
	ctx := context.Background()
	if err := r.db.Switchover(ctx, to); err != nil {
		r.t.Fatal(err)
	}
	how, err := r.db.Rejoin(ctx, from)
	if err != nil {
		r.t.Fatal(err)
	}
	if rewound && (how.Copied || how.Fallback != "") {
		r.t.Errorf("node %d rejoined %+v; want by pg_rewind, its data kept", from+1, how)
	}
	if !rewound && (!how.Copied || !strings.Contains(how.Fallback, "wal_log_hints")) {
		r.t.Errorf("node %d rejoined %+v; want a copy, as pg_rewind refused a node without wal_log_hints", from+1, how)
	}
	if got := r.value(from, "SELECT pg_is_in_recovery()::text"); got != "true" {
		r.t.Errorf("node %d in recovery: %s; want a replica", from+1, got)
	}
}

// caughtUp waits until node i has replayed the primary's WAL as of now,
// then checks it has rows 1 to n, every acknowledged write.
func (r rejoinRig) caughtUp(i, n int) {
	r.t.Helper()
	lsn := r.value(r.db.Primary(), "SELECT pg_current_wal_lsn()::text")
	for try := 0; r.value(i, "SELECT (pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn)::text") != "true"; try++ {
		if try == 3000 {
			r.t.Fatalf("node %d never replayed the primary's WAL up to %s", i+1, lsn)
		}
	}
	want := fmt.Sprintf("%d %d %d", n, 1, n)
	if got := r.value(i, "SELECT count(*) || ' ' || min(id) || ' ' || max(id) FROM acked"); got != want {
		r.t.Errorf("node %d has rows (count min max) %s; want %s", i+1, got, want)
	}
}

// inode is path's inode number.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
