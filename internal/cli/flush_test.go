package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
)

// TestKilledRunKeepsFlushedSeconds kills (SIGKILL, no clean-up possible) a
// child process during a 60 s point-query step that flushes its series
// every 2 s, once the store holds its seconds 0-3 (so the test waits for
// the flushes, however slow the machine): the store keeps the step's
// result, status running, with its first seconds, each with operations
// counted, and the latency histogram, percentiles and event count of the
// part flushed.
func TestKilledRunKeepsFlushedSeconds(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	cmd := childCmd([]string{"TMPDIR=" + dir}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "60", "--warmup", "0s", "--report-interval", "1s", "--flush-every", "2s", "--store", storeFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go io.Copy(io.Discard, out) // the live lines: read, or the child blocks
	// Wait until second 3 of the step is in the store (the step lasts 60 s:
	// a child that ends first has failed).
	exited := make(chan struct{})
	go func() { cmd.Process.Wait(); close(exited) }()
	for flushedThrough(t, storeFile) < 3 {
		select {
		case <-exited:
			t.Fatal("the run ended before second 3 of its step was stored")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	results := storetest.OneRun(t, storeFile, true).Results
	var point *store.Result
	for i := range results {
		if results[i].Test == "point-query" {
			point = &results[i]
		}
	}
	if point == nil {
		t.Fatalf("no point-query result stored: %+v", results)
	}
	if point.Status != store.StatusRunning {
		t.Errorf("status %q, want %q (the step never ended)", point.Status, store.StatusRunning)
	}
	// Flushes at about 2, 4 and 6 s: at least seconds 0-3 are there.
	// A second may hold no operation on a starved machine (the workers got
	// no CPU in it); it is stored all the same, and the seconds together
	// hold some.
	secs := map[int]bool{}
	var stored int64
	for _, iv := range point.Intervals {
		if iv.Events < 0 {
			t.Errorf("second %d stored with %d events", iv.Sec, iv.Events)
		}
		stored += iv.Events
		secs[iv.Sec] = true
	}
	if stored == 0 {
		t.Errorf("the %d stored seconds hold no operation", len(point.Intervals))
	}
	for s := 0; s < len(point.Intervals); s++ {
		if !secs[s] {
			t.Errorf("second %d of the killed step is not in the store (stored: %v)", s, secs)
		}
	}
	if len(point.Intervals) < 4 {
		t.Errorf("%d seconds stored, want the 4 the test waited for", len(point.Intervals))
	}
	// The engine's series went out with the same flushes: SQLite's WAL
	// gauges, for seconds of the step stored.
	if len(point.Internals) == 0 {
		t.Error("no engine series stored for the killed step")
	}
	for _, es := range point.Internals {
		if len(es.Points) == 0 || es.Points[0].Sec != 0 || es.Points[len(es.Points)-1].Sec > len(point.Intervals) {
			t.Errorf("engine series %s stored for seconds %+v, with %d seconds of intervals", es.Name, es.Points, len(point.Intervals))
		}
	}
	// The latency histogram and totals of the flushed part are stored too:
	// at least the operations of seconds 0 and 1, which the workers handed
	// over when asked at 2 s (stored with a later flush), and no more than
	// the stored seconds count.
	var flushed, early int64
	for _, iv := range point.Intervals {
		flushed += iv.Events
		if iv.Sec < 2 {
			early += iv.Events
		}
	}
	if len(point.Histogram) == 0 {
		t.Fatal("no latency histogram stored for the killed step")
	}
	h, err := hdr.Decode(point.Histogram)
	if err != nil {
		t.Fatalf("stored histogram: %v", err)
	}
	if h.TotalCount() != point.Events || point.Events < early || point.Events > flushed+flushed/10 {
		t.Errorf("stored histogram counts %d operations, the result %d events; the stored seconds %d, seconds 0-1 %d",
			h.TotalCount(), point.Events, flushed, early)
	}
	if point.Latency.P50 <= 0 || point.Latency.P99 < point.Latency.P50 || point.Seconds < 1 ||
		point.Seconds > float64(len(point.Intervals)+1) {
		t.Errorf("stored latency %+v over %.1f s; want percentiles of the flushed part", point.Latency, point.Seconds)
	}
}

// TestFlushedSeriesIsStoredOnce runs a 4 s step flushing every second to
// its end: the stored series has each second once, as many as a run that
// does not flush.
func TestFlushedSeriesIsStoredOnce(t *testing.T) {
	storeFile := filepath.Join(t.TempDir(), "r.db")
	code, _, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
		"--time", "4", "--warmup", "1s", "--report-interval", "0", "--flush-every", "1s", "--store", storeFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(context.Background(), 0)
	results, err := st.Results(context.Background(), runs[0].ID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Test != "point-query" {
			continue
		}
		if r.Status != store.StatusOK || r.Events == 0 {
			t.Errorf("status %q, %d events; want ok and the step's events", r.Status, r.Events)
		}
		var measured int64
		seen := map[int]int{}
		for _, iv := range r.Intervals {
			seen[iv.Sec]++
			if iv.Sec >= 0 {
				measured += iv.Events
			}
		}
		for s, n := range seen {
			if n != 1 {
				t.Errorf("second %d stored %d times", s, n)
			}
		}
		// 1 s warm-up (-1) and 4 measured seconds, the last maybe split.
		if len(seen) < 5 || len(seen) > 6 || !(seen[-1] == 1 && seen[0] == 1 && seen[3] == 1) {
			t.Errorf("seconds stored %v; want -1 to 3 (4)", seen)
		}
		if measured < r.Events*9/10 || measured > r.Events*11/10 {
			t.Errorf("series counts %d events in the measured part, the result %d", measured, r.Events)
		}
		return
	}
	t.Fatal("no point-query result")
}

// flushedThrough is the last second of the point-query step's series in
// the store at file, -1 while there is none.
func flushedThrough(t *testing.T, file string) int {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		return -1
	}
	st, err := store.Open(file)
	if err != nil {
		return -1 // created but not yet migrated
	}
	defer st.Close()
	ctx := context.Background()
	runs, err := st.Runs(ctx, 0)
	if err != nil || len(runs) != 1 {
		return -1
	}
	res, err := st.Results(ctx, runs[0].ID, true)
	if err != nil {
		return -1
	}
	last := -1
	for _, r := range res {
		if r.Test == "point-query" {
			for _, iv := range r.Intervals {
				last = max(last, iv.Sec)
			}
		}
	}
	return last
}
