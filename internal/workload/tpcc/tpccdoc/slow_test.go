//go:build slow

package tpccdoc_test

import (
	"testing"

	"benchlab/internal/workload/tpcc/tpccdoc"
)

// TestSQLiteNormalized loads 1 warehouse (about 600,000 documents) into
// FerretDB over SQLite, runs the mix for 60 s on one terminal and checks
// the consistency conditions. It takes about 8 minutes here (the load alone
// 2 to 4), past the main suite's budget: make test-slow runs it.
func TestSQLiteNormalized(t *testing.T) {
	run(t, scenario{events: 20}, map[string]float64{tpccdoc.FactDocument: 1, tpccdoc.FactDenormalized: 0, tpccdoc.FactFindAndModify: 1, tpccdoc.FactScaleFactor: 1})
}
