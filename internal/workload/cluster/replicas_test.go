package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
	"benchlab/internal/workload/cluster"
)

// replicaSpec is every scenario of a primary with one replica (engine,
// replication mode, and the engine's own small memory settings) in one
// run, so that the cluster starts once: stale-read, replica-lag, a
// switchover at 1.5 s and back, then failover, the primary killed 1.5 s
// in and the replica promoted. The steps last 9.5 s: on the busy test
// machine a switch and the old primary's rejoin have taken 1.5 to 6 s
// on PostgreSQL (pg_rewind) and 0.2 s on MariaDB, and a PostgreSQL
// promotion after a kill mostly 0.1 to 0.5 s but now and then 5.2 to
// 5.7 s, which must end within the step (at 9 s).
const replicaSpec = `name = "replicas"
workdir = %q
[[target]]
name = "pr"
engine = %q
[target.settings]
replicas = 1
replication = %q
%s
[workload]
suite = "cluster"
tests = ["stale-read", "replica-lag", "switchover", "failover"]
threads = [2]
write_time = "9s"
warmup = "500ms"
report_interval = "0s"
[workload.cluster]
rows = 100
kill_at = "1.5s"
`

// smallMemory are the engines' settings for small servers.
var smallMemory = map[string]string{
	"postgres-replicas": `shared_buffers = "32MB"`,
	// The replica applies with 4 threads and without a flush per
	// commit: with one thread it falls behind the primary's writers on
	// this busy 2-core machine, and a promotion waits until it has
	// applied what it received, longer than the step.
	"mariadb-replicas": "innodb_buffer_pool_size = \"32M\"\ninnodb_log_file_size = \"16M\"\nperformance_schema = \"OFF\"\n" +
		"innodb_flush_log_at_trx_commit = 2\nsync_binlog = 0\nslave_parallel_threads = 4\nslave_parallel_mode = \"optimistic\"",
}

// runReplicas runs replicaSpec's tests on engine in mode and returns each
// measured result by test/role.
func runReplicas(t *testing.T, engine, mode string) map[string]store.Result {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	work := filepath.Join(dir, "work")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(replicaSpec, work, engine, mode, smallMemory[engine])), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	began := time.Now()
	code, out := run(t, "run", file, "--store", db)
	took := time.Since(began)
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := map[string]store.Result{}
	one := storetest.OneRun(t, db, false)
	// Where the test's time goes: each step's start and length, from
	// the command's start.
	phases := fmt.Sprintf("run started at %.1f s, ended at %.1f s, command took %.1f s; steps:",
		one.Run.Started.Sub(began).Seconds(), one.Run.Ended.Sub(began).Seconds(), took.Seconds())
	for _, r := range one.Results {
		if r.Role.Secondary {
			continue
		}
		phases += fmt.Sprintf(" %s at %.1f s for %.1f s;", r.Test, r.Started.Sub(began).Seconds(), r.Seconds)
	}
	for _, r := range one.Results {
		if !r.Action && !r.Warm {
			got[r.Test+"/"+r.Role.Name] = r
		}
	}
	t.Log(phases)
	servertest.NoProcs(t, work)
	return got
}

// checkReplicas checks the results of runReplicas on a primary with one
// replica: the replica's reads are counted, the lag sampler read the
// engine's views, the failover killed the primary (node primary, from 1,
// as the switchover left it), promoted the other node, wrote again after
// the kill and closed its outage within the step, and counted the
// acknowledged writes lost: none when durable is set (a commit waited
// for the replica).
func checkReplicas(t *testing.T, got map[string]store.Result, mode string, durable bool, primary float64) {
	get := getter(t, got)
	reads := get(cluster.StaleRead + "/reader")
	if reads.Events == 0 || reads.Facts["writer_acks_total"] <= 0 {
		t.Errorf("stale-read: %d reads, facts %v; want reads on the replica and writes on the primary", reads.Events, reads.Facts)
	}
	lag := get(cluster.ReplicaLag + "/sampler")
	if lag.Facts["lag_samples"] < 1 || lag.Facts["lag_replay_bytes_max"] < lag.Facts["lag_replay_bytes_p50"] ||
		lag.Facts["lag_replay_bytes_p50"] < 0 || lag.Facts["lag_seconds_max"] < 0 {
		t.Errorf("replica-lag facts %v: want samples and ordered percentiles of bytes and seconds", lag.Facts)
	}
	if w := get(cluster.ReplicaLag + "/writers"); w.Throughput() <= 0 {
		t.Errorf("replica-lag: writers at %v writes/s", w.Throughput())
	}
	probe := get(cluster.Failover + "/probe")
	f := probe.Facts
	t.Logf("%s failover: downtime %.3f s, promoted in %.3f s, lost %v of %v acknowledged writes, gap %.0f ms, lag facts %v", mode,
		probe.Throughput(), f["failover_promote_s"], f["failover_lost_acked_writes"], f["failover_acked_before_kill"],
		f["failover_max_gap_ms"], lag.Facts)
	if f["failover_killed_node"] != primary || f["failover_promoted_node"] != 3-primary || f["failover_promote_s"] < 0 {
		t.Errorf("failover facts %v: want node %v killed and node %v promoted", f, primary, 3-primary)
	}
	if f["failover_writes_after_kill"] <= 0 || f["failover_outage_open_at_end"] != 0 || probe.Throughput() <= 0 {
		t.Errorf("failover: downtime %v s, facts %v; want writes after the kill, an outage above 0 closed within the step",
			probe.Throughput(), f)
	}
	if f["failover_acked_before_kill"] < 1 || f["failover_lost_acked_writes"] < 0 {
		t.Errorf("failover facts %v: want acknowledged writes before the kill and the lost ones counted", f)
	}
	if durable && f["failover_lost_acked_writes"] != 0 {
		t.Errorf("%s replication lost %v acknowledged writes; want 0", mode, f["failover_lost_acked_writes"])
	}
}

