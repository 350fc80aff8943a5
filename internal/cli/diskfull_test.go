package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/disktest"
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
