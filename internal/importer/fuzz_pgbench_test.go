package importer_test

import (
	"testing"

	"benchlab/internal/importer"
)

// FuzzParsePGBenchFIO feeds arbitrary bytes to the pgbench and fio
// parsers, seeded with their real outputs under testdata (see
// fuzzParsers for what must hold).
func FuzzParsePGBenchFIO(f *testing.F) {
	fuzzParsers(f, []string{importer.PGBench, importer.FIO}, "pgbench-tpcb.1.txt", "pgbench-mixed.txt",
		"pgbench-transactions.txt", "fio-randread-2jobs.json")
}
