package cluster_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "benchlab/internal/all" // engines, and the suite through the one import line
	"benchlab/internal/cli"
	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
	"benchlab/internal/workload/cluster"
)

// spec is a run of every scenario on one 3-node cluster with tiny buffer
// pools; threads 2, 6 s steps (failover kills node 1 at 1.5 s), 20 rows,
// so that writers on two nodes conflict.
const spec = `name = "cluster"
workdir = %q
[[target]]
name = "g3"
engine = "galera"
[target.settings]
nodes = 3
innodb_buffer_pool_size = "32M"
innodb_log_file_size = "16M"
innodb_flush_log_at_trx_commit = 2
performance_schema = "OFF"
# A dead node is evicted after 2 s instead of Galera's default 5 s, so the
# outage fits the 6 s step.
wsrep_provider_options = "evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S"
[workload]
suite = "cluster"
threads = [2]
write_time = "6s"
warmup = "500ms"
report_interval = "0s"
[workload.cluster]
rows = 20
spread = [1, 3]
kill_at = "1500ms"
`

// run runs benchlab with args and the test's environment (server logs in
// a dir of the test's own).
func run(t *testing.T, args ...string) (int, string) {
	getenv, _ := servertest.Env(t)
	if keep := os.Getenv("GALERA_TEST_LOGS"); keep != "" {
		// Debugging: keep the nodes' logs where the caller says.
		getenv = func(k string) string {
			if k == "BENCHLAB_SERVER_LOGS" {
				return keep
			}
			return ""
		}
	}
	var out, errb bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &out, Stderr: &errb, Getenv: getenv}, args)
	return code, out.String() + errb.String()
}

// TestScenarios runs the suite end to end on a real 3-node Galera cluster
// behind HAProxy and checks each headline: stale-read's stale share is in
// [0, 1] with reads and writes counted; write-scaling writes on 1 and 3
// nodes, and on 3 retries conflicts; failover killed node 1 and measured a downtime above 0 and below
// the step, with a gap between writes and errors, and the step is not
// failed by the node's death. Afterwards no mariadbd or haproxy is left.
func TestScenarios(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	work := filepath.Join(dir, "work")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(spec, work)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	code, out := run(t, "run", file, "--store", db)
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := oneRunResults(t, db)
	got := map[string]store.Result{}
	for _, r := range res {
		if !r.Action && !r.Warm {
			got[r.Test+"/"+r.Role.Name] = r
		}
	}
	check := func(key, metric string) store.Result {
		r, ok := got[key]
		if !ok {
			t.Fatalf("no result %s; have %v", key, keys(got))
		}
		if r.Metric != metric || r.Status != store.StatusOK {
			t.Errorf("%s: metric %s status %s (%v), want %s ok", key, r.Metric, r.Status, r.ErrorSamples, metric)
		}
		return r
	}
	reads := check(cluster.StaleRead+"/reader", cluster.StaleShare.Name)
	writes := check(cluster.StaleRead+"/writer", cluster.WPS.Name)
	if share := reads.Throughput(); share < 0 || share > 1 || reads.Events == 0 || writes.Events == 0 {
		t.Errorf("stale-read: share %v of %d reads, %d writes; want a share in [0,1] and both counted", share, reads.Events, writes.Events)
	}
	if reads.Facts["writer_acks_total"] <= 0 || reads.Facts["reads_total"] <= 0 {
		t.Errorf("stale-read facts %v: want the writer's acks and the reads counted", reads.Facts)
	}
	for _, k := range []int{1, 3} {
		r := check(fmt.Sprintf("%s_nodes=%d/", cluster.WriteScaling, k), cluster.WPS.Name)
		if r.Throughput() <= 0 {
			t.Errorf("write-scaling on %d nodes: %v writes/s", k, r.Throughput())
		}
		// The 2 writers on 2 nodes update the same 20 rows: some lose
		// the certification and are retried.
		if k == 3 && r.Facts[store.FactRetries] <= 0 {
			t.Errorf("write-scaling on %d nodes: no conflict retried (facts %v)", k, r.Facts)
		}
	}
	probe := check(cluster.Failover+"/probe", cluster.DowntimeS.Name)
	check(cluster.Failover+"/writers", cluster.WPS.Name)
	down, f := probe.Throughput(), probe.Facts
	if down <= 0 || down >= 6 {
		t.Errorf("failover: downtime %v s; want above 0 and below the 6 s step (facts %v)", down, f)
	}
	if f["failover_writes_after_kill"] <= 0 {
		t.Errorf("failover: no write succeeded after the kill (facts %v)", f)
	}
	if f["failover_kill_at_s"] < 1.5 || f["failover_killed_node"] != 1 || f["failover_errors"] < 1 || f["failover_max_gap_ms"] <= 0 {
		t.Errorf("failover facts %v: want node 1 killed after 1.5 s, errors and a gap", f)
	}
	// Every mariadbd and haproxy of the run had the work dir in its
	// command line; none is left, nor the nodes' dirs.
	servertest.NoProcs(t, work)
	if left, _ := filepath.Glob(filepath.Join(work, "*", "node*")); len(left) > 0 {
		t.Errorf("nodes' dirs left after the run: %v", left)
	}
}

