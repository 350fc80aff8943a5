package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"benchlab/internal/store"
)

// TestDBBenchThroughRunner runs kv steps on Debian's db_bench: the runner
// hands each measured step to the tool and stores what it measured, with the
// LSM facts it printed.
func TestDBBenchThroughRunner(t *testing.T) {
	if _, err := exec.LookPath("db_bench"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("db_bench not found; .ci/run installs rocksdb-tools")
		}
		t.Skip("db_bench not installed (apt-get install rocksdb-tools)")
	}
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "kv.toml", `name = "dbb"
[[target]]
name = "dbb"
engine = "db_bench"
[workload]
suite = "kv"
tests = ["readrandom"]
num_keys = 2000
threads = [1]
read_time = "1s"
write_time = "1s"
report_interval = "0s"
`)
	if code, out, stderr := run(t, Env{}, "run", sp, "--store", storeFile); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(context.Background(), 0)
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]store.Result{}
	for _, r := range res {
		found[r.Test] = r
	}
	fill, read := found["fillseq"], found["readrandom"]
	if fill.Events != 2000 {
		t.Errorf("fillseq did %d operations, want 2000 (num_keys)", fill.Events)
	}
	if read.Events == 0 || read.QPS() <= 0 || read.Latency.P50 <= 0 || read.Facts["tool_ops_per_sec"] <= 0 {
		t.Errorf("readrandom result from db_bench: %+v", read)
	}
	if lsm := found["readrandom.lsm"]; lsm.Facts == nil {
		t.Errorf("no LSM facts stored after readrandom: %+v", lsm)
	}
}
