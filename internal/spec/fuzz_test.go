package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds spec text to Parse and Validate: any input gives a spec or
// an error, never a panic; Parse allocates at most a fixed part plus a
// multiple of the input's size (parseBound) and its error quotes the input
// at most a few times over (errorBound), so nesting or long keys cannot
// make it cost gigabytes; and an accepted spec survives its own TOML.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.toml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "")
		}
	}
	f.Add("name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nthreads = [1]\n", "smoke")
	f.Add("preset = 1\n", "credible")
	// Nesting: inline tables, arrays, dotted keys and headers, each just
	// inside and far past the depth limit, and unknown keys under them.
	for _, n := range []int{MaxSpecDepth - 1, 20, 200, 2000} {
		f.Add("x = "+strings.Repeat("{a=", n)+"1"+strings.Repeat("}", n)+"\n", "")
		f.Add("[workload]\nthreads = "+strings.Repeat("[", n)+"1"+strings.Repeat("]", n)+"\n", "")
		f.Add(strings.Repeat("a.", n)+"b = 1\n", "")
		f.Add("[["+strings.Repeat("t.", n)+"u]]\nv = {w.x.y = [[{z = 1}]]}\n", "")
	}
	// Size: many keys, one long key, and a file just past the size limit.
	f.Add(strings.Repeat("k = 1\n", 2000), "")
	f.Add(strings.Repeat("k", 4000)+" = \""+strings.Repeat("v", 4000)+"\"\n", "")
	f.Add("# "+strings.Repeat("x", MaxSpecBytes), "")
	f.Fuzz(func(t *testing.T, src, preset string) {
		var s Spec
		var err error
		n := allocated(func() { s, err = Parse([]byte(src), "fuzz.toml", preset) })
		if max := parseBound([]byte(src + preset)); n > max {
			t.Fatalf("Parse allocated %d bytes for %d bytes of input; want at most %d", n, len(src), max)
		}
		if err != nil {
			if len(err.Error()) > errorBound([]byte(src+preset)) {
				t.Fatalf("an error of %d bytes for %d bytes of input: %.200s...", len(err.Error()), len(src), err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			return
		}
		back, err := Parse([]byte(s.TOML()), "stored", "")
		if err != nil {
			t.Fatalf("a valid spec's stored TOML does not parse: %v\n%s", err, s.TOML())
		}
		if back.Name != s.Name || len(back.Targets) != len(s.Targets) {
			t.Fatalf("stored TOML changed the spec: %q/%d vs %q/%d", back.Name, len(back.Targets), s.Name, len(s.Targets))
		}
	})
}
