package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"benchlab/internal/importer"
)

// importerMax is the largest file import reads.
const importerMax = importer.MaxInputBytes

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

// TestHugeCountsRefused gives run --dry-run and plan counts and durations
// far past any experiment: each exits 2 at once, naming the flag or field
// and its limit. --tables 1000000000 used to grow the plan without bound
// (160 GB), --time 1e308 printed a negative duration; the tables here are
// 10^6, which the old code planned in 3 s and 170 MB before it refused
// the disk space, so that this test fails there without costing the
// machine.
func TestHugeCountsRefused(t *testing.T) {
	dir := t.TempDir()
	spec := func(name, workload string) string {
		return writeFile(t, dir, name, "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\n"+workload+"\n")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--tables", "1000000"}, "flag --tables: 1000000 is not allowed; want 1 to 100000"},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--table-size", "100000000000"}, "flag --table-size: 100000000000 is not allowed; want 0 to 10000000000 rows"},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--repeats", "1000000"}, "flag --repeats: 1000000 is not allowed; want 1 to 1000"},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--threads", "1,100000"}, `flag --threads: "100000" is not allowed; want integers from 1 to 4096`},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--events", "9000000000000000000"}, "flag --events: 9000000000000000000 is not allowed; want a count from 0 (no limit) to 1000000000000"},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--time", "1e308"}, `flag --time: "1e308" is too long: a duration holds at most 9223372036 seconds`},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--warmup", "NaN"}, `flag --warmup: "NaN" is negative or not a number`},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--suite", "insert", "--query-time", "1e300"}, `"1e300" is too long`},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--time", "31d"}, `flag --time: "31d" is not a duration`},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--time", "2678400"}, "workload.read_time: 744h0m0s is not allowed; want a duration from 1ms to 720h0m0s"},
		{[]string{"run", "--engine", "sqlite", "--dry-run", "--time", "2592000", "--repeats", "1000"}, "planned for 10 years or more, which cannot be meant"},
		{[]string{"import", "--tool", "sysbench", "--threads", "1000000", "--store", dir + "/i.db", "--target", "a=" + dir + "/none.txt"},
			"flag --threads: 1000000 is not allowed; want the thread count the files ran, 1 to 4096"},
		{[]string{"plan", spec("tables.toml", "tables = 1000000")}, "workload.tables: 1000000 is not allowed; want 1 to 100000"},
		{[]string{"plan", spec("size.toml", "table_size = 100000000000")}, "workload.table_size: 100000000000 is not allowed; want 0 to 10000000000 rows"},
		{[]string{"plan", spec("events.toml", "events = 9000000000000000000")}, "workload.events: 9000000000000000000 is not allowed"},
		{[]string{"plan", spec("time.toml", "read_time = \"2562047h\"")}, "workload.read_time: 2562047h0m0s is not allowed; want a duration from 1ms to 720h0m0s"},
		{[]string{"plan", spec("wait.toml", "postwrite_wait = \"1000h\"")}, "workload.postwrite_wait: 1000h0m0s is not allowed"},
		{[]string{"plan", spec("threads.toml", "threads = ["+strings.Repeat("1, ", 200)+"1]")}, "workload.threads: 201 thread counts is too many; want at most 100"},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			code, out, stderr := run(t, Env{}, c.args...)
			if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
				t.Fatalf("exit %d, stdout %.200q, stderr %q; want exit 2 and %q", code, out, stderr, c.want)
			}
		})
	}
}

// TestImportBounded imports what cost the machine or passed as a result: a
// file larger than any run's output (/dev/zero read 3.2 GB in 6 s; the
// file here is 33 MiB of text, which the old code read whole), a binary
// file, and a sysbench output cut inside its "95th percentile:" line
// (imported with p95 = 0). Each exits 2 naming the file and what is wrong.
func TestImportBounded(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.txt", strings.Repeat("sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n", 33<<20/51+1))
	bin := writeFile(t, dir, "bin.txt", strings.Repeat("x\n", 100<<10)+"\x00")
	whole, err := os.ReadFile("../importer/testdata/sysbench-point-select.txt")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(whole, []byte("95th percentile:"))
	i += bytes.IndexByte(whole[i:], '.') + 1
	cut := writeFile(t, dir, "cut.txt", string(whole[:i]))
	for _, c := range []struct{ file, want string }{
		{big, "big.txt: more than 33554432 bytes (32 MiB): too large for one run's output"},
		{bin, "bin.txt line 102401: a NUL byte: not a text file"},
		{cut, "cut.txt line 34: the file ends inside this line (no newline after it): the file is truncated"},
	} {
		var code int
		var stderr string
		n := allocated(func() {
			code, _, stderr = run(t, Env{}, "import", "--tool", "sysbench", "--store", filepath.Join(dir, "r.db"), "--target", "a="+c.file)
		})
		if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
			t.Fatalf("exit %d, %q; want exit 2 and %q", code, stderr, c.want)
		}
		if n > 3*importerMax {
			t.Errorf("%s: import allocated %d bytes; want at most %d", c.file, n, 3*importerMax)
		}
	}
}

// FuzzWrap wraps arbitrary text: no word is lost or changed, a line passes
// the width only when it is one word, and the memory taken is linear in
// the text (the line breaker before took n² in words, and looped without
// end on long words).
func FuzzWrap(f *testing.F) {
	f.Add("unknown field "+strings.Repeat("x.a.a.a.a, ", 300), 40)
	f.Add(strings.Repeat("w", 50000)+" a b", 118)
	f.Add("  lead  and  double  spaces\nand newlines ", 10)
	f.Add("é ünïcode 名前 "+strings.Repeat("名", 200), 5)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width < 1 || width > 1000 {
			return
		}
		var lines []string
		n := allocated(func() { lines = wrapWords(s, width) })
		if max := uint64(16*len(s) + 4096); n > max {
			t.Fatalf("allocated %d bytes for %d bytes of text; want at most %d", n, len(s), max)
		}
		isSpace := func(r rune) bool { return r == ' ' || r == '\n' }
		if got, want := strings.Join(lines, " "), strings.Join(strings.FieldsFunc(s, isSpace), " "); got != want {
			t.Fatalf("words changed: %q; want %q", got, want)
		}
		for _, l := range lines {
			if len([]rune(l)) > width && len(strings.FieldsFunc(l, isSpace)) > 1 {
				t.Fatalf("line of %d columns over %d with several words: %q", len([]rune(l)), width, l)
			}
		}
	})
}
