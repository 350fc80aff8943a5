package report

import (
	"benchlab/internal/report/section"
	"fmt"
	"math"

	"benchlab/internal/store"
)

// CV is the coefficient of variation of xs: the sample standard deviation
// over the mean. NaN with fewer than two values or a zero mean.
func CV(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / math.Abs(mean)
}

// spreadTable shows how much each cell's throughput varied from repeat to
// repeat (a reader should see a noisy cell before trusting its ratio): the coefficient of variation in %, per target.
// Nil when no cell was repeated.
func spreadTable(keys []cellKey, s samples, targets []string, groups map[cellKey]string, label func(cellKey) string) *Table {
	if _, hi := repeatRange(s, keys); hi < 2 {
		return nil
	}
	t := &Table{Title: "Run-to-run spread",
		Legend: "coefficient of variation of throughput over the repeats of each cell (sample standard deviation / mean, in %); " +
			"a spread near the difference between two targets makes their ratio unreliable"}
	for _, tg := range targets {
		t.Columns = append(t.Columns, tg+" cv %")
	}
	for _, k := range keys {
		row := Row{Group: groups[k], Label: label(k)}
		for _, tg := range targets {
			row.Cells = append(row.Cells, section.NumberCell(100*CV(section.Values(s[tg][k], func(r store.Result) float64 { return r.Throughput() }))))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// spreadNote names the cell that varied most over its repeats, for the notes.
func spreadNote(keys []cellKey, s samples, targets []string, label func(cellKey) string) string {
	worst, where := -1.0, ""
	for _, k := range keys {
		for _, tg := range targets {
			cv := CV(section.Values(s[tg][k], func(r store.Result) float64 { return r.Throughput() }))
			if !math.IsNaN(cv) && cv > worst {
				worst, where = cv, fmt.Sprintf("%s on %s", label(k), tg)
			}
		}
	}
	if worst < 0 {
		return ""
	}
	return fmt.Sprintf("largest run-to-run spread: %.1f%% (coefficient of variation of throughput) for %s", 100*worst, where)
}
