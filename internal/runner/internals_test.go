package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// TestInternalsSeries checks how reads become series: a counter's rate
// over the time between reads, given to each second a missed read spans;
// a counter that shrank gives no point; a gauge belongs to the second that
// ends at its read, and the read at the start of the measured part gives
// no gauge point.
func TestInternalsSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	read := func(k int, at time.Duration, c, g float64) internalsRead {
		return internalsRead{k: k, at: t0.Add(at), in: engine.Internals{
			Counters: map[string]float64{"x.written": c}, Gauges: map[string]float64{"x.dirty": g}}}
	}
	got := internalsSeries([]internalsRead{
		read(0, 0, 100, 7),
		read(1, 1000*time.Millisecond, 150, 8), // 50 in 1 s
		read(3, 3000*time.Millisecond, 350, 9), // 200 in 2 s: 100/s for seconds 1 and 2
		read(4, 3500*time.Millisecond, 10, 10), // reset: no rate
		read(5, 4500*time.Millisecond, 20, 11), // 10 in 1 s
	})
	want := []store.EngineSeries{
		{Name: "x.dirty", Gauge: true, Points: []store.EnginePoint{{Sec: 0, Value: 8}, {Sec: 2, Value: 9}, {Sec: 3, Value: 10}, {Sec: 4, Value: 11}}},
		{Name: "x.written", Points: []store.EnginePoint{{Sec: 0, Value: 50}, {Sec: 1, Value: 100}, {Sec: 2, Value: 100}, {Sec: 4, Value: 10}}},
	}
	if len(got) != len(want) {
		t.Fatalf("series %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Gauge != want[i].Gauge || len(got[i].Points) != len(want[i].Points) {
			t.Fatalf("series %d: %+v, want %+v", i, got[i], want[i])
		}
		for j, p := range want[i].Points {
			if g := got[i].Points[j]; g.Sec != p.Sec || g.Value != p.Value {
				t.Errorf("%s point %d: %+v, want %+v", want[i].Name, j, g, p)
			}
		}
	}
}

// walWriter inserts a 4 KB row in its own transaction, then sleeps 10 ms.
type walWriter struct{ c engine.Conn }

func (w *walWriter) Op(ctx context.Context) (workload.Tally, error) {
	_, err := w.c.Exec(ctx, "INSERT INTO w (v) VALUES (randomblob(4000))")
	time.Sleep(10 * time.Millisecond)
	return workload.Tally{Statements: 1, Rows: 1}, err
}

func (w *walWriter) Close() error { return w.c.Close() }

// TestInternalsOfStep measures 3 s (after 1 s of warm-up) of one writer
// on SQLite without automatic checkpoints, in fake time: the step's
// result has the WAL's gauges per second of its measured part, on the
// same seconds as its intervals, and the frames in the WAL grow by at
// least the 100 commits of each second.
func TestInternalsOfStep(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		ctx := context.Background()
		db := enginetest.Open(t, engine.Target{Name: "wal", Engine: "sqlite", Settings: map[string]string{"wal_autocheckpoint": "0"}})
		c := enginetest.Connect(t, db)
		if _, err := c.Exec(ctx, "CREATE TABLE w (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
			t.Fatal(err)
		}
		st := workload.Step{Name: "wal", Duration: 3 * time.Second, Warmup: time.Second,
			NewWorker: func(ctx context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
				c, err := db.(engine.SQL).Connect(ctx)
				return &walWriter{c: c}, err
			}}
		res, err := Measure(ctx, db, st, 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		var frames []store.EnginePoint
		for _, s := range res.Internals {
			if s.Name == "sqlite.wal_frames" && s.Gauge {
				frames = s.Points
			}
		}
		if len(frames) < 2 || len(frames) > 3 {
			t.Fatalf("WAL frames per second %v over a 3 s step (series %+v); want 2 or 3 seconds", frames, res.Internals)
		}
		for i, p := range frames {
			if p.Sec != i {
				t.Errorf("point %d in second %d, want %d (the intervals' seconds: %+v)", i, p.Sec, i, res.Intervals)
			}
			if i > 0 && p.Value < frames[i-1].Value+100 {
				t.Errorf("WAL frames %v then %v: want 100 commits' frames more a second", frames[i-1].Value, p.Value)
			}
		}
	})
}
