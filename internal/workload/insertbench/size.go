package insertbench

import (
	"fmt"

	"benchlab/internal/workload"
)

// bytesPerRow is an Insert Benchmark row's estimated peak on-disk size:
// the row (about 60 bytes with 10-20 bytes of data), its primary key and
// three secondary indexes, and the write-ahead log of the churn steps.
// Measured on SQLite (2-CPU VM): 57 B a row after l.i0 loaded 200,000
// rows, 142 B with the indexes after l.i1, and a data dir of 240 MB (1,140
// B a row, its WAL included) at l.i1's end.
const bytesPerRow = 1200

// Size estimates what a run loads: l.i0 writes rows; every row loaded or
// inserted later takes about bytesPerRow at the run's peak.
func (Suite) Size(p workload.Params) workload.Size {
	o := opts(p)
	return workload.Size{
		Loads: map[string]int64{"l.i0": o.Rows},
		Bytes: (o.Rows + o.Inserts) * bytesPerRow,
		Basis: fmt.Sprintf("(%d rows + %d inserts) (insert.rows, insert.inserts) x ~%d B", o.Rows, o.Inserts, bytesPerRow),
	}
}
