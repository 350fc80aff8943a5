package importer_test

import (
	"errors"
	"os"
	"testing"

	"benchlab/internal/importer"
)

// FuzzParsePGBenchFIO feeds arbitrary bytes to the pgbench and fio
// parsers, seeded with their real outputs under testdata: results or an
// *importer.Error naming the file, never a panic; every result has a test,
// a thread count and no negative count or time.
func FuzzParsePGBenchFIO(f *testing.F) {
	for _, name := range []string{"pgbench-tpcb.1.txt", "pgbench-mixed.txt", "pgbench-transactions.txt", "fio-randread-2jobs.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tool := range []string{importer.PGBench, importer.FIO} {
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
