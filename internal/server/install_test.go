package server

import (
	"context"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReachableBy checks the test PostgreSQL relies on under root: a dir the
// postgres user cannot enter is named.
func TestReachableBy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (to test another user's view)")
	}
	if _, err := user.Lookup("postgres"); err != nil {
		t.Skip("no postgres user")
	}
	top := t.TempDir()
	os.Chmod(filepath.Dir(top), 0o755)
	os.Chmod(top, 0o755)
	closed := filepath.Join(top, "closed")
	prog := filepath.Join(closed, "bin", "postgres")
	os.MkdirAll(filepath.Dir(prog), 0o755)
	os.WriteFile(prog, []byte("x"), 0o755)
	os.Chmod(closed, 0o700)
	err := ReachableBy("postgres", prog)
	if err == nil || !strings.Contains(err.Error(), "cannot enter "+closed+" (drwx------)") {
		t.Errorf("a 0700 dir on the way: %v", err)
	}
	os.Chmod(closed, 0o711)
	if err := ReachableBy("postgres", prog); err != nil {
		t.Errorf("o+x on the way: %v", err)
	}
	os.Chmod(prog, 0o744)
	if err := ReachableBy("postgres", prog); err == nil || !strings.Contains(err.Error(), "cannot execute") {
		t.Errorf("a program without o+x: %v", err)
	}
	if err := ReachableBy("root", prog); err != nil {
		t.Errorf("root: %v", err)
	}
}

// TestRemoveStaleInstalls checks that an install cleans what killed installs
// of the same release left (unpack dirs older than the age given) and keeps
// a recent one, which may belong to an install still running, and the dirs
// of other releases.
func TestRemoveStaleInstalls(t *testing.T) {
	root := t.TempDir()
	dest := filepath.Join(root, "16.15")
	stale := filepath.Join(root, ".16.15.installing-111")
	recent := filepath.Join(root, ".16.15.installing-222")
	other := filepath.Join(root, ".12.22.installing-333")
	for _, d := range []string{stale, recent, other} {
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, d := range []string{stale, other} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	removeStaleInstalls(dest, time.Hour, &log)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale unpack dir still there (%v)", err)
	}
	for _, d := range []string{recent, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if !strings.Contains(log.String(), stale) {
		t.Errorf("log %q does not name the removed dir", log.String())
	}
}

// TestInstallUnknownEngine refuses a release of an engine without a server
// family instead of installing it as MySQL.
func TestInstallUnknownEngine(t *testing.T) {
	_, _, err := Install(context.Background(), nil, Release{Engine: "oracle", Version: "23.1"}, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"oracle"`) {
		t.Errorf("got %v, want an error naming the engine", err)
	}
}
