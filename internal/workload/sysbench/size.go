package sysbench

import (
	"fmt"

	"benchlab/internal/workload"
)

// bytesPerRow is a sysbench row's estimated peak on-disk size. Measured
// as the data dir's size after loading 1,000,000 rows (2-CPU VM): SQLite
// 217 B a row, MariaDB 10.11 378 B, PostgreSQL 15 647 B (its WAL
// included); 800 B leaves PostgreSQL a quarter more for the write tests'
// dead versions and inserts. A rough figure, to refuse a load that cannot
// fit, not to budget a disk to the byte.
const bytesPerRow = 800

// Size estimates what a run loads: tables x table_size rows in the prepare
// step, about bytesPerRow each at the run's peak.
func (Suite) Size(p workload.Params) workload.Size {
	rows := int64(p.Tables) * p.TableSize
	return workload.Size{
		Loads: map[string]int64{"prepare": rows},
		Bytes: rows * bytesPerRow,
		Basis: fmt.Sprintf("%d table(s) x %d rows (tables, table_size) x ~%d B", p.Tables, p.TableSize, bytesPerRow),
	}
}
