package tpcc

import (
	"fmt"

	"benchlab/internal/workload"
)

// Rows the load writes: 100,000 items once, and per warehouse 100,000
// stock rows, 10 districts, 30,000 customers, 30,000 history rows, 30,000
// orders, 9,000 new orders and about 300,000 order lines (clause 4.3.3.1).
const (
	itemRows         = 100_000
	rowsPerWarehouse = 100_000 + 10 + 30_000 + 30_000 + 30_000 + 9_000 + 300_000 + 1
	// bytesPerWarehouse is a warehouse's estimated peak on disk: SQLite's
	// data dir held 91 MB after loading one warehouse (598,441 rows, 2-CPU
	// VM); twice that leaves room for servers' larger rows and WAL and for
	// the orders and order lines the measured mix adds.
	bytesPerWarehouse = 200 << 20
)

// Size estimates what a run loads: the items and warehouses' rows in the
// prepare step, about bytesPerWarehouse per warehouse at the run's peak.
func (Suite) Size(p workload.Params) workload.Size {
	w := int64(opts(p).Warehouses)
	return workload.Size{
		Loads: map[string]int64{"prepare": itemRows + w*rowsPerWarehouse},
		Bytes: w * bytesPerWarehouse,
		Basis: fmt.Sprintf("%d warehouse(s) (tpcc.warehouses) x ~%d MB", w, bytesPerWarehouse>>20),
	}
}
