package spec

import (
	"fmt"
	"os"
	"path/filepath"
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

// parseBound is the most Parse may allocate for src: a fixed part (every
// suite's defaults) plus a multiple of its size. It is what FuzzParse
// checks too; a spec of 2,000 nested inline tables took 1.6 GB from an
// 8 KB file before the depth limit.
func parseBound(src []byte) uint64 { return 1<<20 + 1024*uint64(len(src)) }

// errorBound is the longest error Parse may return for src: the error
// quotes the input, escaped, at most once.
func errorBound(src []byte) int { return 1024 + 8*len(src) }

// TestParseBounds gives Parse what used to cost the machine (nesting that
// took gigabytes or overflowed the decoder's stack, a file too large) and
// wants a short error naming the file and the limit, in bounded memory.
func TestParseBounds(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"nested inline tables", "x = " + strings.Repeat("{a=", 2000) + "1" + strings.Repeat("}", 2000) + "\n",
			"line 1: keys, tables and arrays nest deeper than 16 levels"},
		{"nested inline tables, shallower", "x = " + strings.Repeat("{a=", 200) + "1" + strings.Repeat("}", 200) + "\n",
			"nest deeper than 16"},
		{"nested arrays of 10 MB", "name = \"x\"\nx = " + strings.Repeat("[", 10<<20), "too large for a spec file"},
		{"nested arrays under the size limit", "name = \"x\"\n\nx = " + strings.Repeat("[", 1<<19), "line 3: keys, tables"},
		{"dotted key", strings.Repeat("a.", 20000) + "a = 1\n", "nest deeper than 16"},
		{"dotted table header", "[" + strings.Repeat("a.", 20000) + "a]\n", "nest deeper than 16"},
		{"array of tables under a deep header", "[" + strings.Repeat("a.", 15) + "a]\n[[b]]\nc = [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]\n",
			"line 3: keys"},
		{"too large", "# " + strings.Repeat("x", MaxSpecBytes) + "\n", "1048579 bytes is too large for a spec file; want at most 1048576"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Parse([]byte(c.src), "deep.toml", "") })
			if err == nil || !IsInvalid(err) || !strings.HasPrefix(err.Error(), "deep.toml: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want a validation error naming deep.toml with %q", err, c.want)
			}
			if n > parseBound([]byte(c.src)) {
				t.Errorf("Parse allocated %d bytes for %d bytes of input; want at most %d", n, len(c.src), parseBound([]byte(c.src)))
			}
			if len(err.Error()) > 300 {
				t.Errorf("error of %d bytes; want a short one", len(err.Error()))
			}
		})
	}
}

// TestParseDepthAllowed keeps what real specs nest: table headers,
// arrays of tables, inline tables in arrays, and strings and comments
// holding brackets and dots, none of which count.
func TestParseDepthAllowed(t *testing.T) {
	src := `name = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t [[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{{{"
# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w
[[target]]
name = 'x'
engine = "sqlite"
[target.settings]
"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s" = """[[[[[[[[[[[[[[[[[[[[
.........................."""
[workload]
threads = [1, 2]
tests = ["point-query"]
[workload.kv]
value_size = 100
`
	if err := checkShape([]byte(src), "ok.toml", MaxSpecBytes); err != nil {
		t.Fatalf("a plain spec is refused: %v", err)
	}
	files, _ := filepath.Glob("../../examples/*.toml")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkShape(b, p, MaxSpecBytes); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestUnknownKeysListed keeps the unknown-field error short whatever the
// file holds: children of an unknown table are left out, long keys cut,
// and past ten keys a count.
func TestUnknownKeysListed(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		b.WriteString("k" + strings.Repeat("x", 1000) + "_" + string(rune('a'+i%26)) + strings.Repeat("y", i) + " = {a = {b = 1}}\n")
	}
	src := []byte(b.String())
	_, err := Parse(src, "keys.toml", "")
	if err == nil || !strings.Contains(err.Error(), "keys.toml: unknown field kxxx") || !strings.Contains(err.Error(), "... and 490 more;") {
		t.Fatalf("got %v; want the first ten unknown keys cut short and a count of the rest", err)
	}
	if strings.Contains(err.Error(), ".a") || len(err.Error()) > errorBound(nil) {
		t.Fatalf("error of %d bytes lists the keys' children or whole keys: %.300s", len(err.Error()), err)
	}
	if got := listKeys([]string{"workload.x", "a", "a.b", "a.b.c", `"a.b".c`, "b"}); got != `workload.x, a, "a.b".c, b` {
		t.Fatalf("listKeys: %q", got)
	}
}

// TestLoadTooLarge refuses a spec file over the limit without reading it
// all: /dev/zero ends the same way, after MaxSpecBytes.
func TestLoadTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(p, []byte("name = \"x\"\n"+strings.Repeat("# padding\n", MaxSpecBytes/10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, "/dev/zero"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		var err error
		n := allocated(func() { _, err = Load(path, "") })
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), path+": more than 1048576 bytes is too large for a spec file") {
			t.Fatalf("%s: got %v; want the size limit named", path, err)
		}
		if n > 8*MaxSpecBytes {
			t.Fatalf("%s: Load allocated %d bytes; want at most %d", path, n, 8*MaxSpecBytes)
		}
	}
}

// TestTargetsBounded refuses a sweep of more values than any experiment
// runs (each is a target, a run per repeat, and a full target in the
// stored spec), and reads back a stored spec larger than a spec file may
// be.
func TestTargetsBounded(t *testing.T) {
	vals := make([]string, MaxTargets+1)
	for i := range vals {
		vals[i] = fmt.Sprint(-i - 1)
	}
	src := "name = \"s\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[target.sweep]\nsetting = \"cache_size\"\nvalues = [" +
		strings.Join(vals, ", ") + "]\n[workload]\nthreads = [1]\n"
	s, err := Parse([]byte(src), "sweep.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil || err.Error() != "target: 1001 targets (sweep values included) is too many; want at most 1000" {
		t.Fatalf("got %v; want the targets' limit named", err)
	}
	stored := "name = \"s\"\n" + strings.Repeat("# a stored comment line\n", 2*MaxSpecBytes/24) +
		"[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nthreads = [1]\n"
	if _, err := Parse([]byte(stored), "file", ""); err == nil || !strings.Contains(err.Error(), "too large for a spec file") {
		t.Fatalf("Parse of %d bytes: %v; want the size limit", len(stored), err)
	}
	if sp, err := ParseStored([]byte(stored), "stored"); err != nil || sp.Targets[0].Name != "a" {
		t.Fatalf("ParseStored of %d bytes: %v", len(stored), err)
	}
}
