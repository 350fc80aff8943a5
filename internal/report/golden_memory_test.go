package report_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"benchlab/internal/report"
	"benchlab/internal/store"
)

// TestGoldenMemoryLimit is PostgreSQL with and without a 64 MB memory limit,
// three repeats of update-index each: the limited target's summed RSS (95
// MB, more than its limit: file-backed pages counted once per process) is
// n/a and its memory comes from the cgroup (peak, 217,540 limit hits,
// page cache, swap); the efficiency table gives the speed probe's rate per
// step where cycles were not counted, and a note says why.
func TestGoldenMemoryLimit(t *testing.T) {
	d := &report.Data{Experiment: store.Experiment{ID: 11, Name: "golden-memory", Base: "pg", Targets: []string{"pg", "pg-64MB"},
		Created: goldenDay, Spec: goldenSpec(t, "sysbench", []string{"update-index"}, []int{4}, 3)},
		Results: map[int64][]store.Result{}}
	id := int64(0)
	for _, target := range []string{"pg", "pg-64MB"} {
		for rep := 1; rep <= 3; rep++ {
			id++
			m := store.Manifest{Host: store.Host{Hostname: "h", CPUModel: "cpu", Cores: 2}}
			d.Runs = append(d.Runs, store.Run{ID: id, Target: target, Engine: "postgres", Version: "15.10", Repeat: rep,
				Status: store.StatusOK, Started: goldenDay, Ended: goldenDay.Add(time.Minute), Manifest: m.JSON()})
			qps, readKB := int64(3_000+10*rep), int64(0)
			facts := map[string]float64{store.FactCPUSpeed: 800 + float64(rep),
				store.CounterUnsupportedFact("server", "cycles"): store.CounterNotSupported,
				store.CounterUnsupportedFact("client", "cycles"): store.CounterNotSupported}
			if target == "pg-64MB" {
				qps, readKB = int64(1_200+10*rep), 24
				facts[store.FactServerMemoryLimit] = 64 << 20
				facts[store.FactServerCgroupPeak] = float64(64<<20 - rep<<10)
				facts[store.FactServerLimitHits] = 217_540 + float64(rep)
				facts[store.FactServerPageCache] = 41 << 20
				facts[store.FactServerSwap] = 0
			}
			res := store.Result{RunID: id, Seq: 1, Test: "update-index", Family: "update-index", Group: "writes", Threads: 4,
				Metric: "qps", Status: store.StatusOK, Started: goldenDay, Seconds: 30, Events: 30 * qps, Statements: 30 * qps,
				Latency: store.Latency{P50: 900 * time.Microsecond, P95: 3 * time.Millisecond, P99: 6 * time.Millisecond,
					Max: 40 * time.Millisecond},
				Eff: &store.Efficiency{Seconds: 30, ServerCPU: 0.5 * 30, ClientCPU: 0.1 * 30, ServerReadBytes: 30 * qps * readKB << 10,
					ServerWriteBytes: 30 * qps * 4096, ServerPeakRSS: 95_100_000 + int64(rep)<<10},
				Facts: facts}
			for sec := range 30 {
				res.Intervals = append(res.Intervals, store.Interval{Sec: sec, Seconds: 1, Events: qps, Statements: qps,
					Max: 5 * time.Millisecond})
			}
			d.Results[id] = append(d.Results[id], res)
		}
	}
	r := checkGolden(t, "memory", d)
	mem := findTable(r, "Server memory under its limit (cgroup)")
	if mem == nil || len(mem.Rows) != 2 || mem.Rows[1].Label != "pg-64MB" {
		t.Fatalf("memory table %+v", mem)
	}
	if c := mem.Rows[1].Cells; c[0].Value != 64 || c[2].Value != 217_542 || c[3].Value != 41 || !mem.Rows[0].Cells[1].Missing {
		t.Errorf("memory rows %+v / %+v; want the limited target's 64 MB limit, 217542 hits, 41 MB cache and n/a for pg",
			mem.Rows[0].Cells, c)
	}
	eff := findTable(r, "Efficiency per operation")
	rss := slices.Index(eff.Columns, "peak server RSS MB")
	speed := slices.Index(eff.Columns, "cpu speed")
	if rss < 0 || speed < 0 {
		t.Fatalf("efficiency columns %v", eff.Columns)
	}
	for _, row := range eff.Rows {
		if limited := row.Label == "pg-64MB"; row.Cells[rss].Missing != limited {
			t.Errorf("%s: peak server RSS %+v; want n/a only under the limit", row.Label, row.Cells[rss])
		}
		if row.Cells[speed].Value != 802 {
			t.Errorf("%s: cpu speed %+v, want the median 802", row.Label, row.Cells[speed])
		}
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"pg-64MB ran under a memory limit: its peak server RSS is n/a",
		"GHz and IPC are not measured where cycles are not supported"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
