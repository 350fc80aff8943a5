package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/noise"
	"benchlab/internal/results/resultstest"
	"benchlab/internal/store"
)

// nightly is a planted experiment of the nightly series: day d, its runs
// at level*(1+day effect)*(1+run wobble), a fixed pattern of a day
// effect up to ±1.3% and a run wobble up to ±2% (no value is drawn at
// random, so every verdict below is deterministic).
func nightly(d int, level float64, repeats int) resultstest.Experiment {
	day := []float64{0, 0.013, -0.011, 0.006, -0.004}[d%5]
	wobble := []float64{0.01, -0.02, 0, 0.02, -0.01}
	var vs []float64
	for r := range repeats {
		vs = append(vs, level*(1+day)*(1+wobble[(d+r)%len(wobble)]))
	}
	return resultstest.Experiment{Name: "nightly", Target: "lite", Engine: "sqlite", Version: "3.46", Host: "bench1",
		Created: time.Date(2026, 11, 1+d, 2, 0, 0, 0, time.UTC), Test: "point-query", Threads: 1, Values: vs}
}

// TestHistoryFindsPlantedStep stores three nightly experiments of one
// spec, the third 20% slower, and gates on the history. The newest point's
// 5 runs (all below 816) against the 10 runs before it (all above 970):
// Mann-Whitney's exact p = 2/C(15,5) = 0.00067, under alpha 0.01 with
// Holm over the one cell, and x0.80 is beyond the 5% threshold. The values
// are fixed, so the outcome is too; were the runs' ±2% noise random
// instead, a 20% step is over ten of its standard deviations, and the
// chance that 5 runs of the step overlap 10 runs without it is far below
// 1 in 10,000.
func TestHistoryFindsPlantedStep(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	ids := resultstest.Plant(t, db, nightly(0, 1000, 5), nightly(1, 1000, 5), nightly(2, 800, 5))
	code, out, errs := run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitRegression {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitRegression, out, errs)
	}
	newest := fmt.Sprintf("#%d 2026-11-03", ids[2])
	for _, want := range []string{
		"lite: point-query @1", "2 points from #" + fmt.Sprint(ids[0]), "slower",
		fmt.Sprintf("REGRESSION lite #%d: point-query @1 threads: x0.7", ids[2]),
		"3 points; at the spread the history shows, change points need at least",
	} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, newest) {
		t.Errorf("the newest point is not experiment %d:\n%s", ids[2], out)
	}
	code, out, errs = run(t, Env{}, "history", "experiment:nightly", "--store", db, "--format", "json", "--fail-on-regression")
	var doc struct {
		Cells []struct {
			Points []struct{ Experiment int64 }
			Newest struct {
				Outcome string
				Since   int64 `json:"history_since_experiment"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitRegression {
		t.Fatalf("json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if c := doc.Cells; len(c) != 1 || len(c[0].Points) != 3 || c[0].Points[2].Experiment != ids[2] ||
		c[0].Newest.Outcome != "slower" || c[0].Newest.Since != ids[0] {
		t.Errorf("json: %+v", doc)
	}
	// The step in the middle of a longer history is found where it is: 6
	// points at 1000, then 6 at 800.
	db2 := filepath.Join(t.TempDir(), "r.db")
	var es []resultstest.Experiment
	for d := range 12 {
		level := 1000.0
		if d >= 6 {
			level = 800
		}
		es = append(es, nightly(d, level, 3))
	}
	ids = resultstest.Plant(t, db2, es...)
	code, out, errs = run(t, Env{}, "history", "--store", db2, "--fail-on-regression")
	if code != ExitOK {
		t.Fatalf("12 points, the newest 6 at one level: exit %d, want 0\n%s\n%s", code, out, errs)
	}
	if want := fmt.Sprintf("at #%d 2026-11-07 (sqlite 3.46): -19.", ids[6]); !strings.Contains(unwrap(out), want) {
		t.Errorf("output lacks the change point %q:\n%s", want, out)
	}
	// HTML: one chart for the changed cell, its change point a line at
	// that experiment, the chart library inlined.
	code, out, errs = run(t, Env{}, "history", "--store", db2, "--format", "html")
	if code != ExitOK {
		t.Fatalf("html: exit %d\n%s", code, errs)
	}
	mark := `"markLine":{"data":[{"name":"-19.`
	if strings.Count(out, `class="chart"`) != 1 || !strings.Contains(out, mark) ||
		!strings.Contains(out, fmt.Sprintf(`"xAxis":"#%d 11-07"`, ids[6])) || !strings.Contains(out, "echarts.init") ||
		len(out) < 500_000 {
		t.Errorf("html page: %d bytes, %d charts, change point marked: %v", len(out), strings.Count(out, `class="chart"`),
			strings.Contains(out, mark))
	}
	// Over versions: three experiments of 3.45 at 1000, three of 3.46 at
	// 800 are two points of 9 runs each; all of 3.46's runs are below all
	// of 3.45's, Mann-Whitney p < 1e-4 (exact floor 2/C(18,9) = 4e-5, or
	// its normal approximation with ties), far under alpha.
	db3 := filepath.Join(t.TempDir(), "r.db")
	es = nil
	for d := range 6 {
		e := nightly(d, 1000, 3)
		if d >= 3 {
			e = nightly(d, 800, 3)
			e.Version = "3.46"
		} else {
			e.Version = "3.45"
		}
		es = append(es, e)
	}
	resultstest.Plant(t, db3, es...)
	code, out, errs = run(t, Env{}, "history", "--store", db3, "--by", "version", "--fail-on-regression")
	if code != ExitRegression || !strings.Contains(out, "one point per engine version") || !strings.Contains(out, "(sqlite 3.45)") {
		t.Errorf("by version: exit %d, want 3 with a point per version\n%s\n%s", code, out, errs)
	}
}

// TestHistoryAA: ten nightly points at one level raise nothing, and gate
// nothing; two points say what they cannot conclude. Values are fixed
// (day effects up to ±1.3%, run wobble up to ±2%): deterministic.
func TestHistoryAA(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	var es []resultstest.Experiment
	for d := range 10 {
		es = append(es, nightly(d, 1000, 3))
	}
	resultstest.Plant(t, db, es...)
	code, out, errs := run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitOK {
		t.Fatalf("A/A: exit %d, want 0\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "slower") || strings.Contains(out, "faster") || !strings.Contains(out, "gate: no regression") {
		t.Errorf("A/A history raised something:\n%s", out)
	}
	if !strings.Contains(out, "none") {
		t.Errorf("A/A history lists change points:\n%s", out)
	}
	code, out, errs = run(t, Env{}, "history", "experiment:nightly", "--store", db, "--format", "html")
	if code != ExitOK || strings.Contains(out, `class="chart"`) || !strings.Contains(out, "No cell changed") {
		t.Errorf("A/A html: exit %d, %d charts, want none\n%s", code, strings.Count(out, `class="chart"`), errs)
	}
	code, out, errs = run(t, Env{}, "history", "experiment:nightly until:2026-11-02", "--store", db, "--format", "markdown")
	if code != ExitOK {
		t.Fatalf("2 points: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(unwrap(out), "2 points; at the spread the history shows, change points need at least") {
		t.Errorf("2 points do not say how many more change points need:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment:weekly"}, `flag selector: selector "experiment:weekly" matches no stored result`},
		{[]string{"experiment:nightly", "--threshold", "2"}, "flag --threshold: 2 is not allowed"},
		{[]string{"experiment:nightly", "--format", "pdf"}, "flag --format"},
		{[]string{"experiment:nightly until:2026-11-01", "--fail-on-regression"}, "the gate needs a history of 2 or more"},
	} {
		code, out, errs := run(t, Env{}, append([]string{"history", "--store", db}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(unwrap(errs), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 with %q\n%s", tc.args, code, errs, tc.want, out)
		}
	}
}

// TestHistoryUsesNoiseModel: two nightly points of 2 runs each cannot be
// told apart by their runs alone (Mann-Whitney's floor for 2 against 2 is
// 0.33), but with the host's noise history for the test (6 earlier
// experiments of 3 runs on the same host, 12 degrees of freedom, spread
// about 1.6%) a 20% step is called: the t-test's statistic is over ten
// standard errors. Values are fixed: deterministic.
func TestHistoryUsesNoiseModel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	var es []resultstest.Experiment
	for d := range 6 {
		e := nightly(d, 1000, 3)
		e.Name = "aa"
		es = append(es, e)
	}
	two := []resultstest.Experiment{nightly(7, 1000, 2), nightly(8, 800, 2)}
	ids := resultstest.Plant(t, db, append(es, two...)...)
	code, out, errs := run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitUsage || !strings.Contains(errs, "the gate cannot fire") {
		t.Fatalf("without a noise history: exit %d, want 2 (a gate that cannot fire)\n%s\n%s", code, out, errs)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := noise.LearnStored(context.Background(), st, id); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, errs = run(t, Env{}, "history", "experiment:nightly", "--store", db, "--fail-on-regression")
	if code != ExitRegression {
		t.Fatalf("with a noise history: exit %d, want 3\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(unwrap(out), "noise prior") {
		t.Errorf("the verdict does not rest on the noise prior:\n%s", out)
	}
}

// TestHistoryOfRealRuns runs a two-target SQLite spec twice under one name
// and follows it: every target's cell is a series of 2 points, built from
// real stored results (series, facts, canaries), and the store is left as
// it was. What the verdicts say of real runs on a busy machine is not
// asserted.
func TestHistoryOfRealRuns(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "spec.toml", `name = "twice"
[[target]]
name = "wal"
engine = "sqlite"
settings = { journal_mode = "wal" }
[[target]]
name = "del"
engine = "sqlite"
settings = { journal_mode = "delete" }
[workload]
tests = ["point-query"]
table_size = 1000
threads = [1]
read_time = "1s"
warmup = "0s"
`)
	for range 2 {
		if code, out, errs := run(t, Env{}, "run", sp, "--store", db, "--yes"); code != ExitOK {
			t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
		}
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, Env{}, "history", "--store", db)
	if code != ExitOK {
		t.Fatalf("history: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"history of experiment:twice", "wal: point-query @1", "del: point-query @1", "1 points from #1",
		"2 points, one run each and no noise history for the test", "from 3 points before it (2 more)"} {
		if !strings.Contains(unwrap(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("history changed the store's file")
	}
}
