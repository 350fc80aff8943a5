package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestClientPinnedThroughRun runs an experiment with client_cpus = "0" in a
// child process (pinning would otherwise bind this test binary): the run's
// manifest records that benchlab ran on CPU 0 only.
func TestClientPinnedThroughRun(t *testing.T) {
	if args := os.Getenv("BENCHLAB_CLI_CHILD"); args != "" {
		os.Exit(Main(OSEnv(), strings.Split(args, "\x1f")))
	}
	dir := t.TempDir()
	sp := writeFile(t, dir, "pin.toml", "name = \"pin\"\nclient_cpus = \"0\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+
		pointQueryWorkload)
	storeFile := filepath.Join(dir, "r.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestClientPinnedThroughRun$")
	cmd.Env = append(os.Environ(), "BENCHLAB_CLI_CHILD="+strings.Join([]string{"run", sp, "--store", storeFile}, "\x1f"))
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
