package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCalibrateBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rounds", "0"}, "flag --rounds: 0 is not allowed"},
		{[]string{"--copies", "1"}, "flag --copies: 1 is not allowed"},
		{[]string{"--effects", "0.1,2"}, `flag --effects: "2" is not allowed`},
		{[]string{"--alpha", "1.5"}, "flag --alpha: 1.5 is not allowed"},
		{[]string{"--time", "soon"}, "time"},
		{[]string{"--quick", "--rounds", "3"}, "flag --rounds: not with --quick"},
		{[]string{"--sequential", "--rounds", "3"}, "flag --rounds: not with --sequential"},
		{[]string{"--sequential", "--interleave", "20ms"}, "flag --interleave: not with --sequential"},
		{[]string{"--sequential", "--quick"}, "flag --sequential: not with --quick"},
		{[]string{"--rejudge", "--rounds", "3"}, "flag --rounds: not with --rejudge"},
		{[]string{"--rejudge"}, "flag --store: "},
	} {
		dir := t.TempDir()
		args := append([]string{"calibrate", "--store", filepath.Join(dir, "c.db")}, c.args...)
		code, _, stderr := run(t, Env{}, args...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, ExitUsage, c.want)
		}
	}
}

// TestCalibrateTiny runs the smallest calibration: two planted experiments
// of base, one copy and a 30% target, 2 repeats, no gate trials. It checks
// the tables' shape and counts (2 rounds x 5 tests = 10 A/A cells, 2 x 3
// loop tests = 6 planted cells at 2 repeats, twice as many at 1 repeat,
// where each repeat is a comparison of its own), not the rates, which
// depend on the machine.
func TestCalibrateTiny(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, Env{}, "calibrate", "--store", filepath.Join(dir, "c.db"), "--rounds", "2", "--copies", "2",
		"--effects", "0.3", "--repeats", "2", "--time", "100ms", "--gate-trials", "0")
	if code != 0 {
		t.Fatalf("calibrate exit %d\n%s\n%s", code, out, stderr)
	}
	for _, re := range []string{
		// one run each, no history: no verdict at all; each of the 2 repeats
		// is a single-run comparison of its own, so 20 cells at 1 repeat
		`(?m)^ +no history +1 +0/20 \(0\.0%\) +repeats 20 *$`,
		`(?m)^ +noise prior +2 +\d+/10 \(`,
		`(?m)^ +evidence +repeats +30% \(measured x\d+\.\d{3} \[\d+\.\d{3}-\d+\.\d{3}\]\) *$`,
		`(?m)^ +noise prior +2 +\d/6 \(`,
		`(?m)^ +noise prior +1 +\d+/12 \(`,
		`notes: 10 A/A cells per row, fewer than 200`,
		// the memory canaries bracketing every run
		`notes: memory canary \(32 MiB walk, Mloads/s\): before the runs median \d+\.\d\d \[\d+\.\d\d-\d+\.\d\d\], after \d+\.\d\d \[`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	// --rejudge runs nothing and judges the same stored experiments the
	// same way: the tables are those above, sizes read from the store.
	code, again, stderr := run(t, Env{}, "calibrate", "--rejudge", "--store", filepath.Join(dir, "c.db"))
	if code != 0 {
		t.Fatalf("calibrate --rejudge exit %d\n%s\n%s", code, again, stderr)
	}
	tables := func(s string) string { return s[strings.Index(s, "A/A false alarms"):] }
	if !strings.HasPrefix(again, "calibrate --rejudge: 2 planted experiments (base + 1 identical targets + effects 30%, 2 repeats), 0 gate trials") ||
		tables(again) != tables(out) {
		t.Errorf("rejudged:\n%s\nwant the tables of the run:\n%s", again, tables(out))
	}
}