// getter returns got's result for a key, failing the test when it is
// missing or not ok.
func getter(t *testing.T, got map[string]store.Result) func(string) store.Result {
	return func(key string) store.Result {
		t.Helper()
		r, ok := got[key]
		if !ok {
			t.Fatalf("no result %s; have %v", key, keys(got))
		}
		if r.Status != store.StatusOK {
			t.Errorf("%s: status %s (%v)", key, r.Status, r.ErrorSamples)
		}
		return r
	}
}

// checkSwitchover checks the switchover of runReplicas: the primary moved
// from node 1 to node 2 and writes resumed, nothing
// acknowledged was lost whatever the replication mode, the old primary
// rejoined on its own data (pg_rewind, or MariaDB's GTID position), and
// the switch back either happened or, for PostgreSQL (whose rejoin
// checkpoints the new primary and restarts the old one, a second or more
// on a busy machine), was skipped and said so. It returns the primary
// (from 1) the switchover left for the failover step.
func checkSwitchover(t *testing.T, got map[string]store.Result, mode string) float64 {
	get := getter(t, got)
	sw := get(cluster.Switchover + "/probe")
	g := sw.Facts
	t.Logf("%s switchover: downtime %.3f s, switch %.3f s, rejoin %.3f s, back %.3f s, rejoin %.3f s, lost %v of %v", mode,
		sw.Throughput(), g["failover_promote_s"], g["switchover_rejoin_s"], g["switchback_s"], g["switchback_rejoin_s"],
		g["failover_lost_acked_writes"], g["failover_acked_before_kill"])
	// On a busy machine PostgreSQL's rejoin may take so long that no
	// time is left to switch back within the step, which the facts then
	// say.
	back := g["switchback_s"] > 0 || (strings.HasPrefix(mode, "pg-") && g["switchback_skipped"] == 1)
	if g["failover_killed_node"] != 1 || g["failover_promoted_node"] != 2 || !back || g["failover_writes_after_kill"] < 1 ||
		g["failover_lost_acked_writes"] != 0 || g["failover_acked_before_kill"] < 1 {
		t.Errorf("switchover facts %v: want node 1 to node 2 and back, writes after the switch, none of the acknowledged lost", g)
	}
	// The first rejoin ends before the switch back starts; either may be
	// cut by the step's end (-1).
	if g["switchover_rejoin_copied"] != 0 && (g["switchover_rejoin_copied"] != -1 || g["switchback_at_s"] >= 0) ||
		g["switchover_rejoin_fallback"] != 0 || g["switchback_rejoin_copied"] > 0 || g["switchback_rejoin_fallback"] != 0 {
		t.Errorf("switchover facts %v: want the old primary to rejoin on its own data, after the switch and after the switch back", g)
	}
	if g["switchback_at_s"] >= 0 {
		return 1 // the switch back started; its step waited for its end
	}
	return 2
}

// TestPostgresReplicas runs the scenarios on a PostgreSQL primary with one
// synchronous replica, then one asynchronous one, each in one run.
func TestPostgresReplicas(t *testing.T) {
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) {
			got := runReplicas(t, "postgres-replicas", mode)
			checkReplicas(t, got, "pg-"+mode, mode == "sync", checkSwitchover(t, got, "pg-"+mode))
		})
	}
}

