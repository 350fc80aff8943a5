package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKilledRunWorkDirPruned kills (SIGKILL) a run in a work dir the user
// named, once its data dir is there: the data dir and the run's claim
// stay; the next run in that work dir removes them, says so, and keeps
// what benchlab did not make there.
func TestKilledRunWorkDirPruned(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(mine, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	storeFile := filepath.Join(dir, "r.db")
	cmd := childCmd([]string{"TMPDIR=" + dir}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "60", "--warmup", "0s", "--report-interval", "1s", "--store", storeFile, "--workdir", work)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go io.Copy(io.Discard, out)
	exited := make(chan struct{})
	go func() { cmd.Process.Wait(); close(exited) }()
	data := filepath.Join(work, "sqlite-r1")
	for {
		if _, err := os.Stat(data); err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatal("the run ended before its data dir was made")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	claims, _ := filepath.Glob(filepath.Join(work, ".benchlab-owner-*"))
	if len(claims) != 1 {
		t.Fatalf("claims after the kill: %v, want the killed run's", claims)
	}

	code, stdout, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "1000",
		"--time", "0.2", "--warmup", "0s", "--report-interval", "0", "--store", filepath.Join(dir, "r2.db"), "--workdir", work)
	if code != ExitOK {
		t.Fatalf("second run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(unwrap(stdout+stderr), "removed 1 data dir(s) of benchlab processes that are gone: "+data) {
		t.Errorf("the second run does not say it removed %s:\n%s\n%s", data, stdout, stderr)
	}
	left, _ := os.ReadDir(work)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "notes.txt" {
		t.Errorf("work dir holds %v, want only the user's notes.txt", names)
	}
}
