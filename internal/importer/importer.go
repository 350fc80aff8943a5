// Package importer reads the output files of other benchmark tools
// (sysbench 1.0.20, RocksDB's db_bench, pgbench, fio's JSON) into the
// store's results, so that
// `benchlab import` can keep runs it did not make next to its own and
// report, compare and export them alike. One file is one run: its results
// at the thread counts it ran, the tool's version line and the figures the
// tool printed. What a file does not print (CPU and IO use, the host, the
// percentiles the tool left out) stays absent.
package importer

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Tool names as the store keeps them (store.ImportSource.Tool).
const (
	Sysbench = "sysbench"
	DBBench  = "db_bench"
)

// ToolNames are the values `--tool` takes, each with the tool it names.
var ToolNames = map[string]string{"sysbench": Sysbench, "dbbench": DBBench, "db_bench": DBBench, "pgbench": PGBench, "fio": FIO}

// LookupTool returns the tool a --tool value names ("dbbench" and
// "db_bench" both name db_bench), and whether it is known.
func LookupTool(name string) (string, bool) {
	t, ok := ToolNames[strings.ToLower(name)]
	return t, ok
}

// Output is what one file of a tool's output holds: one run.
type Output struct {
	// Tool is Sysbench or DBBench.
	Tool string
	// Version is the tool's version line, "" when the file has none.
	Version string
	// EngineVersion is the engine's version the output states (RocksDB's
	// for db_bench), "" when it states none (sysbench prints its own).
	EngineVersion string
	// Date is when the output says the run began (db_bench's "Date:"),
	// zero when it does not say.
	Date time.Time
	// Results are the measured results in the order the file prints
	// them; Test, Threads, counts, latency and intervals are set, RunID
	// and Seq are not.
	Results []store.Result
}

// Error is a file that cannot be imported: the file, the 1-based line (0
// when the problem is the file as a whole) and what was expected.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Options are what the command line says of the files where the files
// cannot say it themselves.
type Options struct {
	// Test names the test of every result of a sysbench file (sysbench
	// does not print which test ran); "" takes it from the file's name
	// (TestFromFile). db_bench's results are named by their benchmarks.
	Test string
	// Threads is the thread count of a db_bench file, which db_bench does
	// not print; 0 takes it from the interval reports' thread numbers, or
	// leaves it unknown (0). A sysbench file prints its own, and one that
	// disagrees with Threads is refused.
	Threads int
}

// MaxInputBytes is the largest file import reads: a day of sysbench's
// per-second lines is about 13 MB; more is not a tool's output of one run.
const MaxInputBytes = 32 << 20

// ReadInput reads one file's bytes from r, at most MaxInputBytes, and
// stops at once at a NUL byte (a binary file, or /dev/zero), so that a
// wrong argument costs neither the time nor the memory of reading it all.
func ReadInput(file, tool string, r io.Reader) ([]byte, error) {
	// Chunks of their own, joined once at the end: the bytes are copied
	// twice at most, never regrown.
	var chunks [][]byte
	total, lines := 0, 0
	for {
		buf := make([]byte, 64<<10)
		n, err := io.ReadFull(r, buf)
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return nil, errorf(file, 1+lines+bytes.Count(buf[:i], []byte("\n")), "a NUL byte: not a text file; want %s", want(tool))
		}
		if total += n; total > MaxInputBytes {
			return nil, errorf(file, 0, "more than %d bytes (%d MiB): too large for one run's output; want %s",
				MaxInputBytes, MaxInputBytes>>20, want(tool))
		}
		lines += bytes.Count(buf[:n], []byte("\n"))
		chunks = append(chunks, buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return bytes.Join(chunks, nil), nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the %s output: %w", tool, err)
		}
	}
}

