package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/disktest"
)

// fill writes zeros to a file in dir until its disk is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}

// TestJournalKeepsResults fills the disk of a SQLite store between a
// step's start and its end: the result and the run's end are refused by
// the store and kept in the journal (next to the store it cannot be
// written, so under the state dir), with errors naming it. Once the disk
// has room, the next Open stores them, removes the journal and says so;
// an entry is stored once even when its journal comes back.
func TestJournalKeepsResults(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	disk := disktest.Small(t, "size=1m")
	path := filepath.Join(disk, "r.db")
	ctx := context.Background()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Journal(0)
	e := Experiment{Name: "exp", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	run := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := s.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	res := Result{RunID: run.ID, Seq: 1, Test: "point-query", Threads: 4, Metric: "qps", Status: StatusOK,
		Started: time.Now().UTC(), Seconds: 600, Events: 6e6, Statements: 6e6,
		Latency: Latency{P50: 1e5, P99: 2e6, Max: 9e6}, Histogram: make([]byte, 2700),
		Facts: map[string]float64{"client_gomaxprocs": 2}}
	if err := s.BeginResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, disk)
	for i := range 600 {
		res.Intervals = append(res.Intervals, Interval{Sec: i, Seconds: 1, Events: 10000, Statements: 10000, P95: 2e6, Max: 9e6})
	}
	var pe *PendingError
	err = s.SaveResult(ctx, &res)
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, state) || !strings.Contains(err.Error(), pe.Path) ||
		!strings.Contains(err.Error(), "full") {
		t.Fatalf("SaveResult on a full disk: %v, want the disk full and a PendingError naming a journal under %s", err, state)
	}
	run.Status, run.Ended, run.Error = StatusFailed, time.Now(), err.Error()
	if err := s.FinishRun(ctx, &run); !errors.As(err, &pe) {
		t.Fatalf("FinishRun on a full disk: %v, want a PendingError", err)
	}
	s.Close()
	journal, err := os.ReadFile(pe.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".pending.jsonl"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a journal beside the store on the full disk: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		s, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer s.Close()
		runs, err := s.Runs(ctx, e.ID)
		if err != nil || len(runs) != 1 || runs[0].Status != StatusFailed || !strings.Contains(runs[0].Error, pe.Path) {
			t.Fatalf("%s: runs %+v %v, want one, failed, naming the journal", when, runs, err)
		}
		rs, err := s.Results(ctx, run.ID, true)
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: results %+v %v, want one", when, rs, err)
		}
		if g := rs[0]; g.Status != StatusOK || g.Events != 6e6 || len(g.Intervals) != 600 || g.Latency.P99 != 2e6 ||
			len(g.Histogram) != 2700 || g.Facts["client_gomaxprocs"] != 2 {
			t.Errorf("%s: result %s %d events, %d seconds, p99 %s, %d histogram bytes, facts %v",
				when, g.Status, g.Events, len(g.Intervals), g.Latency.P99, len(g.Histogram), g.Facts)
		}
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Replayed(); len(r) != 1 || r[0].Path != pe.Path || r[0].Entries != 2 {
		t.Errorf("replayed %+v, want 2 entries from %s", r, pe.Path)
	}
	s.Close()
	if _, err := os.Stat(pe.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal still there after its replay: %v", err)
	}
	check("after the replay")
	// A crash between storing the entries and removing the file: the
	// journal is replayed again, and nothing is stored twice.
	if err := os.WriteFile(pe.Path, journal, 0o600); err != nil {
		t.Fatal(err)
	}
	check("after a second replay")
}

// TestJournalTornLine: a journal whose last line was cut by a crash while
// it was written is stored without it; a journal kept for another store
// is refused with an error naming it, and left in place.
func TestJournalTornLine(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := Experiment{Name: "exp", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	run := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := s.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	var pe *PendingError
	kept := s.keep(errors.New("disk I/O error"), pendingEntry{Result: &Result{RunID: run.ID, Test: "kept", Status: StatusOK}})
	if !errors.As(kept, &pe) || pe.Path != path+".pending.jsonl" {
		t.Fatalf("keep: %v, want the journal beside the store", kept)
	}
	s.Close()
	f, err := os.OpenFile(pe.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"key":"0123","store":"` + path + `","result":{"Te`)
	f.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatalf("open with a torn last line: %v", err)
	}
	rs, err := s.Results(ctx, run.ID, false)
	if err != nil || len(rs) != 1 || rs[0].Test != "kept" {
		t.Errorf("results %+v %v, want the one whole entry", rs, err)
	}
	s.Close()

	other := `{"key":"4567","store":"/elsewhere/r.db","result":{"Test":"x"}}` + "\n"
	if err := os.WriteFile(pe.Path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), pe.Path) || !strings.Contains(err.Error(), "another store") {
		t.Errorf("open with another store's journal: %v, want an error naming the journal", err)
	}
	if b, _ := os.ReadFile(pe.Path); string(b) != other {
		t.Errorf("the journal was changed: %q", b)
	}
}
