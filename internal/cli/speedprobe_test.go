package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/spec"
)

// TestSpeedProbeFlag: --speed-probe sets the spec's speed_probe, which the
// stored spec keeps (a rerun probes as the run did); a value that is
// neither a duration from 10ms to 10s nor "off" exits 2 naming the flag,
// and the same in a spec file names the field.
func TestSpeedProbeFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--speed-probe", "off"}, "off"},
		{[]string{"--speed-probe", "500ms"}, "500ms"},
	} {
		f, _ := buildFrom(t, append([]string{"--engine", "sqlite"}, c.args...)...)
		s, err := f.buildSpec()
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		back, err := spec.ParseStored([]byte(s.TOML()), "stored spec")
		if err != nil || s.SpeedProbe != c.want || back.SpeedProbe != c.want {
			t.Errorf("%v: speed_probe %q, stored %q (%v); want %q", c.args, s.SpeedProbe, back.SpeedProbe, err, c.want)
		}
	}
	for _, bad := range []string{"5ms", "1m", "often", "-1s"} {
		code, _, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--store", filepath.Join(t.TempDir(), "r.db"), "--speed-probe", bad)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), "--speed-probe") {
			t.Errorf("--speed-probe %s: exit %d %q, want %d naming the flag", bad, code, stderr, ExitUsage)
		}
	}
	sp := filepath.Join(t.TempDir(), "s.toml")
	writeFile(t, filepath.Dir(sp), "s.toml", "name = \"p\"\nspeed_probe = \"1h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n")
	code, _, stderr := run(t, Env{}, "run", sp, "--store", filepath.Join(t.TempDir(), "r.db"))
	if code != ExitUsage || !strings.Contains(unwrap(stderr), "speed_probe") {
		t.Errorf("speed_probe = \"1h\": exit %d %q, want %d naming speed_probe", code, stderr, ExitUsage)
	}
}
