package mariadbreplicas

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// exec runs statements on node i as root; errors hide the password.
func (db *DB) exec(ctx context.Context, i int, qs ...string) error {
	for _, q := range qs {
		if _, err := db.roots[i].ExecContext(ctx, q); err != nil {
			pw := db.nodes[0].Password()
			return fmt.Errorf("node %d: %s: %s", i+1, server.RedactIn(q, pw), server.RedactIn(err.Error(), pw))
		}
	}
	return nil
}

// changeMaster points replica j at node p by GTID.
func (db *DB) changeMaster(ctx context.Context, j, p int) error {
	return db.exec(ctx, j, "STOP SLAVE", fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '%s', MASTER_PORT = %d, MASTER_USER = '%s', "+
		"MASTER_PASSWORD = '%s', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1", server.Host, db.nodes[p].Port, replUser,
		db.nodes[0].Password()), "START SLAVE")
}

// replicate starts replication from empty binlogs: each node forgets what
// its initialisation wrote (RESET MASTER), the primary gets the
// replication user, and each replica follows the primary from its first
// GTID.
func (db *DB) replicate(ctx context.Context) error {
	for i := range db.nodes {
		if err := db.exec(ctx, i, "RESET MASTER"); err != nil {
			return err
		}
	}
	if err := db.exec(ctx, 0,
		fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY '%s'", replUser, server.Host, db.nodes[0].Password()),
		fmt.Sprintf("GRANT REPLICATION SLAVE, REPLICATION SLAVE ADMIN ON *.* TO '%s'@'%s'", replUser, server.Host)); err != nil {
		return err
	}
	for j := 1; j < len(db.nodes); j++ {
		if err := db.exec(ctx, j, "SET GLOBAL gtid_slave_pos = ''"); err != nil {
			return err
		}
		if err := db.changeMaster(ctx, j, 0); err != nil {
			return err
		}
	}
	return nil
}

// value reads one text value as root on node i.
func (db *DB) value(ctx context.Context, i int, q string) (string, error) {
	var v sql.NullString
	if err := db.roots[i].QueryRowContext(ctx, q).Scan(&v); err != nil {
		return "", fmt.Errorf("node %d: %s: %w", i+1, q, err)
	}
	return v.String, nil
}

// slaveStatus is SHOW SLAVE STATUS on node i, by column name; nil when the
// node replicates from no one.
func (db *DB) slaveStatus(ctx context.Context, i int) (map[string]string, error) {
	rows, err := db.roots[i].QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, fmt.Errorf("node %d: SHOW SLAVE STATUS: %w", i+1, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for k := range vals {
		ptrs[k] = &vals[k]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cols))
	for k, c := range cols {
		out[c] = vals[k].String
	}
	return out, rows.Err()
}

