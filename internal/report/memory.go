package report

import (
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report/section"
	"benchlab/internal/store"
)

// cgroupMemoryColumns are the columns of the memory-limit table: each a
// fact of a memory-limited server's step, in MB unless it is a count.
var cgroupMemoryColumns = []struct {
	column, fact string
	mb           bool
}{
	{"limit MB", store.FactServerMemoryLimit, true},
	{"peak MB", store.FactServerCgroupPeak, true},
	{"limit hits", store.FactServerLimitHits, false},
	{"page cache MB", store.FactServerPageCache, true},
	{"swap MB", store.FactServerSwap, true},
}

// memoryLimitTables is the memory of memory-limited servers as their
// cgroup counted it, one row per target under each test, median over
// repeats: shown when a step ran under a limit.
func memoryLimitTables(d *Data, keys []cellKey, s samples, label func(cellKey) string) []Table {
	if !hasFact(s, keys, store.FactServerMemoryLimit) {
		return nil
	}
	t := Table{Title: "Server memory under its limit (cgroup)",
		Legend: "the memory cgroup of a memory-limited server over the measured part: peak = its highest usage (the " +
			"server's memory and the page cache of its files, what the limit binds), limit hits = how often usage met " +
			"the limit (the kernel then reclaimed page cache or the server waited), page cache and swap at the end; " +
			"median over repeats; n/a = no limit"}
	for _, c := range cgroupMemoryColumns {
		t.Columns = append(t.Columns, c.column)
	}
	for _, k := range keys {
		for _, tg := range d.targets() {
			row := Row{Group: label(k), Label: tg}
			for _, c := range cgroupMemoryColumns {
				vals, cell := effValues(s[tg][k], func(r store.Result) float64 {
					v, ok := r.Facts[c.fact]
					if !ok {
						return store.NotMeasured
					}
					if c.mb {
						return section.MiB(int64(v))
					}
					return v
				})
				if cell != nil {
					row.Cells = append(row.Cells, *cell)
					continue
				}
				row.Cells = append(row.Cells, section.NumberCell(analysis.Median(vals)))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return []Table{t}
}

// memoryLimitNote says why a memory-limited server's summed RSS is not
// shown.
func memoryLimitNote(d *Data, keys []cellKey, s samples) string {
	var limited []string
	for _, tg := range d.targets() {
		for _, k := range keys {
			if hasFact(samples{tg: s[tg]}, []cellKey{k}, store.FactServerMemoryLimit) {
				limited = append(limited, tg)
				break
			}
		}
	}
	if len(limited) == 0 {
		return ""
	}
	return "memory: " + strings.Join(limited, ", ") + " ran under a memory limit: its peak server RSS is n/a and its " +
		"memory is the cgroup's (the memory-limit table), since RSS summed over processes counts shared and file-backed " +
		"pages once per process and leaves out the page cache the limit also binds"
}