// TestMariaDBReplicas runs the scenarios on a MariaDB primary with one
// semi-synchronous replica, then one asynchronous one, as
// TestPostgresReplicas does. Semi-sync's commit
// waits until the replica has received it, and the promotion applies all
// it received first: no acknowledged write is lost.
func TestMariaDBReplicas(t *testing.T) {
	for _, mode := range []string{"semisync", "async"} {
		t.Run(mode, func(t *testing.T) {
			got := runReplicas(t, "mariadb-replicas", mode)
			checkReplicas(t, got, "mariadb-"+mode, mode == "semisync", checkSwitchover(t, got, "mariadb-"+mode))
		})
	}
}

// TestPostgresReplicasBadInput checks that a replica count of 0 or 5, a
// replication mode the engine does not have, write-scaling on a single
// primary, a switchover on Galera or on a single server exit 2 naming the
// field, before anything starts, on both replica engines; and that a
// replica that cannot catch up (it delays replay by an hour) fails the
// run within catchup_timeout with its log's tail, leaving no process.
func TestPostgresReplicasBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ settings, suite, want string }{
		{"replicas = 0", "", "settings.replicas: \"0\" is not a replica count; want 1 to 4"},
		{"replication = \"semisync\"", "", "settings.replication: \"semisync\" is not a PostgreSQL replication mode"},
		{"replicas = 1", `tests = ["write-scaling"]`, "tests: write-scaling spreads writers over nodes that all take writes"},
		{"synchronous_standby_names = \"x\"", "", "settings.synchronous_standby_names: benchlab sets it"},
		{"replicas = 5", "", "settings.replicas: \"5\" is not a replica count; want 1 to 4"},
		{"replicas = 2", "[workload.cluster]\nkill_node = 2", "workload.cluster.kill_node: node 2; on a primary with replicas"},
	} {
		for _, eng := range []string{"postgres-replicas", "mariadb-replicas"} {
			if eng == "mariadb-replicas" && !strings.HasPrefix(c.settings, "replicas =") {
				continue // semisync is MariaDB's own mode; synchronous_standby_names a PostgreSQL setting
			}
			file := filepath.Join(dir, "bad.toml")
			text := fmt.Sprintf("name = \"bad\"\n[[target]]\nname = \"p\"\nengine = %q\n[target.settings]\n%s\n[workload]\nsuite = \"cluster\"\n%s\n",
				eng, c.settings, c.suite)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := run(t, "run", file, "--store", filepath.Join(dir, "r.db"), "--dry-run")
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("%s: %s / %s: exit %d, want 2 with %q:\n%s", eng, c.settings, c.suite, code, c.want, out)
			}
		}
	}
	for _, c := range []struct{ engine, settings, suite, want string }{
		{"mariadb-replicas", `replication = "sync"`, "", `settings.replication: "sync" is not a MariaDB replication mode; want async or semisync`},
		{"galera", "nodes = 3", `tests = ["switchover"]`, "tests: switchover moves the primary of a cluster with one"},
		{"postgres", "", `tests = ["switchover"]`, "engine: postgres is not a cluster"},
	} {
		file := filepath.Join(dir, "bad.toml")
		text := fmt.Sprintf("name = \"bad\"\n[[target]]\nname = \"p\"\nengine = %q\n[target.settings]\n%s\n[workload]\nsuite = \"cluster\"\n%s\n",
			c.engine, c.settings, c.suite)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := run(t, "run", file, "--store", filepath.Join(dir, "r.db"), "--dry-run")
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%s / %s: exit %d, want 2 with %q:\n%s", c.settings, c.suite, code, c.want, out)
		}
	}
	work := filepath.Join(dir, "work")
	file := filepath.Join(dir, "slow.toml")
	text := fmt.Sprintf(`name = "slow"
workdir = %q
[[target]]
name = "p"
engine = "postgres-replicas"
[target.settings]
recovery_min_apply_delay = "1h"
catchup_timeout = "2s"
[workload]
suite = "cluster"
tests = ["stale-read"]
write_time = "1s"
`, work)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, "run", file, "--store", filepath.Join(dir, "r.db"))
	if code == 0 || !strings.Contains(out, "replica 1 (127.0.0.1:") || !strings.Contains(out, "within 2s (settings.catchup_timeout); its log") ||
		!strings.Contains(out, "started streaming WAL from primary") {
		t.Errorf("replica that cannot catch up: exit %d; want a failure naming the replica and its log:\n%s", code, out)
	}
	servertest.NoProcs(t, work)
}
