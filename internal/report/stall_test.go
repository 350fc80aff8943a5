package report

import (
	"math"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// stalledData is two targets, 3 repeats each, of two tests at fixed rates
// (statements in 10 s): point-query at 1000/s on a and 900/s on b except
// b's repeat 2, which completed no operation; update-index at 500/s on
// one side and no operation in every run of the other (b's when baseStalls
// is false, a's when it is true).
func stalledData(baseStalls bool) *Data {
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "e", Base: "a", Targets: []string{"a", "b"}},
		Results: map[int64][]store.Result{}}
	res := func(test string, qps float64) store.Result {
		n := int64(qps * 10)
		return store.Result{Test: test, Family: test, Threads: 1, Metric: "qps", Status: store.StatusOK, Seconds: 10,
			Events: n, Statements: n}
	}
	id := int64(0)
	for _, target := range []string{"a", "b"} {
		for rep := 1; rep <= 3; rep++ {
			id++
			d.Runs = append(d.Runs, store.Run{ID: id, Target: target, Repeat: rep, Status: store.StatusOK})
			pq := 1000.0 + float64(rep)
			if target == "b" {
				pq = 900 + float64(rep)
				if rep == 2 {
					pq = 0
				}
			}
			ui := 500.0 + float64(rep)
			if (target == "b") != baseStalls {
				ui = 0
			}
			d.Results[id] = []store.Result{res("point-query", pq), res("update-index", ui)}
		}
	}
	return d
}

// TestStalledRunsLeftOut: a run that completed no operation is left out of
// its cell's verdict (point-query judged 3 against 2, its ratio that of
// the runs measured, x0.90, not dragged toward 0) and the cell says so; a
// cell whose side stalled in every run is not judged: Compare leaves it
// out, NotJudged names it and the side, the relative table shows the
// stalled mark, uncoloured and with no verdict, and the notes and summary
// say it. The rates are fixed, so every figure is exact.
func TestStalledRunsLeftOut(t *testing.T) {
	for _, baseStalls := range []bool{false, true} {
		d := stalledData(baseStalls)
		cs := Compare(d, VerdictOptions{})
		if len(cs) != 1 || cs[0].Test != "point-query" {
			t.Fatalf("baseStalls=%v: Compare judged %d cells (%+v), want point-query alone", baseStalls, len(cs), cs)
		}
		if v := cs[0].Verdict; v.NBase != 3 || v.NOther != 2 || math.Abs(v.Ratio-0.9) > 0.01 {
			t.Errorf("point-query judged %d against %d at x%.3f; want 3 against 2 at x0.90", v.NBase, v.NOther, v.Ratio)
		}
		nj := NotJudged(d)
		side := "b (3 of 3)"
		if baseStalls {
			side = "the base (3 of 3)"
		}
		if len(nj) != 1 || nj[0].Test != "update-index" || nj[0].Target != "b" || !strings.Contains(nj[0].Why(), "every run of "+side) {
			t.Fatalf("NotJudged = %+v, want update-index on b, every run of %s", nj, side)
		}
		r := Build(d)
		rel := r.Tables[0]
		if !rel.Relative || !strings.Contains(rel.Legend, StalledMark+": every run of a side completed no operation") {
			t.Fatalf("first table %q (legend %q) is not the relative table with the stalled mark explained", rel.Title, rel.Legend)
		}
		for _, row := range rel.Rows {
			c := row.Cells[0]
			switch row.Label {
			case "update-index":
				if c.Kind != Text || c.Text != StalledMark || c.Verdict != "" || c.Judged != nil || !strings.Contains(c.Detail, side) {
					t.Errorf("stalled cell = %+v; want the text %q, no verdict, the side in its detail", c, StalledMark)
				}
				if got := plain(c); got != StalledMark {
					t.Errorf("stalled cell renders %q", got)
				}
			case "point-query":
				if c.Kind != Ratio || !strings.Contains(c.Detail, "judged without 1 stalled run(s)") {
					t.Errorf("point-query cell = %+v; want a ratio judged without the stalled run", c)
				}
			}
		}
		all := strings.Join(append(r.Notes, r.Summary...), "\n")
		for _, want := range []string{
			"stalled: update-index @1 on ", "stalled: point-query @1 on b (repeat 2) completed no operation",
			"stalled runs left out of the verdicts: 1 cell(s) judged without 1 run(s)",
			"not judged: update-index @1 on b: every run of " + side, "1 cell(s) not judged",
		} {
			if !strings.Contains(all, want) {
				t.Errorf("baseStalls=%v: notes and summary lack %q:\n%s", baseStalls, want, all)
			}
		}
	}
}

// TestStalledRecords: the exports mark the results that stalled and no
// other.
func TestStalledRecords(t *testing.T) {
	n := 0
	for _, rec := range Records(stalledData(false)) {
		want := rec.Events == 0
		if rec.Stalled != want {
			t.Errorf("%s on %s repeat %d: stalled %v, want %v", rec.Test, rec.Target, rec.Repeat, rec.Stalled, want)
		}
		if rec.Stalled {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d records stalled, want 4 (b's update-index x3, b's point-query repeat 2)", n)
	}
}
