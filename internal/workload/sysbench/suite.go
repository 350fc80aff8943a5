// Package sysbench is the sysbench-style microbenchmark suite of the Small
// Datum articles (docs/method.md section 2): the sbtest schema and load, the 32
// reported tests with their exact statements, and their run order with the
// warm-up tests and the postwrite cleanup.
package sysbench

import (
	"context"
	"fmt"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Suite is the sysbench microbenchmark suite.
type Suite struct{}

// Name returns "sysbench".
func (Suite) Name() string { return "sysbench" }

// PreparesStatements says the workers prepare on the server unless
// workload.prepared is false.
func (Suite) PreparesStatements() {}

// Summary describes the suite for `benchlab list`.
// Needs says the suite runs on SQL engines.
func (Suite) Needs() engine.Kind { return engine.KindSQL }

func (Suite) Summary() string {
	return "sysbench-style microbenchmarks (oltp_* scripts as run by the Small Datum articles), 32 reported tests"
}

// Tests lists the reported tests in run order.
func (Suite) Tests() []workload.Test {
	byName := map[string]def{}
	for _, d := range defs() {
		byName[d.name] = d
	}
	var out []workload.Test
	for _, e := range runOrder() {
		if e.warm || e.name == "" {
			continue
		}
		d := byName[e.name]
		out = append(out, workload.Test{Name: d.name, Family: d.family, Group: d.group, Summary: d.summary})
	}
	return out
}

// entry is one line of the run order (all_small.sh, docs/method.md 2.5).
type entry struct {
	name      string // test name; empty for the postwrite cleanup
	warm      bool   // warm-up or .pre test, excluded from summaries
	suffix    string // ".warm", ".pre", ".warmpre"
	postwrite bool
}

func runOrder() []entry {
	e := func(name string) entry { return entry{name: name} }
	w := func(name, suffix string) entry { return entry{name: name, warm: true, suffix: suffix} }
	post := entry{postwrite: true}
	return []entry{
		w("point-query", ".warm"), post,
		w("scan", ".warmpre"), w("point-query", ".pre"), w("range-notcovered-si", ".pre"),
		e("update-inlist"), e("update-index"), e("update-nonindex"), e("update-one"), e("update-zipf"),
		e("write-only"), e("read-write_range=10"), e("read-write_range=100"), post,
		w("scan", ".warm"), e("scan"),
		e("read-only_range=10"), e("read-only_range=100"), e("read-only_range=10000"),
		e("read-only-simple"), e("read-only-sum"), e("read-only-order"), e("read-only-distinct"), e("read-only-count"),
		e("point-query"), e("random-points_range=10"), e("random-points_range=100"), e("random-points_range=1000"), e("hot-points"),
		e("points-covered-pk"), e("points-notcovered-pk"), e("range-covered-pk"), e("range-notcovered-pk"),
		w("points-covered-si", ".warm"), e("points-covered-si"), e("points-notcovered-si"), e("range-covered-si"), e("range-notcovered-si"),
		e("delete"), e("insert"),
	}
}

// Check validates the parameters this suite uses.
func (Suite) Check(p workload.Params) error {
	if p.Tables < 1 {
		return workload.Bad("tables", p.Tables, "%d is not allowed; want >= 1", p.Tables)
	}
	if p.TableSize < 1000 {
		// hot-points reads ids table_size/2+1 .. table_size/2+100 and the
		// 10000-row ranges of read-only need a table to range over.
		return workload.Bad("table_size", p.TableSize, "%d is too small; want >= 1000", p.TableSize)
	}
	if _, err := kDraw(opts(p).KRandType); err != nil {
		return err
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// Describe says what a run of the suite did, for the report header: the
// usual sizes and durations plus the distribution of k in the load.
func (Suite) Describe(p workload.Params) string {
	kd := opts(p).KRandType
	if kd == "" {
		kd = KUniform
	}
	if kd == KSpecial {
		kd += " (sysbench 1.0.20's default, not the articles')"
	}
	return fmt.Sprintf("suite sysbench (%s), %d table(s) of %d rows, threads %v, read %s, write %s, warm-up %s, k %s",
		workload.TestsLabel(p), p.Tables, p.TableSize, p.Threads, p.ReadTime, p.WriteTime, p.Warmup, kd)
}

// Plan returns the steps of one pass: load, then the run order of docs/method.md
// 2.5. With a test selection the warm-up tests are left out, a cleanup
// settles the fresh load before the first test ("postload"), and a postwrite
// cleanup runs wherever a write test is followed by a read test.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	sel, _ := workload.SelectTests(p.Tests, Suite{}.Tests())
	byName := map[string]*def{}
	ds := defs()
	for i := range ds {
		byName[ds[i].name] = &ds[i]
	}
	steps := []workload.Step{loadStep(p)}
	if sel != nil {
		// The full run order settles the fresh load with point-query.warm and
		// the postwrite cleanup before anything is measured. A selection has
		// neither, so its first test would read a table that was just
		// written: on PostgreSQL no visibility map or hint bits yet (the
		// first reads set them and dirty the pages), autovacuum and
		// autoanalyze and the load's checkpoint still to come; on InnoDB the
		// load's dirty pages still to flush. Repeats then differ by when those
		// land in the measured seconds. The cleanup runs
		// them first, as the articles' postwrite step does.
		steps = append(steps, postloadStep(p))
	}
	dirty := false // a write ran since the last cleanup
	for _, e := range runOrder() {
		if e.postwrite {
			if sel == nil {
				steps = append(steps, postwriteStep(p))
				dirty = false
			}
			continue
		}
		d := byName[e.name]
		if sel != nil && (e.warm || !sel[d.name]) {
			continue
		}
		if sel != nil && dirty && !d.write {
			steps = append(steps, postwriteStep(p))
			dirty = false
		}
		steps = append(steps, measured(d, p, e))
		dirty = dirty || d.write
	}
	return steps, nil
}

func measured(d *def, p workload.Params, e entry) workload.Step {
	st := workload.Step{
		Name: d.name + e.suffix, Family: d.family, Group: d.group, Warm: e.warm, Write: d.write,
		Warmup: p.Warmup, Metric: d.metric, RowsPerOp: p.TableSize,
	}
	// Durations and thread counts follow all_small.sh: only the scan
	// warm-ups run 60 s (warm_time); the other warm-up and .pre tests run
	// readsecs like any read test. Every test loops over the thread counts
	// except point-query.warm, which runs right after the load with one
	// thread per table.
	switch {
	case d.name == "scan" && e.warm:
		st.Duration = p.WarmTime
	case d.timing == writeTime:
		st.Duration = p.WriteTime
	default:
		st.Duration = p.ReadTime
	}
	if e.name == "point-query" && e.suffix == ".warm" {
		st.Threads = []int{p.Tables}
	}
	st.NewWorker = func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
		return newWorker(ctx, d, p, db, id, seed)
	}
	return st
}

// postloadStep is the cleanup between the load and the first test of a
// selection: the postwrite routine (vacuum, analyze and checkpoint; or
// analyze, purge and a flush of dirty pages), which waits for the work it
// starts, without the postwrite step's extra wait.
func postloadStep(p workload.Params) workload.Step { return cleanupStep(p, "postload", 0) }

func postwriteStep(p workload.Params) workload.Step {
	target := p.PostwriteWait
	if target < 0 {
		target = workload.PostwriteTarget(int64(p.Tables) * p.TableSize)
	}
	return cleanupStep(p, "postwrite", target)
}

func cleanupStep(p workload.Params, name string, target time.Duration) workload.Step {
	var tables []string
	for n := 1; n <= p.Tables; n++ {
		tables = append(tables, TableName(n))
	}
	return workload.CleanupStep(name, tables, target)
}
