package tpcc

import (
	"fmt"

	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccgen"
)

// bytesPerWarehouse is a warehouse's estimated peak on disk at the full
// population: SQLite's data dir held 91 MB after loading one warehouse
// (598,441 rows, 2-CPU VM); twice that leaves room for servers' larger
// rows and WAL and for the orders and order lines the measured mix adds.
const bytesPerWarehouse = 200 << 20

// rowsOf is what the load writes at population sc (clause 4.3.3.1 at
// scale factor 1): the items once, and per warehouse its stock rows, 10
// districts, per district the customers, their history rows and orders,
// about 10 order lines per order and the new orders, and the warehouse.
func rowsOf(sc tpccgen.Scale) (items, perWarehouse int64) {
	perDistrict := int64(sc.Customers)*(3+10) + int64(sc.NewOrders)
	return int64(sc.Items), int64(sc.Items) + tpccgen.DistrictsPerWarehouse*(1+perDistrict) + 1
}

// Size estimates what a run loads: the items and warehouses' rows in the
// prepare step, about bytesPerWarehouse per warehouse at the run's peak
// (in proportion to the rows at a scale factor).
func (Suite) Size(p workload.Params) workload.Size {
	w := int64(opts(p).Warehouses)
	sc := opts(p).population()
	items, perWarehouse := rowsOf(sc)
	_, full := rowsOf(tpccgen.ScaleOf(1))
	bytes := max(int64(bytesPerWarehouse)*perWarehouse/full, 1<<20)
	return workload.Size{
		Loads: map[string]int64{"prepare": items + w*perWarehouse},
		Bytes: w * bytes,
		Basis: fmt.Sprintf("%d warehouse(s) (tpcc.warehouses) x ~%d MB at scale factor %g", w, max(bytes>>20, 1), sc.Factor),
	}
}
