package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestTrxLevelFlag checks sysbench-tpcc's --trx_level on the command line:
// its values (tpcc.lua's RC, RR and SER) set the tpcc suite's isolation
// option as --isolation does, and a value tpcc.lua does not take exits 2
// naming the flag and the values it wants.
func TestTrxLevelFlag(t *testing.T) {
	for _, level := range []string{"RC", "RR", "SER"} {
		f := newRunFlags(pflag.NewFlagSet("run", pflag.ContinueOnError))
		if err := f.fs.Parse([]string{"--engine", "sqlite", "--suite", "tpcc", "--trx_level", level}); err != nil {
			t.Fatalf("--trx_level %s: %v", level, err)
		}
		s, err := f.buildSpec()
		if err != nil {
			t.Fatalf("--trx_level %s: %v", level, err)
		}
		if want := `isolation = "` + level + `"`; !strings.Contains(s.TOML(), want) {
			t.Errorf("--trx_level %s: spec lacks %q:\n%s", level, want, s.TOML())
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--trx_level", "XX"}, []string{`"--trx_level"`, `"XX"`, "want RC, RR or SER"}},
		{[]string{"--trx_level", "read-committed"}, []string{`"--trx_level"`, "want RC, RR or SER"}},
		{[]string{"--isolation", "snapshot"}, []string{`"--isolation"`, `"snapshot"`, "want rc, rr or ser"}},
	} {
		args := append([]string{"run", "--engine", "sqlite", "--suite", "tpcc", "--store",
			filepath.Join(t.TempDir(), "r.db")}, c.args...)
		code, _, stderr := run(t, Env{}, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(unwrap(stderr), w) {
				t.Errorf("%v: %q lacks %q", c.args, stderr, w)
			}
		}
	}
	code, out, _ := run(t, Env{}, "run", "--help")
	if code != 0 || !strings.Contains(out, "--trx_level level") {
		t.Errorf("run --help (exit %d) does not list --trx_level:\n%s", code, out)
	}
}
