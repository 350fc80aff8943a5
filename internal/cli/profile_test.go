package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/spec"
)

// TestProfileFlags: --profile sets the spec's profile_hz to 99,
// --profile-hz to its value (and implies --profile); the stored spec keeps
// it, so rerun profiles too; out-of-range rates exit 2 naming the flag.
func TestProfileFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 0},
		{[]string{"--profile"}, 99},
		{[]string{"--profile-hz", "499"}, 499},
		{[]string{"--profile", "--profile-hz", "49"}, 49},
	} {
		f, _ := buildFrom(t, append([]string{"--engine", "sqlite"}, c.args...)...)
		s, err := f.buildSpec()
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if s.ProfileHz != c.want {
			t.Errorf("%v: profile_hz %d, want %d", c.args, s.ProfileHz, c.want)
		}
		back, err := spec.ParseStored([]byte(s.TOML()), "stored spec")
		if err != nil || back.ProfileHz != c.want {
			t.Errorf("%v: stored spec reads back profile_hz %d (%v), want %d", c.args, back.ProfileHz, err, c.want)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile-hz", "0"}, "--profile-hz: 0 is not allowed"},
		{[]string{"--profile-hz", "20000"}, "--profile-hz: 20000 is not allowed"},
		{[]string{"--profile=false", "--profile-hz", "99"}, "--profile=false"},
	} {
		code, _, stderr := run(t, Env{}, append([]string{"run", "--engine", "sqlite", "--store", filepath.Join(t.TempDir(), "r.db")}, bad.args...)...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), bad.want) {
			t.Errorf("%v: exit %d %q, want %d naming %q", bad.args, code, stderr, ExitUsage, bad.want)
		}
	}
	sp := filepath.Join(t.TempDir(), "s.toml")
	writeFile(t, filepath.Dir(sp), "s.toml", "name = \"p\"\nprofile_hz = -1\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
	code, _, stderr := run(t, Env{}, "run", sp, "--store", filepath.Join(t.TempDir(), "r.db"))
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "profile_hz") {
		t.Errorf("profile_hz = -1: exit %d %q, want %d naming profile_hz", code, stderr, ExitUsage)
	}
}
