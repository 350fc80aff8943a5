package sysbench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

// loadBatch is the number of rows per multi-row INSERT of the load.
const loadBatch = 1000

// Distributions of k in the load (Options.KRandType).
const (
	// KUniform is sysbench 1.1's prepare, which the articles run: k uniform
	// in [1, table_size] (docs/method.md 2.2).
	KUniform = "uniform"
	// KSpecial is the prepare of sysbench 1.0.20 without --rand-type, for
	// comparisons with Debian's sysbench: 3/4 of the rows share 1% of the k
	// values.
	KSpecial = "special"
)

// kDraw returns the function the load draws k with for the named
// distribution ("" is uniform), or an error naming the field.
func kDraw(name string) (func(r *randgen.Rand, lo, hi int64) int64, error) {
	switch name {
	case "", KUniform:
		return (*randgen.Rand).Uniform, nil
	case KSpecial:
		return (*randgen.Rand).Special, nil
	}
	return nil, workload.Bad("sysbench.k_rand_type", name, "%q is not allowed; want %q (sysbench 1.1, as the articles ran) or %q (sysbench 1.0.20's prepare)",
		name, KUniform, KSpecial)
}

// loadStep creates and fills the tables (sysbench prepare, docs/method.md 2.2): k
// uniform in [1, table_size] as sysbench 1.1 draws it (or sysbench 1.0.20's
// "special" distribution when k_rand_type says so), c and pad random digit
// groups, then the secondary index on k. It runs with one connection, as the
// articles' prepare does, and ends by confirming the tables' storage engine
// where the target asks for one (workload.CheckTableEngines).
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
			draw, err := kDraw(opts(p).KRandType)
			if err != nil {
				return t, err
			}
			r := randgen.NewRand(p.Seed)
			for n := 1; n <= p.Tables; n++ {
				start := time.Now()
				if err := loadTable(ctx, conn, sqldb.Dialect(), r, draw, n, p.TableSize, &t); err != nil {
					return t, fmt.Errorf("prepare %s: %w", TableName(n), err)
				}
				el := time.Since(start)
				fmt.Fprintf(log, "prepare: %s loaded with %d rows (k %s) in %s (%.0f rows/s, index included)\n",
					TableName(n), p.TableSize, cmp.Or(opts(p).KRandType, KUniform), el.Round(time.Millisecond),
					float64(p.TableSize)/el.Seconds())
			}
			tables := make([]string, p.Tables)
			for n := range tables {
				tables[n] = TableName(n + 1)
			}
			return t, workload.CheckTableEngines(ctx, db, "prepare", tables)
		},
	}
}

func loadTable(ctx context.Context, conn engine.Conn, d engine.Dialect, r *randgen.Rand,
	draw func(r *randgen.Rand, lo, hi int64) int64, n int, rows int64, t *workload.Tally) error {
	if _, err := conn.Exec(ctx, DropTable(n)); err != nil {
		return err
	}
	ddl, err := CreateTable(d, n)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, ddl); err != nil {
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
			buf = strconv.AppendInt(buf, draw(r, 1, rows), 10)
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
