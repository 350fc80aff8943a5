package cli

import (
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestWrapLinear wraps text of thousands of words, and of words longer
// than a line, in memory linear in its length: the line breaker that
// compared every pair of words took n² memory, and on an error quoting
// 2,000 long keys looped without end (13 GB in 30 s).
func TestWrapLinear(t *testing.T) {
	many := strings.Repeat("fieldname, ", 3000)
	long := "unknown field " + strings.Repeat("x.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a, ", 1500)
	for _, s := range []string{many, long} {
		var out string
		n := allocated(func() { out = wrapLine(s) })
		if max := uint64(16*len(s) + 4096); n > max {
			t.Errorf("wrapLine allocated %d bytes for %d bytes; want at most %d", n, len(s), max)
		}
		if got := strings.Join(strings.Fields(out), " "); got != strings.TrimSpace(s) {
			t.Errorf("wrapping lost or changed words")
		}
		for _, l := range strings.Split(out, "\n") {
			if len(l) > lineWidth {
				t.Fatalf("line of %d columns: %q", len(l), l)
			}
		}
	}
	word := strings.Repeat("w", 40000)
	got := wrapLine("a b " + word + " c")
	if got != "a b\n  "+word+"\n  c" {
		t.Fatalf("a word longer than a line should stand alone on its line; got %.80q", got)
	}
}

// TestSpecBoundsCommand runs plan on the spec files that cost the machine
// (2,000 nested inline tables: 13 GB; a 10 MB nested array: a stack
// overflow; a file of 2 MB): each exits 2 with a short error naming the
// file and the limit, in bounded memory.
func TestSpecBoundsCommand(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body, want string
	}{
		{"nested.toml", "x = " + strings.Repeat("{a=", 2000) + "1" + strings.Repeat("}", 2000) + "\n",
			"nested.toml: line 1: keys, tables and arrays nest deeper than 16 levels"},
		{"arrays.toml", "x = " + strings.Repeat("[", 1<<20-10), "arrays.toml: line 1: keys, tables and arrays nest deeper"},
		{"big.toml", strings.Repeat("# a comment\n", 2<<20/12), "big.toml: more than 1048576 bytes is too large for a spec file"},
		{"keys.toml", strings.Repeat("k", 2000) + " = " + strings.Repeat("{a=", 10) + "1" + strings.Repeat("}", 10) + "\n" +
			strings.Repeat("x", 40000) + " = 1\n", "keys.toml: unknown field kkkk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, dir, c.name, c.body)
			var code int
			var stderr string
			n := allocated(func() { code, _, stderr = run(t, Env{}, "plan", p) })
			if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
				t.Fatalf("exit %d, %.300q; want exit 2 and %q", code, stderr, c.want)
			}
			if len(stderr) > 1000 {
				t.Errorf("an error of %d bytes; want a short one", len(stderr))
			}
			if max := uint64(64 << 20); n > max {
				t.Errorf("plan allocated %d bytes; want at most %d", n, max)
			}
		})
	}
}