// settle waits until every replica runs both replication threads and has
// applied every GTID the primary wrote (the benchmark database and user),
// within s.Catchup, and for semisync until the primary counts every
// replica as a semi-synchronous client. The error names the replicas
// behind and ends with their logs' tails.
func (db *DB) settle(ctx context.Context, s shape) error {
	deadline := time.Now().Add(s.Catchup)
	semiOn := false
	for {
		want, err := db.value(ctx, 0, "SELECT @@gtid_binlog_pos")
		if err != nil {
			return err
		}
		var behind []string
		for j := 1; j < len(db.nodes); j++ {
			st, err := db.slaveStatus(ctx, j)
			if err != nil {
				return err
			}
			got, err := db.value(ctx, j, "SELECT @@gtid_slave_pos")
			if err != nil {
				return err
			}
			if st["Slave_IO_Running"] != "Yes" || st["Slave_SQL_Running"] != "Yes" || got != want {
				behind = append(behind, fmt.Sprintf("replica %d (%s) did not apply the primary's GTIDs %s within %s (settings.%s): "+
					"at %q, IO thread %s, SQL thread %s, last error %q; its log %s ends:\n%s", j, db.nodes[j].Addr(), want, s.Catchup,
					engine.SettingCatchup, got, st["Slave_IO_Running"], st["Slave_SQL_Running"], st["Last_Error"]+st["Last_IO_Error"],
					db.nodes[j].LogPath, db.nodes[j].LogTail(10)))
			}
		}
		if len(behind) == 0 && s.semisync && !semiOn {
			// Semi-sync goes on once the replicas follow: before, the
			// setup's writes would each wait out the timeout. The IO
			// threads reconnect to ask for it.
			if err := db.exec(ctx, 0, "SET GLOBAL rpl_semi_sync_master_enabled = ON"); err != nil {
				return err
			}
			for j := 1; j < len(db.nodes); j++ {
				if err := db.exec(ctx, j, "STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD"); err != nil {
					return err
				}
			}
			semiOn = true
		}
		if len(behind) == 0 && s.semisync {
			n, err := db.value(ctx, 0, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS'")
			if err != nil {
				return err
			}
			if c, _ := strconv.Atoi(n); c < len(db.nodes)-1 {
				behind = append(behind, fmt.Sprintf("the primary counts %s semi-synchronous replicas of %d within %s (settings.%s)",
					n, len(db.nodes)-1, s.Catchup, engine.SettingCatchup))
			}
		}
		if len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s", strings.Join(behind, "\n"))
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// applyWait bounds how long a promotion waits for the replica to apply
// what it received from the dead primary.
const applyWait = 10 * time.Second

// settledFor is how long the applied GTID position must stay still, with
// the SQL thread at the end of its relay log, for a replica to count as
// having applied all it received: with parallel replication the
// coordinator reaches the end while its workers still apply.
const settledFor = 200 * time.Millisecond

// waitApplied waits until replica i has applied every transaction it
// received: its applied GTID position reaches the received one, or the
// replication threads stopped, or (a transaction the dead primary sent
// only in part never completes) the SQL thread is at the end of its relay
// log and the applied position has not moved for settledFor; applyWait
// bounds it.
func (db *DB) waitApplied(ctx context.Context, i int) error {
	deadline := time.Now().Add(applyWait)
	var last string
	var since time.Time
	for {
		st, err := db.slaveStatus(ctx, i)
		if err != nil {
			return fmt.Errorf("promote node %d: %w", i+1, err)
		}
		if st == nil || st["Slave_SQL_Running"] != "Yes" {
			return nil
		}
		applied, err := db.value(ctx, i, "SELECT @@gtid_slave_pos")
		if err != nil {
			return fmt.Errorf("promote node %d: %w", i+1, err)
		}
		if applied == st["Gtid_IO_Pos"] || time.Now().After(deadline) {
			return nil
		}
		if applied != last {
			last, since = applied, time.Now()
		} else if strings.Contains(st["Slave_SQL_Running_State"], "read all relay log") && time.Since(since) >= settledFor {
			return nil
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Promote makes replica i the primary: it first applies everything it
// received (relay log), then stops replicating, forgets its primary and
// takes writes (read_only off; semi-sync on when other replicas remain),
// and each other live replica follows it by GTID.
func (db *DB) Promote(ctx context.Context, i int) error {
	if i < 0 || i >= len(db.nodes) {
		return db.set.Check(i)
	}
	if err := db.waitApplied(ctx, i); err != nil {
		return err
	}
	// The followers are every live node but i and the old primary (dead,
	// or demoted by Switchover afterwards).
	old := db.Primary()
	var followers []int
	for j := range db.nodes {
		if j != i && j != old && !db.set.Killed(j) {
			followers = append(followers, j)
		}
	}
	others := len(followers)
	if db.semisync && old != i && !db.set.Killed(old) {
		others++ // a switchover's old primary will follow too
	}
	qs := []string{"STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF"}
	if db.semisync && others > 0 {
		qs = append(qs, "SET GLOBAL rpl_semi_sync_master_enabled = ON")
	}
	if err := db.exec(ctx, i, qs...); err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	db.writer.SetPrimary(i)
	for _, j := range followers {
		if err := db.changeMaster(ctx, j, i); err != nil {
			return fmt.Errorf("promote node %d: %w", i+1, err)
		}
	}
	return nil
}

// gtidSeq is the sequence number of domain 0 in a GTID position
// ("0-1-123,1-2-5"), -1 when absent.
func gtidSeq(pos string) int64 {
	for _, g := range strings.Split(pos, ",") {
		f := strings.Split(strings.TrimSpace(g), "-")
		if len(f) == 3 && f[0] == "0" {
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// ReplicaLags reads each live replica's SHOW SLAVE STATUS against the
// primary's binlog position: bytes of the primary's current binlog not
// yet received (sent, written and flushed alike: the IO thread's read
// position) and not yet applied (the SQL thread's), Seconds_Behind_Master,
// and the GTIDs not yet applied (domain 0).
func (db *DB) ReplicaLags(ctx context.Context) ([]engine.ReplicaLag, error) {
	p := db.Primary()
	var file string
	var pos int64
	row := db.roots[p].QueryRowContext(ctx, "SHOW MASTER STATUS")
	var doDB, ignoreDB sql.NullString
	if err := row.Scan(&file, &pos, &doDB, &ignoreDB); err != nil {
		return nil, fmt.Errorf("node %d: SHOW MASTER STATUS: %w", p+1, err)
	}
	head, err := db.value(ctx, p, "SELECT @@gtid_binlog_pos")
	if err != nil {
		return nil, err
	}
	var out []engine.ReplicaLag
	for j := range db.nodes {
		if j == p || db.set.Killed(j) {
			continue
		}
		st, err := db.slaveStatus(ctx, j)
		if err != nil || st == nil {
			continue
		}
		l := engine.ReplicaLag{Node: j, SentBytes: -1, WriteBytes: -1, FlushBytes: -1, ReplayBytes: -1, Seconds: -1, Transactions: -1}
		if st["Master_Log_File"] == file {
			if read, err := strconv.ParseInt(st["Read_Master_Log_Pos"], 10, 64); err == nil {
				l.SentBytes, l.WriteBytes, l.FlushBytes = pos-read, pos-read, pos-read
			}
		}
		if st["Relay_Master_Log_File"] == file {
			if exec, err := strconv.ParseInt(st["Exec_Master_Log_Pos"], 10, 64); err == nil {
				l.ReplayBytes = pos - exec
			}
		}
		if s, err := strconv.ParseFloat(st["Seconds_Behind_Master"], 64); err == nil {
			l.Seconds = s
		}
		if applied, err := db.value(ctx, j, "SELECT @@gtid_slave_pos"); err == nil {
			if a, h := gtidSeq(applied), gtidSeq(head); a >= 0 && h >= 0 {
				l.Transactions = max(0, h-a)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// Switchover moves the primary to replica i as planned: Connect fails
// while it runs; the old primary turns read_only and benchlab's sessions
// on it are ended, and i applies every GTID the old primary wrote and is
// promoted. The old primary follows no one until Rejoin.
func (db *DB) Switchover(ctx context.Context, i int) error {
	old, err := db.writer.StartSwitchover(Name, i, len(db.nodes), db.set.Killed)
	if err != nil {
		return err
	}
	defer db.writer.SetSwitching(false)
	if err := db.exec(ctx, old, "SET GLOBAL read_only = ON"); err != nil {
		return fmt.Errorf("switchover: %w", err)
	}
	rows, err := db.roots[old].QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'benchlab'")
	if err != nil {
		return fmt.Errorf("switchover: node %d: sessions: %w", old+1, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		db.roots[old].ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)) // a session may have ended since
	}
	// A killed session may still be ending its commit: the position to
	// wait for is read once they are all gone.
	for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); {
		n, err := db.value(ctx, old, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'benchlab'")
		if err != nil || n == "0" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	want, err := db.value(ctx, old, "SELECT @@gtid_binlog_pos")
	if err != nil {
		return fmt.Errorf("switchover: %w", err)
	}
	deadline := time.Now().Add(applyWait)
	for {
		got, err := db.value(ctx, i, "SELECT @@gtid_slave_pos")
		if err != nil {
			return fmt.Errorf("switchover: %w", err)
		}
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("switchover: node %d applied %q of the primary's %q within %s", i+1, got, want, applyWait)
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return db.Promote(ctx, i)
}

// Rejoin makes node old, the read-only primary a switchover left, follow
// the current primary by GTID from what it wrote itself: its data are
// kept. Its own primary side of semi-sync goes off first: with
// log_slave_updates a replica's applier commits through it, and with no
// replica of its own each commit would wait rpl_semi_sync_master_timeout
// (10 s) until semi-sync gave up, the replica meanwhile falling that far
// behind.
func (db *DB) Rejoin(ctx context.Context, old int) (engine.Rejoined, error) {
	if err := db.exec(ctx, old, "SET GLOBAL rpl_semi_sync_master_enabled = OFF", "SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos"); err != nil {
		return engine.Rejoined{}, fmt.Errorf("rejoin: %w", err)
	}
	return engine.Rejoined{}, db.changeMaster(ctx, old, db.Primary())
}
