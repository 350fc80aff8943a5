package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestCopy copies two stored experiments into another results file: both
// arrive, oldest first, with their runs, learned by the noise model; a
// second copy writes nothing; a copy without --to or onto its source is a usage error.
func TestCopy(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	sp := writeFile(t, dir, "s.toml", "name = \"one\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+pointQueryWorkload)
	for range 2 {
		if code, _, stderr := run(t, Env{}, "run", sp, "--store", src); code != ExitOK {
			t.Fatalf("run: %d %s", code, stderr)
		}
	}
	code, out, stderr := run(t, Env{}, "copy", "--from", src, "--to", dst)
	if code != ExitOK || strings.Count(out, " -> experiment ") != 2 {
		t.Fatalf("copy: %d\n%s%s", code, out, stderr)
	}
	if !strings.HasPrefix(out, "experiment 1 of "+src+" -> experiment 1 of "+dst) {
		t.Errorf("copy output %q: want experiment 1 copied first", out)
	}
	// The copies are learned by the noise model as they are copied.
	st, err := store.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	unlearned, err := st.Unlearned(context.Background())
	st.Close()
	if err != nil || len(unlearned) != 0 {
		t.Errorf("experiments of the copy the noise model has not learned: %v, %v; want none", unlearned, err)
	}
	code, out, _ = run(t, Env{}, "runs", "--store", dst)
	if code != ExitOK || strings.Count(out, "experiment ") != 2 || strings.Count(out, "  run ") != 2 {
		t.Errorf("runs of the copy:\n%s", out)
	}
	// Copying again writes nothing and says so.
	code, out, stderr = run(t, Env{}, "copy", "--from", src, "--to", dst)
	if code != ExitOK || strings.Count(out, "nothing copied") != 2 {
		t.Errorf("second copy: %d\n%s%s; want both experiments found, nothing copied", code, out, stderr)
	}
	code, out, _ = run(t, Env{}, "runs", "--store", dst)
	if code != ExitOK || strings.Count(out, "experiment ") != 2 || strings.Count(out, "  run ") != 2 {
		t.Errorf("runs of the copy after a second copy:\n%s", out)
	}
	if code, _, stderr := run(t, Env{}, "copy", "--from", src); code != ExitUsage || !strings.Contains(unwrap(stderr), "--to") {
		t.Errorf("copy without --to: exit %d %q, want %d naming --to", code, stderr, ExitUsage)
	}
	if code, _, _ := run(t, Env{}, "copy", "--from", src, "--to", src); code != ExitUsage {
		t.Errorf("copy onto the source: exit %d, want %d", code, ExitUsage)
	}
}
