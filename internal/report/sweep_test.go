package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/report"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// runSweep runs a short SQLite sweep of synchronous over off and full (one
// read test and one write test, one thread) and loads it back.
func runSweep(t *testing.T) *report.Data {
	t.Helper()
	s, err := spec.Parse([]byte(`name = "sweep"
[[target]]
name = "sq"
engine = "sqlite"
[target.sweep]
setting = "synchronous"
values = ["off", "full"]
[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1]
read_time = "300ms"
write_time = "300ms"
warmup = "50ms"
postwrite_wait = "0s"
report_interval = "0s"
`), "sweep test", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := runner.RunExperiment(context.Background(), s, st, runner.ExperimentOptions{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.Load(context.Background(), st, id, true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tableTitled returns the report's table titled title, or nil.
func tableTitled(r *report.Report, title string) *report.Table {
	for i := range r.Tables {
		if r.Tables[i].Title == title {
			return &r.Tables[i]
		}
	}
	return nil
}

// TestSweepReport: the report of a sweep has a "Sweep of synchronous" table
// with a column per value and the ratio to the first, holding the medians
// the absolute table holds and their ratio, in text and Markdown; the CSV
// export carries the setting and value per result; the HTML page draws the
// headline against the value per test and opens cleanly in a browser with
// a hostile value planted in the stored spec. Without the stored spec's
// swept marks there is no sweep table, whatever the names say.
func TestSweepReport(t *testing.T) {
	d := runSweep(t)
	r := report.Build(d)
	tb := tableTitled(r, "Sweep of synchronous")
	if tb == nil {
		t.Fatalf("no sweep table in %d tables", len(r.Tables))
	}
	if want := []string{"off", "full", "full / off", "best", "best / next"}; !slices.Equal(tb.Columns, want) {
		t.Errorf("columns %v, want %v", tb.Columns, want)
	}
	abs := tableTitled(r, "Absolute throughput")
	if abs == nil || len(tb.Rows) != 2 || len(abs.Rows) != 2 {
		t.Fatalf("sweep rows %d, absolute table %v", len(tb.Rows), abs)
	}
	// The absolute table has the base (off) first, then full. A busy
	// machine can stall a 300 ms step outright (no operation completed,
	// seen at a load average of 25-33): its median is 0, which the notes
	// must name; the table's arithmetic holds for it too.
	stalled := func(label string) bool {
		for _, n := range r.Notes {
			if strings.HasPrefix(n, "stalled: "+strings.Fields(label)[0]+" ") {
				return true
			}
		}
		return false
	}
	for i, row := range tb.Rows {
		off, full, ratio := row.Cells[0], row.Cells[1], row.Cells[2]
		if off.Missing || full.Missing || off.Value < 0 || full.Value < 0 || off.Value != abs.Rows[i].Cells[0].Value || full.Value != abs.Rows[i].Cells[1].Value {
			t.Errorf("%s: off %v full %v, absolute %v", row.Label, off.Value, full.Value, abs.Rows[i].Cells)
		}
		if off.Value == 0 || full.Value == 0 {
			if !stalled(row.Label) {
				t.Errorf("%s: off %v full %v, and the notes name no stalled step: %q", row.Label, off.Value, full.Value, r.Notes)
			}
			t.Logf("%s: a step stalled on this busy machine (off %v, full %v)", row.Label, off.Value, full.Value)
			continue
		}
		if ratio.Kind != report.Ratio || ratio.Value != full.Value/off.Value {
			t.Errorf("%s: ratio %v, want %v", row.Label, ratio.Value, full.Value/off.Value)
		}
		// The best value is the one with the larger median; best / next
		// is its ratio to the other's (one repeat: no verdict).
		best, vsNext := row.Cells[3], row.Cells[4]
		wantBest, hi, lo := "off", off.Value, full.Value
		if full.Value > off.Value {
			wantBest, hi, lo = "full", full.Value, off.Value
		}
		if best.Text != wantBest || vsNext.Kind != report.Ratio || math.Abs(vsNext.Value-hi/lo) > 1e-9*hi/lo {
			t.Errorf("%s: best %q, best / next %+v; want %q and %v", row.Label, best.Text, vsNext, wantBest, hi/lo)
		}
	}
	var text, md bytes.Buffer
	if err := report.WriteText(&text, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Sweep of synchronous") || !strings.Contains(md.String(), "| test | off | full | full / off | best | best / next |") {
		t.Errorf("text or markdown lacks the sweep table:\n%s\n%s", text.String(), md.String())
	}

	var c bytes.Buffer
	if err := report.WriteCSV(&c, d); err != nil {
		t.Fatal(err)
	}
	lines, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	for _, l := range lines[1:] {
		want := strings.TrimPrefix(l[col["target"]], "sq.synchronous=")
		if l[col["sweep_setting"]] != "synchronous" || l[col["sweep_value"]] != want {
			t.Errorf("csv line of %s: sweep %q = %q", l[col["target"]], l[col["sweep_setting"]], l[col["sweep_value"]])
		}
	}

	var page bytes.Buffer
	if err := report.WriteHTML(&page, d, r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Throughput against synchronous: point-query", "Throughput against synchronous: update-index"} {
		if !strings.Contains(page.String(), w) {
			t.Errorf("html lacks the chart %q", w)
		}
	}
	// A store written elsewhere could hold any value in a swept mark: it
	// reaches column names and chart categories as text.
	hostileSpec := *d
	hostileSpec.Experiment.Spec = strings.Replace(d.Experiment.Spec, `value = "full"`, "value = "+strconv.Quote(hostile), 1)
	if hostileSpec.Experiment.Spec == d.Experiment.Spec {
		t.Fatalf("stored spec has no swept value \"full\":\n%s", d.Experiment.Spec)
	}
	// 2 groups of relative bars, 2 per-second, 2 sweep charts, 2 box plots,
	// 2 latency charts.
	checkInBrowser(t, &hostileSpec, 10)

	sp, err := spec.ParseStored([]byte(d.Experiment.Spec), "stored")
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Targets {
		sp.Targets[i].Swept = nil
	}
	plain := *d
	plain.Experiment.Spec = sp.TOML()
	if _, err := spec.ParseStored([]byte(plain.Experiment.Spec), "stored"); err != nil {
		t.Fatal(err)
	}
	if tb := tableTitled(report.Build(&plain), "Sweep of synchronous"); tb != nil {
		t.Errorf("a sweep table without swept marks in the stored spec (from the names?): %+v", tb)
	}
}
