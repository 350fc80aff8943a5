package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"benchlab/internal/profile"
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

// TestProfileThroughRun runs two SQLite targets with --profile and reads
// the why back: the report has a CPU profile table for point-query, b
// against a, and report --folded writes the base's stacks, every one rooted
// at this process's name; bad --folded uses exit 2.
func TestProfileThroughRun(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	dir := t.TempDir()
	sp := writeFile(t, dir, "p.toml", "name = \"p\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+
		"[[target]]\nname = \"b\"\nengine = \"sqlite\"\n[target.settings]\ncache_size = \"-100\"\n"+pointQueryWorkload)
	db := filepath.Join(dir, "r.db")
	code, out, stderr := run(t, Env{}, "run", sp, "--store", db, "--profile-hz", "199")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = run(t, Env{}, "report", "--store", db)
	// The title names both targets, each with its profile's coverage.
	if code != 0 || !strings.Contains(out, "CPU profile: point-query") || !regexp.MustCompile(`\bb( \(coverage \d+%\))? vs a\b`).MatchString(out) {
		t.Errorf("report: exit %d %s, want a CPU profile table for point-query, b vs a:\n%s", code, stderr, out)
	}
	folded := filepath.Join(dir, "pq.folded")
	if code, _, stderr = run(t, Env{}, "report", "--store", db, "--folded", folded, "--test", "point-query"); code != 0 {
		t.Fatalf("report --folded: exit %d %s", code, stderr)
	}
	text, err := os.ReadFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	st, err := profile.Parse(text)
	if err != nil || st.Samples() == 0 {
		t.Fatalf("folded stacks: %v, %d samples:\n%s", err, st.Samples(), text)
	}
	comm := filepath.Base(os.Args[0])
	comm = comm[:min(len(comm), 15)]
	for k := range st {
		if !strings.HasPrefix(k, comm+";") {
			t.Errorf("stack %q not rooted at %s", k, comm)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--folded", folded}, "--test"},
		{[]string{"--test", "point-query"}, "only with --folded"},
		{[]string{"--folded", folded, "--test", "nope"}, "its tests are point-query"},
		{[]string{"--folded", folded, "--test", "point-query", "--target", "c"}, "its targets are a, b"},
	} {
		code, _, stderr := run(t, Env{}, append([]string{"report", "--store", db}, bad.args...)...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), bad.want) {
			t.Errorf("%v: exit %d %q, want %d naming %q", bad.args, code, stderr, ExitUsage, bad.want)
		}
	}
}
