package pgreplicas

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

// settle waits until every replica streams from the primary and has
// replayed everything the primary wrote so far (the benchmark database),
// within s.Catchup; then, for sync replication, names the replicas in
// synchronous_standby_names (ANY 1 of them) and waits until the primary
// counts them. A replica that does not catch up fails the open with its
// log's tail.
func (db *DB) settle(ctx context.Context, s shape) error {
	c, err := db.ConnectNode(ctx, 0)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Values(ctx, "SELECT pg_current_wal_lsn()::text")
	if err != nil || len(v) != 1 {
		return fmt.Errorf("primary's WAL position: %v %w", v, err)
	}
	lsn := v[0][0]
	caughtUp := "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming' AND replay_lsn >= '" + lsn + "'::pg_lsn"
	if err := db.waitReplicas(ctx, c, caughtUp, s.Catchup, "replay the primary's writes up to "+lsn); err != nil {
		return err
	}
	if !s.sync {
		return nil
	}
	names := make([]string, len(db.nodes)-1)
	for i := range names {
		names[i] = slotName(i + 1)
	}
	for _, q := range []string{
		fmt.Sprintf("ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (%s)'", strings.Join(names, ", ")),
		"SELECT pg_reload_conf()",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("sync replication: %s: %w", q, err)
		}
	}
	return db.waitReplicas(ctx, c, "SELECT application_name FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')",
		s.Catchup, "become a synchronous standby")
}

// waitReplicas polls query (on the primary, naming replicas) until it
// names every replica or limit passes; the error names the replicas
// missing and ends with their logs' tails.
func (db *DB) waitReplicas(ctx context.Context, c engine.Conn, query string, limit time.Duration, what string) error {
	deadline := time.Now().Add(limit)
	for {
		rows, err := c.Values(ctx, query)
		if err != nil {
			return fmt.Errorf("pg_stat_replication: %w", err)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r[0]] = true
		}
		var missing []int
		p := db.Primary()
		for i := range db.nodes {
			if i != p && !db.set.Killed(i) && !seen[slotName(i)] {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			var b strings.Builder
			for _, i := range missing {
				in := db.set.At(i)
				fmt.Fprintf(&b, "replica %d (%s) did not %s within %s (settings.%s); its log %s ends:\n%s\n",
					i, in.Addr(), what, limit, engine.SettingCatchup, in.LogPath, in.LogTail(10))
			}
			return fmt.Errorf("%s", strings.TrimSpace(b.String()))
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// Promote makes replica i the primary: pg_promote waits until it takes
// writes; each other live replica then gets a slot on it and follows it
// (primary_conninfo reloaded; recovery follows the new timeline). The
// promoted replica has no synchronous standby names: until a replica
// follows it, its commits wait for no one.
func (db *DB) Promote(ctx context.Context, i int) error {
	if i < 0 || i >= len(db.nodes) {
		return db.set.Check(i)
	}
	c, err := db.ConnectNode(ctx, i)
	if err != nil {
		return fmt.Errorf("promote node %d: %w", i+1, err)
	}
	defer c.Close()
	v, err := c.Values(ctx, "SELECT pg_promote(true, 60)")
	if err != nil || len(v) != 1 || v[0][0] != "t" {
		return fmt.Errorf("promote node %d: pg_promote: %v %w", i+1, v, err)
	}
	db.mu.Lock()
	old := db.writer.SetPrimary(i)
	if db.lagConn != nil {
		db.lagConn.Close()
		db.lagConn = nil
	}
	db.mu.Unlock()
	// The followers are every live node but i and the old primary (dead,
	// or rebuilt by Switchover afterwards).
	for j := range db.nodes {
		if j == i || j == old || db.set.Killed(j) {
			continue
		}
		if _, err := c.Exec(ctx, fmt.Sprintf("SELECT pg_create_physical_replication_slot('%s')", slotName(j))); err != nil &&
			!strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("promote node %d: slot for replica %d: %w", i+1, j, err)
		}
		if err := db.follow(ctx, j, i); err != nil {
			return err
		}
	}
	return nil
}

// follow points replica j at node p, the new primary.
func (db *DB) follow(ctx context.Context, j, p int) error {
	c, err := db.ConnectNode(ctx, j)
	if err != nil {
		return fmt.Errorf("replica %d: follow node %d: %w", j, p+1, err)
	}
	defer c.Close()
	info := postgres.Conninfo(db.set.At(p).Port, db.password, slotName(j))
	for _, q := range []string{"ALTER SYSTEM SET primary_conninfo = '" + info + "'", "SELECT pg_reload_conf()"} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("replica %d: follow node %d: %w", j, p+1, err)
		}
	}
	return nil
}

