package engine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := DirBytes(dir); err != nil || n < 1<<20 {
		t.Errorf("DirBytes = %d, %v; want at least the 1 MiB file", n, err)
	}
	if _, err := DirBytes(filepath.Join(dir, "missing")); err == nil {
		t.Error("DirBytes of a missing dir: want an error")
	}
}
