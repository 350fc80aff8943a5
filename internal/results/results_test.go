package results_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/all"
	"benchlab/internal/results"
	"benchlab/internal/results/resultstest"
	"benchlab/internal/store"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"experiment:12", ""},
		{"experiment:nightly, target:pg16 engine:postgres", ""},
		{"version:16.* since:2026-11-01 until:2026-11-30", ""},
		{"threads:4", ""},
		{"", "empty; want key:value"},
		{"experiment", `term "experiment": want key:value`},
		{"colour:red", `unknown key "colour"`},
		{"tag:nightly", "benchlab stores no tags"},
		{"threads:many", "want a thread count"},
		{"since:yesterday", "want a date"},
		{"since:2026-11-05 until:2026-11-01", "until is not after since"},
		{"target:[", "malformed pattern"},
		{`experiment:"import sysbench",target:pg`, ""},
		{`experiment:"import sysbench`, "double quote is not closed"},
		{`experiment:""`, "want key:value"},
	} {
		_, err := results.ParseSelector(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.err)
		case tc.err != "" && !strings.Contains(err.Error(), "selector "):
			t.Errorf("%q: error %v does not name the selector", tc.in, err)
		}
	}
}

func TestLoadSelects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	day := func(d int) time.Time { return time.Date(2026, 11, d, 6, 0, 0, 0, time.UTC) }
	ids := resultstest.Plant(t, path,
		resultstest.Experiment{Name: "nightly", Target: "pg15", Engine: "postgres", Version: "15.8", Created: day(1),
			Test: "point-query", Threads: 1, Values: []float64{100, 101}},
		resultstest.Experiment{Name: "nightly", Target: "pg16", Engine: "postgres", Version: "16.4", Created: day(2),
			Test: "point-query", Threads: 4, Values: []float64{200, 201, 202}},
		resultstest.Experiment{Name: "other", Target: "lite", Engine: "sqlite", Version: "3.46", Created: day(3),
			Test: "update-index", Threads: 1, Values: []float64{50}},
	)
	st, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sel  string
		exps []int64
		runs int
	}{
		{"experiment:nightly", ids[:2], 5},
		{"experiment:" + itoa(ids[2]), ids[2:], 1},
		{"engine:postgres version:16.*", ids[1:2], 3},
		{"target:pg15,target:lite", []int64{ids[0], ids[2]}, 3},
		{"since:2026-11-02 until:2026-11-02", ids[1:2], 3},
		{"experiment:nightly threads:1", ids[:1], 2},
		{"suite:sysbench test:update-*", ids[2:], 1},
		{`experiment:"other" , engine:"sqlite"`, ids[2:], 1},
	} {
		sel, err := results.ParseSelector(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		set, err := results.Load(context.Background(), st, sel)
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		var got []int64
		for _, e := range set.Experiments {
			got = append(got, e.ID)
			if e.Parsed == nil || e.Suite != "sysbench" {
				t.Errorf("%s: experiment %d's spec parsed %v, suite %q", tc.sel, e.ID, e.SpecErr, e.Suite)
			}
		}
		if !slices.Equal(got, tc.exps) || len(set.Runs()) != tc.runs {
			t.Errorf("%s: experiments %v with %d runs, want %v with %d", tc.sel, got, len(set.Runs()), tc.exps, tc.runs)
		}
	}
	sel, _ := results.ParseSelector("experiment:weekly")
	_, err = results.Load(context.Background(), st, sel)
	var nm *results.NoMatch
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), `"experiment:weekly"`) {
		t.Errorf("a selector matching nothing: %v, want a NoMatch naming it", err)
	}
	// Read-only: a write through this store fails, and the file is as it was.
	if err := st.CreateExperiment(context.Background(), &store.Experiment{Name: "x", Base: "a", Targets: []string{"a"}}); err == nil {
		t.Error("a write through a store opened read-only succeeded")
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("reading the store changed its file")
	}
}

func TestOpenReadOnlyRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := store.OpenReadOnly(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a missing file opened")
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenReadOnly(junk); err == nil {
		t.Error("a file that is no database opened")
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenReadOnly(empty); err == nil || !strings.Contains(err.Error(), "older than this benchlab") {
		t.Errorf("an empty file: %v, want the schema named as older", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
