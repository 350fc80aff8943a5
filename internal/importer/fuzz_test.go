package importer_test

import (
	"errors"
	"os"
	"testing"

	"benchlab/internal/importer"
)

// FuzzParse feeds arbitrary text to both tools' parsers, seeded with the
// real outputs under testdata (see fuzzParsers for what must hold).
func FuzzParse(f *testing.F) {
	fuzzParsers(f, []string{importer.Sysbench, importer.DBBench}, "sysbench-point-select.txt",
		"sysbench-read-write-p99.txt", "sysbench-truncated.txt", "dbbench-intervals.txt", "dbbench-truncated.txt")
}

// fuzzParsers feeds arbitrary bytes to the parsers of tools, seeded with
// the files seeds under testdata: results or an *importer.Error naming the
// file for any input, never a panic; every result has a test, a thread
// count and no negative count or time.
func fuzzParsers(f *testing.F, tools []string, seeds ...string) {
	for _, name := range seeds {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tool := range tools {
			out, err := importer.Parse(tool, "f.txt", data, importer.Options{})
			if err != nil {
				var ie *importer.Error
				if !errors.As(err, &ie) || ie.File != "f.txt" {
					t.Fatalf("%s: %v; want an *importer.Error naming f.txt", tool, err)
				}
				continue
			}
			if len(out.Results) == 0 {
				t.Fatalf("%s: no result and no error", tool)
			}
			for _, r := range out.Results {
				if r.Test == "" || r.Threads <= 0 || r.Events < 0 || r.Statements < 0 || r.Seconds < 0 || r.Errors < 0 {
					t.Fatalf("%s: result %+v", tool, r)
				}
			}
		}
	})
}
