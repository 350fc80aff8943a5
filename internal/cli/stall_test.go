package cli

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"benchlab/internal/results/resultstest"
)

// stallCell makes every stored run of target's test complete no operation
// (a stall, as a machine that did not schedule benchlab leaves one): its
// counts, headline and seconds' counts set to zero in the store, so the
// outputs read the planted stall whatever the machine measured.
func stallCell(t *testing.T, db, target, test string) {
	t.Helper()
	raw, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ids := `SELECT r.id FROM results r JOIN runs u ON u.id = r.run_id WHERE u.target = ? AND r.test = ? AND r.warm = 0 AND r.action = 0`
	res, err := raw.Exec(`UPDATE results SET events = 0, statements = 0, errors = 0, rows = 0, headline = 0 WHERE id IN (`+ids+`)`,
		target, test)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("no result of %s on %s to stall", test, target)
	}
	if _, err := raw.Exec(`UPDATE intervals SET events = 0, statements = 0, errors = 0, rows = 0 WHERE result_id IN (`+ids+`)`,
		target, test); err != nil {
		t.Fatal(err)
	}
}

// stallSpec is two SQLite targets, one run each, of a read and a write
// test.
const stallSpec = `name = "stall"
[[target]]
name = "a"
engine = "sqlite"
[[target]]
name = "b"
engine = "sqlite"
[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1]
read_time = "300ms"
write_time = "300ms"
warmup = "50ms"
postwrite_wait = "0s"
report_interval = "0s"
`

