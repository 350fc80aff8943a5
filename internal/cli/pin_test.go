package cli

import (
	"context"
	"path/filepath"
	"testing"

	"benchlab/internal/store"
)

// TestClientPinnedThroughRun runs an experiment with client_cpus = "0" in a
// child process (pinning would otherwise bind this test binary): the run's
// manifest records that benchlab ran on CPU 0 only.
func TestClientPinnedThroughRun(t *testing.T) {
	dir := t.TempDir()
	sp := writeFile(t, dir, "pin.toml", "name = \"pin\"\nclient_cpus = \"0\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+
		pointQueryWorkload)
	storeFile := filepath.Join(dir, "r.db")
	cmd := childCmd(nil, "run", sp, "--store", storeFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child run: %v\n%s", err, out)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	if m := store.ParseManifest(runs[0].Manifest); m.Host.Affinity != "0" {
		t.Errorf("manifest records benchlab's CPUs as %q, want 0 (client_cpus)", m.Host.Affinity)
	}
}
