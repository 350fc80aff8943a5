package stale

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// deadPid returns the id of a process of this host that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSweepWorkDirsServerDirs: the socket and alias dirs a managed server
// makes in the temp dir are swept like work dirs once their owner is gone,
// and only then.
func TestSweepWorkDirsServerDirs(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name, owner string) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	dead := fmt.Sprintf("%d %s\n", deadPid(t), Hostname())
	live := fmt.Sprintf("%d %s\n", os.Getpid(), Hostname())
	goneAlias := mk("bl-dir-1", dead)
	goneSock := mk("bl-sock-2", dead)
	goneWork := mk("benchlab-3", dead)
	liveSock := mk("bl-sock-4", live)
	unowned := mk("bl-dir-5", "")
	other := mk("other-6", dead)
	otherHost := mk("bl-dir-7", fmt.Sprintf("%d elsewhere.example\n", deadPid(t)))

	removed, err := SweepWorkDirs(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Errorf("removed %v, want the 3 dirs of the ended process", removed)
	}
	for _, d := range []string{goneAlias, goneSock, goneWork} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there (err %v)", d, err)
		}
	}
	for _, d := range []string{liveSock, unowned, other, otherHost} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