// lagQuery reads each replica's lag on the primary: bytes between the
// primary's WAL position and the replica's sent, written, flushed and
// replayed positions (-1 while unknown), and replay_lag in seconds (0
// when idle: PostgreSQL clears it when nothing is left to replay).
const lagQuery = `SELECT application_name,
  COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), sent_lsn), -1)::bigint,
  COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), write_lsn), -1)::bigint,
  COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn), -1)::bigint,
  COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1)::bigint,
  COALESCE(EXTRACT(epoch FROM replay_lag), 0)::float8
FROM pg_stat_replication`

// ReplicaLags reads pg_stat_replication on the current primary.
func (db *DB) ReplicaLags(ctx context.Context) ([]engine.ReplicaLag, error) {
	db.mu.Lock()
	c := db.lagConn
	db.mu.Unlock()
	if c == nil {
		var err error
		if c, err = db.Connect(ctx); err != nil {
			return nil, err
		}
		db.mu.Lock()
		db.lagConn = c
		db.mu.Unlock()
	}
	rows, err := c.Values(ctx, lagQuery)
	if err != nil {
		db.mu.Lock()
		if db.lagConn == c {
			db.lagConn = nil
		}
		db.mu.Unlock()
		c.Close()
		return nil, err
	}
	out := make([]engine.ReplicaLag, 0, len(rows))
	for _, r := range rows {
		n, err := strconv.Atoi(strings.TrimPrefix(r[0], "replica"))
		if err != nil || len(r) != 6 {
			continue // not one of benchlab's replicas
		}
		l := engine.ReplicaLag{Node: n, Transactions: -1}
		for k, p := range []*int64{&l.SentBytes, &l.WriteBytes, &l.FlushBytes, &l.ReplayBytes} {
			*p, _ = strconv.ParseInt(r[1+k], 10, 64)
		}
		l.Seconds, _ = strconv.ParseFloat(r[5], 64)
		out = append(out, l)
	}
	return out, nil
}

// Switchover moves the primary to replica i as planned: Connect fails
// while it runs; the old primary shuts down cleanly (its WAL sender
// sends everything to the replicas first), and i replays it all and is
// promoted. The old primary stays down until Rejoin.
func (db *DB) Switchover(ctx context.Context, i int) error {
	old, err := db.writer.StartSwitchover(Name, i, len(db.nodes), db.set.Killed)
	if err != nil {
		return err
	}
	switched := false
	defer func() {
		if !switched {
			db.writer.SetSwitching(false)
		}
	}()
	db.mu.Lock()
	if db.lagConn != nil {
		db.lagConn.Close()
		db.lagConn = nil
	}
	db.mu.Unlock()
	// A checkpoint first makes the shutdown's own checkpoint short.
	if c, err := db.ConnectNode(ctx, old); err == nil {
		c.Exec(ctx, "CHECKPOINT") // a failure only makes the stop slower
		c.Close()
	}
	oldIn := db.set.At(old)
	if err := oldIn.Stop(); err != nil {
		return fmt.Errorf("switchover: stop node %d: %w", old+1, err)
	}
	db.setStopped(old)
	if err := db.Promote(ctx, i); err != nil {
		return fmt.Errorf("switchover: %w", err)
	}
	db.writer.SetSwitching(false)
	switched = true
	return nil
}

// Rejoin makes node old, which a switchover stopped cleanly, a replica
// of the current primary on its own data dir, rewound by pg_rewind
// (rewound), and waits until it streams. When either fails (a node that
// ran without wal_log_hints, say, or WAL it needs already gone from the
// new primary), it rebuilds old by a new base backup instead and says
// why (Rejoined.Fallback, and the new node's log).
func (db *DB) Rejoin(ctx context.Context, old int) (engine.Rejoined, error) {
	var how engine.Rejoined
	i := db.Primary()
	c, err := db.ConnectNode(ctx, i)
	if err != nil {
		return how, fmt.Errorf("rejoin: %w", err)
	}
	defer c.Close()
	slot := slotName(old)
	drop := func() error {
		_, err := c.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"+slot+"'")
		if err != nil {
			return fmt.Errorf("rejoin: drop slot %s: %w", slot, err)
		}
		return nil
	}
	streams := func(in *server.Instance) error {
		db.set.Replace(old, in)
		db.mu.Lock()
		db.extra = append(db.extra, in)
		delete(db.stopped, old)
		db.mu.Unlock()
		return db.waitReplicas(ctx, c, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'", db.catchup,
			"stream from the new primary after the switchover")
	}
	if err := drop(); err != nil {
		return how, err
	}
	in, err := db.rewound(ctx, c, old, i)
	if err == nil {
		if err = streams(in); err == nil {
			return how, nil
		}
		in.Stop()
		os.RemoveAll(in.DataDir)
	}
	how = engine.Rejoined{Copied: true, Fallback: err.Error()}
	if err := drop(); err != nil { // the rewind's slot
		return how, err
	}
	if in, err = db.rebuild(ctx, old, i); err != nil {
		return how, err
	}
	in.Logf("rejoin: the rewound data dir did not serve, so this replica is a new base backup: %s", how.Fallback)
	return how, streams(in)
}