func keys(m map[string]store.Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestBadInput checks that a spec the suite cannot run exits 2 naming the
// field, before anything starts.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ settings, suite, want string }{
		{"nodes = 1", "", "target[0]: settings.nodes: 1 node(s); the stale-read test needs 2 or more"},
		{"nodes = 2", `tests = ["failover"]`, "target[0]: settings.nodes: 2 node(s); the failover test needs 3 or more"},
		{"nodes = 2", `tests = ["write-scaling"]`, "settings.nodes: 2 node(s); the write-scaling test needs 3 or more"},
		{"nodes = 9", "", "settings.nodes: \"9\" is not a node count; want 1 to 5"},
		{"nodes = 3", "[workload.cluster]\nspread = [0]", "workload.cluster.spread"},
		{"nodes = 3", "[workload.cluster]\nkill_node = 4", "cluster.kill_node is 4"},
	} {
		file := filepath.Join(dir, "bad.toml")
		text := fmt.Sprintf("name = \"bad\"\n[[target]]\nname = \"g\"\nengine = \"galera\"\n[target.settings]\n%s\n[workload]\nsuite = \"cluster\"\n%s\n",
			c.settings, c.suite)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := run(t, "run", file, "--store", filepath.Join(dir, "r.db"), "--dry-run")
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%s / %s: exit %d, want 2 with %q:\n%s", c.settings, c.suite, code, c.want, out)
		}
	}
	// Another engine is refused too, naming the engine.
	file := filepath.Join(dir, "sqlite.toml")
	os.WriteFile(file, []byte("name = \"bad\"\n[[target]]\nname = \"s\"\nengine = \"sqlite\"\n[workload]\nsuite = \"cluster\"\n"), 0o644)
	if code, out := run(t, "run", file, "--store", filepath.Join(dir, "r.db"), "--dry-run"); code != 2 || !strings.Contains(out, "target[0]: engine: sqlite is not a cluster") {
		t.Errorf("sqlite target: exit %d:\n%s", code, out)
	}
}

// TestCausalReads runs stale-read and failover on a 3-node cluster without
// a proxy, with Galera's default timeouts and reads that wait for what the
// cluster committed (wsrep_sync_wait = 1). No read may be stale, which
// checks that the scenario counts staleness against the right write
// (TestScenarios, at wsrep_sync_wait = 0, finds some). The failover's
// writers retry node by node; the outage (about 6 s: a dead node is
// evicted after evs.suspect_timeout, 5 s) outlasts the 3 s step, so the
// probe's write still failing at the end counts the outage so far and the
// facts say it was open: not the downtime 0 a perfect failover would show.
func TestCausalReads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	work := filepath.Join(dir, "work")
	text := fmt.Sprintf(`name = "causal"
workdir = %q
[[target]]
name = "g3"
engine = "galera"
[target.settings]
nodes = 3
proxy = "none"
innodb_buffer_pool_size = "32M"
innodb_log_file_size = "16M"
performance_schema = "OFF"
wsrep_sync_wait = 1
[workload]
suite = "cluster"
tests = ["stale-read", "failover"]
threads = [2]
write_time = "3s"
warmup = "300ms"
report_interval = "0s"
[workload.cluster]
kill_at = "1s"
`, work)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	code, out := run(t, "run", file, "--store", db)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	res := oneRunResults(t, db)
	seen := map[string]bool{}
	for _, r := range res {
		switch {
		case r.Test == cluster.StaleRead && r.Role.Name == "reader":
			seen[r.Test] = true
			if r.Events == 0 || r.Facts["writer_acks_total"] == 0 || r.Rows != 0 || r.Facts["stale_reads_total"] != 0 {
				t.Errorf("causal reads: %d reads, %d stale in the measured part, facts %v; want reads, writes and no stale read",
					r.Events, r.Rows, r.Facts)
			}
		case r.Test == cluster.Failover && r.Role.Name == "probe":
			seen[r.Test] = true
			t.Logf("failover without a proxy: downtime %.2f s (lower bound), facts %v", r.Throughput(), r.Facts)
			// The probe's write that saw the kill began before it and ran
			// on to the step's end (its 3.3 s less a 500 ms margin), so
			// the downtime, a lower bound, is at least the time from the
			// kill to that end, however late a busy machine made either.
			from := r.Facts["failover_kill_at_s"]
			if r.Status != store.StatusOK || r.Facts["failover_outage_open_at_end"] != 1 || from < 1 ||
				r.Throughput() < 2.8-from-0.001 {
				t.Errorf("failover outlasting the step: status %s, downtime %v s, facts %v; want ok, a kill after 1 s, the outage open at the end and at least the %.2f s from the kill to the end",
					r.Status, r.Throughput(), r.Facts, 2.8-from)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("results of %v; want stale-read's reader and failover's probe:\n%s", seen, out)
	}
	servertest.NoProcs(t, work)
	if left, _ := filepath.Glob(filepath.Join(work, "*", "node*")); len(left) > 0 {
		t.Errorf("nodes' dirs left after the run: %v", left)
	}
}

// oneRunResults reads the results of the store's one run (failing the
// test when it holds another number of runs).
func oneRunResults(t *testing.T, db string) []store.Result {
	t.Helper()
	return storetest.OneRun(t, db, false).Results
}
