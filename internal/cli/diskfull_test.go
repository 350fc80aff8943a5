package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/disktest"
	"benchlab/internal/store"
)

// TestDiskFull runs engines whose data dir is on a 2 MB disk, past the
// free-space check (--skip-space-check): the cell fails
// with an error that says the device is full, the command exits 1, and the
// data dir is gone, leaving nothing on the full disk.
func TestDiskFull(t *testing.T) {
	for _, c := range []struct{ name, engine, workload string }{
		{"pebble", "pebble", "suite = \"kv\"\nnum_keys = 50000\ntests = [\"readrandom\"]"},
		{"sqlite", "sqlite", "suite = \"sysbench\"\ntable_size = 100000\ntests = [\"point-query\"]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			disk := disktest.Small(t, "size=2m")
			dir := t.TempDir()
			sp := writeFile(t, dir, "s.toml", "name = \"full\"\n[[target]]\nname = \"a\"\nengine = \""+c.engine+"\"\n"+
				"[workload]\n"+c.workload+"\nthreads = [1]\nread_time = \"1s\"\nwrite_time = \"1s\"\nreport_interval = \"0s\"\n")
			// Past the free-space check, which would refuse the load, to
			// test what happens when its estimate is wrong.
			code, out, stderr := run(t, Env{}, "run", sp, "--store", filepath.Join(dir, "r.db"), "--workdir", disk,
				"--skip-space-check")
			if code != 1 {
				t.Fatalf("exit %d, want 1 (a failed cell)\n%s\n%s", code, out, stderr)
			}
			if all := out + stderr; !strings.Contains(all, "no space left on device") && !strings.Contains(all, "disk is full") {
				t.Errorf("output does not say the disk is full:\n%s\n%s", out, stderr)
			}
			left, err := os.ReadDir(disk)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			if len(names) > 0 {
				t.Errorf("left behind on the full disk: %v", names)
			}
		})
	}
}

// TestDiskFullInsert fills the disk during a measured insert step: the load
// fits on the 1 MB disk, the inserts do not, so most of them fail. The
// failed inserts count in no throughput (stored statements are the done
// inserts'), their share passes workload.max_error_rate's default, so the
// step and the run are failed and the command exits 1 naming the policy.
// Before the error policy the run was stored ok and exited 0.
func TestDiskFullInsert(t *testing.T) {
	disk := disktest.Small(t, "size=1m")
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", goodSpec+"table_size = 1000\ntests = [\"insert\"]\nwrite_time = \"2s\"\nreport_interval = \"0s\"\n")
	code, out, stderr := run(t, Env{}, "run", sp, "--store", storeFile, "--workdir", disk, "--skip-space-check")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d (a target failed its error policy)\n%s\n%s", code, ExitFailure, out, stderr)
	}
	if all := out + stderr; !strings.Contains(all, "more than workload.max_error_rate 1%") {
		t.Errorf("output does not say the error policy failed the step:\n%s\n%s", out, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if runs[0].Status != store.StatusFailed || !strings.Contains(runs[0].Error, "max_error_rate") {
		t.Errorf("run stored %s (%q), want failed by the error policy", runs[0].Status, runs[0].Error)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	var insert *store.Result
	for i := range res {
		if res[i].Test == "insert" {
			insert = &res[i]
		}
	}
	if insert == nil {
		t.Fatalf("no insert result in %d results", len(res))
	}
	if insert.Status != store.StatusFailed || insert.ErrorRate() <= 0.01 || insert.Statements != insert.Events {
		t.Errorf("insert stored %s with %d done, %d failed, %d statements; want failed, over 1%% failed, "+
			"statements of the done inserts only", insert.Status, insert.Events, insert.Errors, insert.Statements)
	}
	// --max-error-rate 1 lifts the limit: the same run is ok.
	code, out, stderr = run(t, Env{}, "run", sp, "--store", filepath.Join(dir, "r2.db"), "--workdir", disk,
		"--skip-space-check", "--max-error-rate", "1")
	if code != ExitOK {
		t.Errorf("exit %d with --max-error-rate 1, want 0\n%s\n%s", code, out, stderr)
	}
}

// TestReadOnlyWorkDir points the work dir at a read-only file system: a
// clear error naming the dir, exit 1, nothing written.
func TestReadOnlyWorkDir(t *testing.T) {
	disk := disktest.Small(t, "size=1m,ro")
	dir := t.TempDir()
	sp := writeFile(t, dir, "s.toml", goodSpec+"table_size = 1000\ntests = [\"point-query\"]\nread_time = \"1s\"\n")
	code, out, stderr := run(t, Env{}, "run", sp, "--store", filepath.Join(dir, "r.db"), "--workdir", disk)
	if code == 0 {
		t.Fatalf("exit 0 on a read-only work dir\n%s\n%s", out, stderr)
	}
	all := out + stderr
	if !strings.Contains(all, "read-only file system") || !strings.Contains(all, disk) {
		t.Errorf("error does not name the dir and the cause:\n%s\n%s", out, stderr)
	}
}
