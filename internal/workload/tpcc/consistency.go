package tpcc

import (
	"context"
	"fmt"
	"io"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccdoc"
)

// consistency are the consistency conditions 1 to 4 of clause 3.3.2, each
// a query that returns the warehouses or districts that break it.
var consistency = []struct{ name, sql string }{
	{"1: w_ytd = sum(d_ytd)",
		"SELECT w_id FROM warehouse, (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d " +
			"WHERE w_id = d_w_id AND ABS(w_ytd - s) > 0.001"},
	{"2: d_next_o_id - 1 = max(o_id) = max(no_o_id)",
		"SELECT d_w_id, d_id FROM district, (SELECT o_w_id, o_d_id, MAX(o_id) AS m FROM oorder GROUP BY o_w_id, o_d_id) o, " +
			"(SELECT no_w_id, no_d_id, MAX(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n " +
			"WHERE d_w_id = o_w_id AND d_id = o_d_id AND d_w_id = no_w_id AND d_id = no_d_id " +
			"AND (d_next_o_id - 1 <> o.m OR d_next_o_id - 1 <> n.m)"},
	{"3: max(no_o_id) - min(no_o_id) + 1 = count(new_order)",
		"SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id " +
			"HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)"},
	{"4: sum(o_ol_cnt) = count(order_line)",
		"SELECT o.o_w_id, o.o_d_id FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM oorder GROUP BY o_w_id, o_d_id) o, " +
			"(SELECT ol_w_id, ol_d_id, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l " +
			"WHERE o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.s <> l.c"},
}

// Consistent checks the consistency conditions 1 to 4 of clause 3.3.2 and
// returns an error naming each broken one and where.
func Consistent(ctx context.Context, conn engine.Conn) error {
	var broken []string
	for _, c := range consistency {
		rows, err := conn.Values(ctx, c.sql)
		if err != nil {
			return fmt.Errorf("consistency condition %s: %w", c.name, err)
		}
		if len(rows) > 0 {
			broken = append(broken, fmt.Sprintf("%s fails at %v", c.name, rows[:min(len(rows), 3)]))
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("tpcc consistency: %v", broken)
	}
	return nil
}

// checkStep runs the consistency conditions after the measured steps, so a
// run whose engine lost or mixed up a transaction's writes fails.
func checkStep(p workload.Params) workload.Step {
	return workload.Step{
		Name: "consistency", Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			if _, ok := db.(docdb.DB); ok {
				if err := tpccdoc.CheckRun(ctx, db, opts(p).doc()); err != nil {
					return workload.Tally{}, err
				}
				fmt.Fprintf(log, "consistency: conditions 1-4 of TPC-C clause 3.3.2 hold\n")
				return workload.Tally{}, nil
			}
			_, conn, err := workload.ConnectSQL(ctx, db, "tpcc consistency")
			if err != nil {
				return workload.Tally{}, err
			}
			defer conn.Close()
			if err := Consistent(ctx, conn); err != nil {
				return workload.Tally{}, err
			}
			fmt.Fprintf(log, "consistency: conditions 1-4 of TPC-C clause 3.3.2 hold\n")
			return workload.Tally{Statements: len(consistency)}, nil
		},
	}
}