// Parse reads file (its name, for errors, and its bytes) as the output of
// tool (Sysbench or DBBench).
func Parse(tool, file string, data []byte, o Options) (*Output, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errorf(file, 0, "the file is empty; want %s", want(tool))
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, errorf(file, 1+bytes.Count(data[:i], []byte("\n")), "a NUL byte: not a text file; want %s", want(tool))
	}
	if tool == Sysbench && data[len(data)-1] != '\n' {
		// sysbench ends its output with a newline; a file without one
		// was cut, perhaps inside a figure.
		return nil, errorf(file, 1+bytes.Count(data, []byte("\n")), "the file ends inside this line (no newline after it): "+
			"the file is truncated; want the whole output of `sysbench <test> run`")
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if other, at := formatOf(lines); other != "" && other != tool {
		return nil, errorf(file, at, "this is %s output, not %s's; import it with --tool %s",
			other, tool, map[string]string{Sysbench: "sysbench", DBBench: "dbbench", PGBench: "pgbench", FIO: "fio"}[other])
	}
	switch tool {
	case PGBench, FIO:
		test := o.Test
		if test == "" {
			test = TestFromFile(file)
		}
		if tool == FIO {
			return parseFIO(file, data, test, o.Threads)
		}
		return parsePGBench(file, lines, test, o.Threads)
	case Sysbench:
		test := o.Test
		if test == "" {
			test = TestFromFile(file)
		}
		return parseSysbench(file, lines, test, o.Threads)
	case DBBench:
		return parseDBBench(file, string(data), lines, o.Threads)
	}
	return nil, fmt.Errorf("import: unknown tool %q; want sysbench, dbbench, pgbench or fio", tool)
}

// want says what a file of tool should hold, for errors.
func want(tool string) string {
	switch tool {
	case PGBench:
		return "pgbench's output (its summary: \"number of clients:\", \"number of transactions actually processed:\", \"tps = ...\")"
	case FIO:
		return "fio's JSON output (fio --output-format=json)"
	}
	if tool == DBBench {
		return "db_bench's output (result lines \"<benchmark> : N micros/op N ops/sec ...\")"
	}
	return "sysbench's output (\"sysbench 1.0.20 ...\", then per-interval lines and the summary with \"General statistics:\")"
}

var (
	sysbenchVersion = regexp.MustCompile(`^sysbench \d+\.\d+`)
	dbbenchResult   = regexp.MustCompile(`^\S+\s+:\s+[0-9.]+ micros/op`)
)

// formatOf recognises the tool whose output lines are, by the first line
// only that tool prints, and returns it with its 1-based line; "" when
// no line says.
func formatOf(lines []string) (string, int) {
	for i, l := range lines {
		switch {
		case sysbenchVersion.MatchString(l), l == "SQL statistics:", l == "General statistics:":
			return Sysbench, i + 1
		case strings.HasPrefix(l, "RocksDB:") && strings.Contains(l, "version"), dbbenchResult.MatchString(lastCR(l)):
			return DBBench, i + 1
		case pgbenchVersion.MatchString(l), strings.HasPrefix(l, "transaction type: "):
			return PGBench, i + 1
		case strings.Contains(l, `"fio version"`):
			return FIO, i + 1
		}
	}
	return "", 0
}

// lastCR is what a terminal shows of a line that progress output rewrote
// with carriage returns: the part after the last one.
func lastCR(l string) string {
	if i := strings.LastIndexByte(l, '\r'); i >= 0 {
		return l[i+1:]
	}
	return l
}

var repeatSuffix = regexp.MustCompile(`[._-]\d+$`)

// TestFromFile names a test after its file: the base name without its
// extension and without a trailing repeat number, so that
// point-query.1.txt and point-query.2.txt are two repeats of point-query.
func TestFromFile(file string) string {
	base := filepath.Base(file)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	if t := repeatSuffix.ReplaceAllString(base, ""); t != "" {
		return t
	}
	return base
}

// groupOf is the report group of an imported test: the group of the
// native test of that name when a linked suite has one (sysbench's
// point-query, kv's readrandom), else METHOD.md 2.7's grouping by name for
// sysbench ("point" reads, "delete|insert|update|write" writes), else
// none.
func groupOf(tool, test string) (family, group string) {
	suite := map[string]string{Sysbench: "sysbench", DBBench: "kv"}[tool]
	if s, ok := workload.Lookup(suite); ok {
		if i := slices.IndexFunc(s.Tests(), func(t workload.Test) bool { return t.Name == test }); i >= 0 {
			t := s.Tests()[i]
			return t.Family, t.Group
		}
	}
	if tool != Sysbench {
		return test, ""
	}
	for _, w := range []string{"delete", "insert", "update", "write"} {
		if strings.Contains(test, w) {
			return test, "writes"
		}
	}
	if strings.Contains(test, "point") {
		return test, "point queries"
	}
	return test, ""
}
