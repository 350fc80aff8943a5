package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds spec text to Parse and Validate: any input gives a spec or
// an error, never a panic, and an accepted spec survives its own TOML.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.toml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "")
		}
	}
	f.Add("name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nthreads = [1]\n", "smoke")
	f.Add("preset = 1\n", "credible")
	f.Fuzz(func(t *testing.T, src, preset string) {
		s, err := Parse([]byte(src), "fuzz.toml", preset)
		if err != nil {
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
