package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
	"benchlab/internal/workload/cluster"
)

// pgSpec is stale-read, replica-lag and failover on a PostgreSQL primary
// with one streaming replica in replication mode %s: 5 s steps, the
// primary killed 1.5 s into failover and the replica promoted.
const pgSpec = `name = "pg-replicas"
workdir = %q
[[target]]
name = "pg"
engine = "postgres-replicas"
[target.settings]
replicas = 1
replication = %q
shared_buffers = "32MB"
[workload]
suite = "cluster"
tests = ["stale-read", "replica-lag", "failover"]
threads = [2]
write_time = "5s"
warmup = "500ms"
report_interval = "0s"
[workload.cluster]
rows = 100
kill_at = "1500ms"
`

// runPG runs pgSpec in mode and returns each measured result by test/role.
func runPG(t *testing.T, mode string) map[string]store.Result {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	work := filepath.Join(dir, "work")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(pgSpec, work, mode)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	code, out := run(t, "run", file, "--store", db)
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := map[string]store.Result{}
	for _, r := range oneRunResults(t, db) {
		if !r.Action && !r.Warm {
			got[r.Test+"/"+r.Role.Name] = r
		}
	}
	servertest.NoProcs(t, work)
	return got
}

// TestPostgresReplicas runs the scenarios on a primary with one
// synchronous replica and one asynchronous one. Both: the replica's reads
// are counted, the lag sampler read pg_stat_replication, the failover
// killed the primary, promoted the replica, wrote again after the kill and
// closed its outage within the step. Synchronous: no acknowledged write
// is lost. Asynchronous: the lost count was checked (0 or more).
func TestPostgresReplicas(t *testing.T) {
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) {
			got := runPG(t, mode)
			get := func(key string) store.Result {
				r, ok := got[key]
				if !ok {
					t.Fatalf("no result %s; have %v", key, keys(got))
				}
				if r.Status != store.StatusOK {
					t.Errorf("%s: status %s (%v)", key, r.Status, r.ErrorSamples)
				}
				return r
			}
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
			t.Logf("%s failover: downtime %.3f s, facts %v", mode, probe.Throughput(), f)
			if f["failover_killed_node"] != 1 || f["failover_promoted_node"] != 2 || f["failover_promote_s"] < 0 {
				t.Errorf("failover facts %v: want node 1 killed and node 2 promoted", f)
			}
			if f["failover_writes_after_kill"] <= 0 || f["failover_outage_open_at_end"] != 0 || probe.Throughput() <= 0 {
				t.Errorf("failover: downtime %v s, facts %v; want writes after the kill, an outage above 0 closed within the step",
					probe.Throughput(), f)
			}
			if f["failover_acked_before_kill"] < 1 || f["failover_lost_acked_writes"] < 0 {
				t.Errorf("failover facts %v: want acknowledged writes before the kill and the lost ones counted", f)
			}
			if mode == "sync" && f["failover_lost_acked_writes"] != 0 {
				t.Errorf("synchronous replication lost %v acknowledged writes; want 0", f["failover_lost_acked_writes"])
			}
		})
	}
}

// TestPostgresReplicasBadInput checks that a replica count of 0, a
// replication mode PostgreSQL does not have and write-scaling on a single
// primary exit 2 naming the field, before anything starts; and that a
// replica that cannot catch up (it delays replay by an hour) fails the
// run within catchup_timeout with its log's tail, leaving no process.
func TestPostgresReplicasBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ settings, suite, want string }{
		{"replicas = 0", "", "settings.replicas: \"0\" is not a replica count; want 1 to 4"},
		{"replication = \"semisync\"", "", "settings.replication: \"semisync\" is not a PostgreSQL replication mode"},
		{"replicas = 1", `tests = ["write-scaling"]`, "tests: write-scaling spreads writers over nodes that all take writes"},
		{"synchronous_standby_names = \"x\"", "", "settings.synchronous_standby_names: benchlab sets it"},
	} {
		file := filepath.Join(dir, "bad.toml")
		text := fmt.Sprintf("name = \"bad\"\n[[target]]\nname = \"p\"\nengine = \"postgres-replicas\"\n[target.settings]\n%s\n[workload]\nsuite = \"cluster\"\n%s\n",
			c.settings, c.suite)
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