// rewound starts node j on its stopped server's data dir, rewound by
// pg_rewind, as a replica of node p (c reaches p). Its slot on p
// reserves WAL before p's checkpoint, which pg_rewind needs: only a
// checkpoint after the promotion writes p's new timeline to its control
// file, where pg_rewind reads it. A failed start leaves nothing of the
// old data dir.
func (db *DB) rewound(ctx context.Context, c engine.Conn, j, p int) (*server.Instance, error) {
	slot := slotName(j)
	for _, q := range []string{"SELECT pg_create_physical_replication_slot('" + slot + "', true)", "CHECKPOINT"} {
		if _, err := c.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("rejoin: node %d: %s: %w", p+1, q, err)
		}
	}
	from := db.set.At(j).DataDir
	in, dir, err := db.launchNode(ctx, j, postgres.RewoundFlavor(db.set.At(p), slot, from))
	if err != nil {
		// Whether or not it was moved, the old data dir may be rewound
		// half-way: a base backup replaces it.
		os.RemoveAll(from)
		os.RemoveAll(filepath.Join(dir, "data"))
		return nil, err
	}
	return in, nil
}

// rebuild starts node j afresh as a replica of node p, by a base backup,
// in a new dir.
func (db *DB) rebuild(ctx context.Context, j, p int) (*server.Instance, error) {
	in, _, err := db.launchNode(ctx, j, postgres.StandbyFlavor(db.set.At(p), slotName(j)))
	return in, err
}

// launchNode starts node j with flavor f in a new dir of the run's dir,
// which it returns.
func (db *DB) launchNode(ctx context.Context, j int, f server.Flavor) (*server.Instance, string, error) {
	db.mu.Lock()
	db.generation++
	gen := db.generation
	db.mu.Unlock()
	name := fmt.Sprintf("%s-%d", nodeName(j), gen)
	dir := filepath.Join(db.dir, name)
	cfg, err := server.TargetConfig(postgres.Flavor, Name, nodeTarget(db.target, name), dir)
	if err != nil {
		return nil, dir, err
	}
	cfg.Flavor, cfg.Password = f, db.password
	// The server lives as long as the DB (Close stops it), not as long
	// as the switch that started it.
	in, err := server.Launch(context.WithoutCancel(ctx), cfg, postgres.Probe)
	if err != nil {
		return nil, dir, fmt.Errorf("rejoin: start node %d as a replica: %w", j+1, err)
	}
	return in, dir, nil
}

// rejoinWay says, for the manifest, how a primary a switchover stopped
// rejoins on target t: pg_rewind refuses a node without wal_log_hints
// (benchlab's nodes have no data checksums).
func rejoinWay(t engine.Target) string {
	if v, ok := t.Setting("wal_log_hints"); ok {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`)) {
		case "off", "false", "no", "0":
			return "pg_basebackup (pg_rewind needs wal_log_hints on)"
		}
	}
	return "pg_rewind, else pg_basebackup"
}

// nodeTarget is node name's target: t's settings less benchlab's own,
// with wal_log_hints on unless t sets it, so that pg_rewind can rewind a
// primary a switchover stopped.
func nodeTarget(t engine.Target, name string) engine.Target {
	nt := engine.ReplicaNodeTarget(t, name)
	if _, ok := t.Setting("wal_log_hints"); !ok {
		nt.Settings["wal_log_hints"] = "on"
	}
	return nt
}

// setStopped marks node j as stopped on purpose: Promote leaves it out.
func (db *DB) setStopped(j int) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.stopped == nil {
		db.stopped = map[int]bool{}
	}
	db.stopped[j] = true
}
