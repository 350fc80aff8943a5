package report

import (
	"strings"
	"testing"

	"benchlab/internal/store"
)

// ioCapacityData is two targets of 30-second update steps, as a MariaDB
// run with innodb_io_capacity 100 against 4000 measured them (synthetic
// series): the base runs steadily at about 3,300 statements a second,
// flushing about 350 pages a second; the target flushes 200 pages a
// second until seconds 8 to 17, when it flushes about 2,400 a second and
// its throughput falls to about 1,000. Pages created follow the
// statements, at five times the base's per statement on the target, a
// larger ratio than pages flushed (3.3x).
func ioCapacityData() *Data {
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "io", Base: "io100", Targets: []string{"io100", "io4000"}},
		Runs:    []store.Run{{ID: 1, Target: "io100", Status: store.StatusOK}, {ID: 2, Target: "io4000", Status: store.StatusOK}},
		Results: map[int64][]store.Result{}}
	for id := int64(1); id <= 2; id++ {
		r := store.Result{Test: "update-index", Group: "writes", Threads: 4, Metric: "qps", Status: store.StatusOK}
		flushed := store.EngineSeries{Name: "status.Innodb_buffer_pool_pages_flushed"}
		created := store.EngineSeries{Name: "status.Innodb_pages_created"}
		for sec := range 30 {
			// A small deterministic wobble, so that no two seconds tie.
			wobble := float64((sec*7)%11) - 5
			qps, flush, createdPerOp := 3300+wobble, 350-wobble, 0.5
			if id == 2 {
				qps, flush, createdPerOp = 3600+wobble, 200+wobble, 2.5
				if sec >= 8 && sec < 18 {
					qps, flush = 1000+wobble*10, 2400-wobble*20
				}
			}
			n := int64(qps)
			r.Intervals = append(r.Intervals, store.Interval{Sec: sec, Seconds: 1, Events: n, Statements: n})
			r.Events += n
			r.Statements += n
			flushed.Points = append(flushed.Points, store.EnginePoint{Sec: sec, Value: flush})
			created.Points = append(created.Points, store.EnginePoint{Sec: sec, Value: createdPerOp * qps})
		}
		r.Seconds = 30
		r.Internals = []store.EngineSeries{flushed, created}
		d.Results[id] = []store.Result{r}
	}
	return d
}

// TestInternalsRankByThroughput checks the note's choice on synthetic
// series: pages created changed most by ratio, but they follow the
// statements, while pages flushed rose exactly in the seconds throughput
// fell; the note names pages flushed, with its correlation, and pages
// created after it.
func TestInternalsRankByThroughput(t *testing.T) {
	d := ioCapacityData()
	k := cellKey{test: "update-index", threads: 4}
	s, _, _ := d.samples()
	ch := internalsChanges(k, "io100", "io4000", s)
	if len(ch) != 2 {
		t.Fatalf("changes %+v, want pages flushed and created", ch)
	}
	flushed, created := ch[0], ch[1]
	if flushed.name != "status.Innodb_buffer_pool_pages_flushed" || !flushed.explains() || created.explains() ||
		created.ratioScore() <= flushed.ratioScore() {
		t.Errorf("changes %+v then %+v: want pages flushed first (moving against throughput), pages created "+
			"second though their ratio is larger", flushed, created)
	}
	if !(created.rho > 0) {
		t.Errorf("pages created: rank correlation %v, want > 0 (they follow the statements)", created.rho)
	}
	notes := strings.Join(Build(d).Notes, "\n")
	t.Log(notes)
	if !strings.Contains(notes, "moved against throughput most is Innodb_buffer_pool_pages_flushed per op") ||
		!strings.Contains(notes, "next Innodb_pages_created per op 5") {
		t.Errorf("notes:\n%s\nwant pages flushed named, then pages created", notes)
	}
}

// TestInternalsRankFallsBack: with throughput the same in every second of
// each step, no series moves against it, and the note says so and names
// the largest change by ratio, pages created.
func TestInternalsRankFallsBack(t *testing.T) {
	d := ioCapacityData()
	for id := range d.Results {
		r := &d.Results[id][0]
		for i := range r.Intervals {
			r.Intervals[i].Statements, r.Intervals[i].Events = 3000, 3000
		}
	}
	notes := strings.Join(Build(d).Notes, "\n")
	if !strings.Contains(notes, "no engine series moved against throughput; the largest change is Innodb_pages_created per op") {
		t.Errorf("notes:\n%s\nwant the ratio rule's pages created", notes)
	}
}