// TestStalledCellEverywhere runs two SQLite targets for real, plants a
// stall (every run of b's update-index completed no operation), and reads
// it back through report (text, Markdown, HTML, CSV, JSON) and compare
// (text, JSON, the gate): the relative cell reads "stalled" (never "0-",
// never coloured), the notes name the step and say it was not judged, the
// exports carry stalled = true on that result alone, and the gate exits 1
// naming the cell as not judged. Nothing here depends on the rates the
// machine measured: only the planted zeros decide.
func TestStalledCellEverywhere(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "stall.toml", stallSpec)
	if code, out, errs := run(t, Env{}, "run", sp, "--store", db, "--color", "never"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	stallCell(t, db, "b", "update-index")

	code, out, errs := run(t, Env{}, "report", "--store", db, "--color", "always")
	if code != ExitOK {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	text := unwrap(out)
	row := regexp.MustCompile(`(?m)^ *update-index  .*$`).FindString(out)
	if !strings.Contains(row, "stalled") || strings.Contains(row, "0-") || strings.Contains(row, "\x1b[31m") {
		t.Errorf("the stalled cell's row reads %q; want the mark stalled, uncoloured, never 0-\n%s", row, out)
	}
	for _, want := range []string{
		"stalled: update-index @1 on b (repeat 1) completed no operation",
		"not judged: update-index @1 on b: every run of b (1 of 1) completed no operation (stalled)",
		"1 cell(s) not judged",
		"stalled: every run of a side completed no operation, not judged",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	code, md, errs := run(t, Env{}, "report", "--store", db, "--format", "markdown")
	if code != ExitOK {
		t.Fatalf("report markdown: exit %d\n%s", code, errs)
	}
	if mdRow := regexp.MustCompile(`(?m)^\| update-index \|.*$`).FindString(md); !strings.Contains(mdRow, "| stalled |") {
		t.Errorf("markdown row %q: want a plain | stalled | cell\n%s", mdRow, md)
	}

	code, html, errs := run(t, Env{}, "report", "--store", db, "--format", "html")
	if code != ExitOK {
		t.Fatalf("report html: exit %d\n%s", code, errs)
	}
	if !regexp.MustCompile(`<td[^>]*title="not judged: every run of b \(1 of 1\)[^"]*"[^>]*>stalled</td>`).MatchString(html) {
		t.Errorf("html lacks the stalled cell with its reason as title")
	}
	if regexp.MustCompile(`class="worse"[^>]*>0[-<]`).MatchString(html) {
		t.Errorf("html shows the stall as a worse ratio of 0")
	}

	code, csvOut, errs := run(t, Env{}, "report", "--store", db, "--format", "csv")
	if code != ExitOK {
		t.Fatalf("report csv: exit %d\n%s", code, errs)
	}
	lines, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	stalledRows := 0
	for _, l := range lines[1:] {
		planted := l[col["target"]] == "b" && l[col["test"]] == "update-index" && l[col["warm"]] == "false" && l[col["action"]] == "false"
		if got := l[col["stalled"]] == "true"; got != planted {
			t.Errorf("csv: %s %s warm=%s stalled=%s; want stalled only on b's measured update-index", l[col["target"]],
				l[col["test"]], l[col["warm"]], l[col["stalled"]])
		}
		if planted {
			stalledRows++
		}
	}
	if stalledRows != 1 {
		t.Errorf("csv: %d stalled rows, want 1", stalledRows)
	}

	code, js, errs := run(t, Env{}, "report", "--store", db, "--format", "json")
	if code != ExitOK {
		t.Fatalf("report json: exit %d\n%s", code, errs)
	}
	var doc struct {
		Results []struct {
			Target, Test string
			Warm         bool
			Stalled      *bool `json:"stalled"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Results {
		want := r.Target == "b" && r.Test == "update-index" && !r.Warm
		if r.Stalled == nil || *r.Stalled != want {
			t.Errorf("json: %s %s warm=%v stalled=%v, want %v", r.Target, r.Test, r.Warm, r.Stalled, want)
		}
	}

	// compare names the stall in its notes, leaves the cell out of its
	// verdicts and says it was not judged.
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--color", "never")
	if code != ExitOK {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"stalled: update-index @1 on b (repeat 1) completed no operation",
		"not judged: update-index @1 on b", "verdicts over 1 cells: 0 slower, 0 faster, 0 same, 1 unknown; 1 cell(s) not judged"} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}

	// With every cell stalled the gate judges nothing: exit 1, each cell
	// named, in text and in JSON.
	stallCell(t, db, "b", "point-query")
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--fail-on-regression")
	if code != ExitFailure {
		t.Fatalf("gate over stalled cells: exit %d, want %d\n%s\n%s", code, ExitFailure, out, errs)
	}
	for _, want := range []string{"NOT JUDGED b: point-query @1 threads: every run of b (1 of 1) completed no operation",
		"NOT JUDGED b: update-index @1 threads:", "a failure to measure, not a verdict"} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("gate output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "REGRESSION") || strings.Contains(out, "gate: no regression") {
		t.Errorf("the gate called stalled cells a regression or a pass:\n%s", out)
	}
	if !strings.Contains(errs, "2 cell(s) not judged") {
		t.Errorf("stderr %q: want the cells not judged counted", errs)
	}
	code, js, errs = run(t, Env{}, "compare", "--store", db, "--fail-on-regression", "--format", "json")
	if code != ExitFailure {
		t.Fatalf("json gate over stalled cells: exit %d, want %d\n%s", code, ExitFailure, errs)
	}
	var cmp struct {
		Verdicts  []json.RawMessage `json:"verdicts"`
		NotJudged []struct {
			Target, Test, Why string
		} `json:"not_judged"`
	}
	if err := json.Unmarshal([]byte(js), &cmp); err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, n := range cmp.NotJudged {
		tests = append(tests, n.Test)
		if n.Target != "b" || !strings.Contains(n.Why, "completed no operation") {
			t.Errorf("json not_judged %+v", n)
		}
	}
	slices.Sort(tests)
	if len(cmp.Verdicts) != 0 || !slices.Equal(tests, []string{"point-query", "update-index"}) {
		t.Errorf("json: %d verdicts and not judged %v; want none judged and both named", len(cmp.Verdicts), tests)
	}
}

// TestCompareAcrossStalled sets planted experiments against each other
// across experiments: the base's point-query at 1000±2% and update-index
// at 500±2%, the other's point-query at 800±2% and update-index stalled in
// all 5 runs. The notes name each stalled run as the report does; the
// gate exits 3 for the point-query regression (a verdict outranks a
// failure to measure) and names update-index as not judged; the stalled
// cell alone exits 1. The values are fixed, so are the outcomes: 5
// against 5 runs with every base run above every other give Mann-Whitney's
// floor p = 0.0079 < 0.01 over the one judged cell.
func TestCompareAcrossStalled(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	at := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	wobble := func(level float64) []float64 {
		return []float64{level * 1.01, level * 0.98, level, level * 1.02, level * 0.99}
	}
	planted := func(version, test string, d int, vs []float64) resultstest.Experiment {
		return resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: version,
			Created: at.Add(time.Duration(d) * time.Hour), Test: test, Threads: 1, Values: vs}
	}
	ids := resultstest.Plant(t, db, planted("3.45", "point-query", 0, wobble(1000)), planted("3.45", "update-index", 1, wobble(500)),
		planted("3.46", "point-query", 2, wobble(800)), planted("3.46", "update-index", 3, make([]float64, 5)))
	code, out, errs := run(t, Env{}, "compare", "--store", db, "--base", "version:3.45", "--vs", "version:3.46",
		"--fail-on-regression", "--threshold", "0.1")
	if code != ExitRegression {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitRegression, out, errs)
	}
	for _, want := range []string{
		"REGRESSION version:3.46: point-query @1 threads: x0.800",
		"NOT JUDGED version:3.46: update-index @1 threads: every run of version:3.46 (5 of 5) completed no operation",
		"stalled: update-index @1 on version:3.46 (repeat 1) completed no operation in its measured part",
		"stalled: update-index @1 on version:3.46 (repeat 5) completed no operation in its measured part",
		"not judged: update-index @1 on version:3.46",
	} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, md, errs := run(t, Env{}, "compare", "--store", db, "--base", "version:3.45", "--vs", "version:3.46", "--format", "markdown")
	if row := "| update-index @1 | version:3.46 | n/a | n/a | stalled | n/a | 5/0 | not judged |"; code != ExitOK || !strings.Contains(md, row) {
		t.Errorf("markdown: exit %d, want 0 and the verdicts table's row %q\n%s\n%s", code, row, md, errs)
	}
	exp := func(i int) string { return fmt.Sprintf("experiment:%d", ids[i]) }
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", exp(1), "--vs", exp(3), "--fail-on-regression")
	if code != ExitFailure || !strings.Contains(unwrap(out), "NOT JUDGED "+exp(3)+": update-index @1") {
		t.Errorf("the stalled cell alone: exit %d, want %d naming it\n%s\n%s", code, ExitFailure, out, errs)
	}
	code, out, errs = run(t, Env{}, "compare", "--store", db, "--base", exp(1), "--vs", exp(3))
	if code != ExitOK || !strings.Contains(unwrap(out), "stalled: update-index @1 on "+exp(3)+" (repeat 3)") {
		t.Errorf("without the gate: exit %d, want 0 with the stall in the notes\n%s\n%s", code, out, errs)
	}
}

// TestHistoryStalledPoints: in a nightly series at 1000/s (fixed values),
// the third experiment's 3 runs all completed no operation and the fifth's
// first did. The stalled point has no value and makes no change point
// (the series reads "stalled" there and lists none), the partly stalled
// one is judged on its other runs, and the notes name both; with a newest
// point whose runs all stalled, the gate does not call it a regression but
// exits 1, naming it as not judged, and the JSON says so.
func TestHistoryStalledPoints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	stalled := func(d int, vs []float64) resultstest.Experiment {
		e := nightly(d, 1000, len(vs))
		e.Values = vs
		return e
	}
	partly := nightly(4, 1000, 3)
	partly.Values[0] = 0
	ids := resultstest.Plant(t, db, nightly(0, 1000, 3), nightly(1, 1000, 3), stalled(2, make([]float64, 3)),
		nightly(3, 1000, 3), partly)
	code, out, errs := run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errs)
	}
	text := unwrap(out)
	for _, want := range []string{
		"t-test over the 3 points' own spread", "stalled", fmt.Sprintf("point #%d 2026-11-03 (sqlite 3.46): every run (3) completed no operation (stalled)", ids[2]),
		fmt.Sprintf("point #%d 2026-11-05 (sqlite 3.46): 1 of 3 runs completed no operation", ids[4]), "gate: no regression",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "991") || strings.Contains(out, "at #") {
		t.Errorf("the series lacks its values or lists a change point; the stalled point must make none\n%s", out)
	}

	resultstest.Plant(t, db, stalled(5, make([]float64, 3)))
	code, out, errs = run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitFailure {
		t.Fatalf("a stalled newest point: exit %d, want %d\n%s\n%s", code, ExitFailure, out, errs)
	}
	if !strings.Contains(unwrap(out), "NOT JUDGED lite #") || strings.Contains(out, "REGRESSION") {
		t.Errorf("the stalled newest point is not reported as not judged:\n%s", out)
	}
	code, js, errs := run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression", "--format", "json")
	if code != ExitFailure {
		t.Fatalf("json: exit %d, want %d\n%s", code, ExitFailure, errs)
	}
	var doc struct {
		Cells []struct {
			NotJudged bool `json:"not_judged"`
			Points    []struct {
				Value   *float64 `json:"value"`
				Stalled int      `json:"stalled_runs"`
			} `json:"points"`
			ChangePoints []json.RawMessage `json:"change_points"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(doc.Cells))
	}
	c := doc.Cells[0]
	if !c.NotJudged || len(c.Points) != 6 || c.Points[2].Value != nil || c.Points[2].Stalled != 3 || c.Points[4].Stalled != 1 ||
		c.Points[4].Value == nil || len(c.ChangePoints) != 0 {
		t.Errorf("json cell: not judged %v, %d points, change points %d; points %+v", c.NotJudged, len(c.Points),
			len(c.ChangePoints), c.Points)
	}
}
