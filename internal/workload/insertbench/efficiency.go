package insertbench

import (
	"math"

	"benchlab/internal/analysis"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// This file is the insert benchmark's report table of resource use per
// operation.

// ibEfficiency is etl.sh's per-step line (docs/method.md 1.12) with its
// denominators: CPU, reads, KB read and context switches per insert for the
// load steps and per query for qr/qp; writes and KB written always per
// inserted row. IO counts are the data dir's device, as iostat sees it.
func ibEfficiency(ib ibSteps, targets []string) (section.Table, bool) {
	t := section.Table{Title: "Insert Benchmark efficiency per operation",
		Legend: "op = inserted row for l.i0, l.i1, l.i2 (indexed row for l.x), query for qr and qp; wpi and wkbpi are " +
			"per inserted row in every step (docs/method.md 1.12); cpu = server + client (benchlab) microseconds; reads, " +
			"writes and KB from /proc/diskstats of the data dir's device, as iostat (all processes on it); cs = context " +
			"switches, server + client; db GB = the database's size as the engine counts it (pg_database_size, the InnoDB schema dir, SQLite pages) and dbdir GB = du of the data dir, after the step (GiB); median over repeats; " +
			"n/a = not measured",
		Columns: []string{"cpu us/op", "client us/op", "server us/op", "reads/op", "KB read/op", "writes/insert",
			"KB written/insert", "cs/op", "peak server RSS MB", "db GB", "dbdir GB"}}
	any := false
	for _, s := range ib.steps {
		for _, tg := range targets {
			head := ib.role(tg, s, headline(s))
			if len(head) == 0 {
				continue
			}
			ins := ib.role(tg, s, "insert")
			if s == "l.x" {
				ins = head
			}
			row := section.Row{Group: s, Label: tg}
			perOpOf := func(f func(*store.Efficiency) float64, scale float64, perInsert bool) section.Cell {
				var xs []float64
				for i, r := range head {
					if r.Eff == nil {
						return section.Cell{Missing: true}
					}
					total := f(r.Eff)
					switch {
					case total == store.NotReadable:
						return section.TextCell("not readable")
					case total < 0:
						return section.Cell{Missing: true}
					}
					rate := r.Throughput()
					if perInsert {
						if i >= len(ins) {
							return section.Cell{Missing: true}
						}
						rate = ins[i].Throughput()
					}
					v := r.Eff.PerOp(total, rate, r.Seconds)
					if v < 0 {
						return section.Cell{Missing: true}
					}
					xs = append(xs, v*scale)
				}
				any = true
				return section.NumberCell(analysis.Median(xs))
			}
			row.Cells = append(row.Cells,
				perOpOf(func(e *store.Efficiency) float64 { return section.SumOf(e.ServerCPU, e.ClientCPU) }, 1e6, false),
				perOpOf(func(e *store.Efficiency) float64 { return e.ClientCPU }, 1e6, false),
				perOpOf(func(e *store.Efficiency) float64 { return e.ServerCPU }, 1e6, false),
				perOpOf(func(e *store.Efficiency) float64 { return float64(e.DevReads) }, 1, false),
				perOpOf(func(e *store.Efficiency) float64 { return float64(e.DevReadBytes) }, 1.0/1024, false),
				perOpOf(func(e *store.Efficiency) float64 { return float64(e.DevWrites) }, 1, true),
				perOpOf(func(e *store.Efficiency) float64 { return float64(e.DevWriteBytes) }, 1.0/1024, true),
				perOpOf(func(e *store.Efficiency) float64 { return section.SumOf(float64(e.ServerCS), float64(e.ClientCS)) }, 1, false),
				section.NumberCell(section.Median(head, func(r store.Result) float64 {
					if r.Eff == nil || r.Eff.ServerPeakRSS < 0 {
						return math.NaN()
					}
					return section.MiB(r.Eff.ServerPeakRSS)
				})),
				section.NumberCell(section.Median(head, func(r store.Result) float64 {
					if v, ok := r.Facts[store.FactDBBytes]; ok {
						return v / (1 << 30)
					}
					return math.NaN()
				})),
				section.NumberCell(section.Median(head, func(r store.Result) float64 {
					if r.DBBytes <= 0 {
						return math.NaN()
					}
					return float64(r.DBBytes) / (1 << 30)
				})),
			)
			t.Rows = append(t.Rows, row)
		}
	}
	return t, any
}
