// Package disktest gives tests a small disk of their own, to fill or to
// mount read-only, as a full or failing disk is met in the field.
package disktest

import (
	"os"
	"os/exec"
	"testing"
)

// Small mounts a tmpfs (mount options opts, such as "size=2m" or
// "size=1m,ro") on a temp dir, returns the dir and unmounts it when the
// test ends. Mounting needs root: CI runs as root, elsewhere the test is
// skipped.
func Small(t testing.TB, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	// Lazy: a Pebble store that panicked keeps its (deleted) files open.
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}
