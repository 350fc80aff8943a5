//go:build slow

package tpccdoc_test

import (
	"testing"

	"benchlab/internal/workload/tpcc/tpccdoc"
)

// TestSQLiteNormalized loads 1 warehouse at full scale (about 600,000
// documents) into FerretDB over SQLite with id_index, runs 20 transactions
// of the mix on one terminal and checks the consistency conditions. It
// took 9 minutes here (the load 3), past the main suite's budget: make
// test-slow runs it.
func TestSQLiteNormalized(t *testing.T) {
	run(t, scenario{settings: "id_index = true", events: 20}, map[string]float64{tpccdoc.FactDocument: 1,
		tpccdoc.FactDenormalized: 0, tpccdoc.FactFindAndModify: 1, tpccdoc.FactScaleFactor: 1})
}
