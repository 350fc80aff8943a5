package cluster

import (
	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"context"
	"fmt"
	"io"
	"strings"
)

// The scenarios' tables.
const (
	counterTable = "cluster_counter"
	rowsTable    = "cluster_rows"
	// ackTable holds failover's probe writes, one sequence number each,
	// to count the acknowledged ones a failover lost.
	ackTable = "cluster_acks"
)

// setupStep creates the counter row and the rows table, through the DB's
// own address (the proxy's or the primary's); the cluster replicates them.
func setupStep(rows int) workload.Step {
	return workload.Step{
		Name: "cluster.setup", Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			_, c, err := workload.ConnectSQL(ctx, db, "cluster.setup")
			if err != nil {
				return workload.Tally{}, err
			}
			defer c.Close()
			var t workload.Tally
			exec := func(q string) error {
				t.Statements++
				if _, err := c.Exec(ctx, q); err != nil {
					return fmt.Errorf("cluster.setup: %s: %w", q, err)
				}
				return nil
			}
			for _, q := range []string{
				"CREATE TABLE " + counterTable + " (id INT PRIMARY KEY, v BIGINT NOT NULL)",
				"INSERT INTO " + counterTable + " VALUES (1, 0)",
				"CREATE TABLE " + rowsTable + " (id INT PRIMARY KEY, v BIGINT NOT NULL, pad CHAR(60) NOT NULL)",
				"CREATE TABLE " + ackTable + " (seq BIGINT PRIMARY KEY)",
			} {
				if err := exec(q); err != nil {
					return t, err
				}
			}
			const batch = 1000
			for lo := 1; lo <= rows; lo += batch {
				var b strings.Builder
				b.WriteString("INSERT INTO " + rowsTable + " VALUES ")
				for id := lo; id < lo+batch && id <= rows; id++ {
					if id > lo {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d, 0, 'cluster')", id)
				}
				if err := exec(b.String()); err != nil {
					return t, err
				}
			}
			t.Rows = int64(rows + 1)
			fmt.Fprintf(log, "cluster.setup: %s and %d rows of %s\n", counterTable, rows, rowsTable)
			return t, nil
		},
	}
}
