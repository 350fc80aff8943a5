package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestAbandonedRun kills a run with SIGKILL mid-step: `runs` then shows it
// abandoned (its pid is gone), `runs --prune` marks it so in the store and
// removes its work dir, data included, from the temp dir; the next start
// would have removed the dir as well.
func TestAbandonedRun(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	cmd := childCmd([]string{"TMPDIR=" + tmp}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "60", "--warmup", "0", "--report-interval", "1", "--store", db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	started := false
	deadline := time.After(60 * time.Second)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for !started {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the run ended before its first live line")
			}
			started = strings.Contains(l, "point-query thds: 1")
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("no live line within 60 s")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	go func() {
		for range lines {
		}
	}()
	left, _ := filepath.Glob(filepath.Join(tmp, "benchlab-*"))
	if len(left) != 1 {
		t.Fatalf("work dirs after SIGKILL: %v, want the killed run's one", left)
	}
	code, list, _ := run(t, Env{}, "runs", "--store", db)
	if code != ExitOK || !strings.Contains(list, "abandoned") || !strings.Contains(list, "is gone") {
		t.Fatalf("runs after SIGKILL: exit %d\n%s", code, list)
	}
	t.Setenv("TMPDIR", tmp)
	code, pruned, stderr := run(t, Env{}, "runs", "--store", db, "--prune")
	if code != ExitOK || !strings.Contains(pruned, "1 run(s) marked abandoned, 1 work dir(s) removed") {
		t.Fatalf("runs --prune: exit %d\n%s\n%s", code, pruned, stderr)
	}
	if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
		t.Errorf("work dir %s still there after prune: %v", left[0], err)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(context.Background(), 0)
	if len(runs) != 1 || runs[0].Status != store.StatusAbandoned || !strings.Contains(runs[0].Error, "ended without finishing") {
		t.Fatalf("stored run after prune: %+v", runs)
	}
	if code, list, _ := run(t, Env{}, "runs", "--store", db); code != ExitOK || strings.Contains(list, "-2562047h") ||
		!strings.Contains(list, "abandoned") {
		t.Errorf("runs after prune:\n%s", list)
	}
}
