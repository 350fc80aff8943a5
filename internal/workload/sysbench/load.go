package sysbench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// loadBatch is the number of rows per multi-row INSERT of the load.
const loadBatch = 1000

// loadStep creates and fills the tables (sysbench prepare, METHOD.md 2.2): k
// drawn from the "special" distribution, c and pad random digit groups, then
// the secondary index on k. It runs with one connection, as the articles'
// prepare does.
func loadStep(p workload.Params) workload.Step {
	return workload.Step{
		Name: "prepare", Warm: true, Write: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			var t workload.Tally
			sqldb, conn, err := workload.ConnectSQL(ctx, db, "sysbench prepare")
			if err != nil {
				return t, err
			}
			defer conn.Close()
			r := NewRand(p.Seed)
			for n := 1; n <= p.Tables; n++ {
				start := time.Now()
				if err := loadTable(ctx, conn, sqldb.Dialect(), r, n, p.TableSize, &t); err != nil {
					return t, fmt.Errorf("prepare %s: %w", TableName(n), err)
				}
				el := time.Since(start)
				fmt.Fprintf(log, "prepare: %s loaded with %d rows in %s (%.0f rows/s, index included)\n",
					TableName(n), p.TableSize, el.Round(time.Millisecond), float64(p.TableSize)/el.Seconds())
			}
			return t, nil
		},
	}
}

func loadTable(ctx context.Context, conn engine.Conn, d engine.Dialect, r *Rand, n int, rows int64, t *workload.Tally) error {
	if _, err := conn.Exec(ctx, DropTable(n)); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, CreateTable(d, n)); err != nil {
		return err
	}
	t.Statements += 2
	buf := make([]byte, 0, loadBatch*200)
	for done := int64(0); done < rows; {
		batch := min(loadBatch, rows-done)
		buf = append(buf[:0], LoadInsertPrefix(n)...)
		for i := int64(0); i < batch; i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '(')
			buf = strconv.AppendInt(buf, r.Special(1, rows), 10)
			buf = append(buf, ", '"...)
			buf = r.DigitString(buf, 10, 11)
			buf = append(buf, "', '"...)
			buf = r.DigitString(buf, 5, 11)
			buf = append(buf, "')"...)
		}
		got, err := conn.Exec(ctx, string(buf))
		if err != nil {
			return err
		}
		t.Statements++
		t.Rows += got
		done += batch
	}
	if _, err := conn.Exec(ctx, CreateIndex(n)); err != nil {
		return err
	}
	t.Statements++
	return nil
}
