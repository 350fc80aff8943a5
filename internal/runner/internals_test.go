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

// internalsLog records the engine series a step streams, by role.
type internalsLog struct {
	seconds
	points  map[int]map[string][]int // role -> series -> seconds streamed
	flushes int
}

func (l *internalsLog) FlushInternals(ri int, series []store.EngineSeries) {
	l.flushes++
	if l.points[ri] == nil {
		l.points[ri] = map[string][]int{}
	}
	for _, s := range series {
		for _, p := range s.Points {
			l.points[ri][s.Name] = append(l.points[ri][s.Name], p.Sec)
		}
	}
}

// walStep is a step of one walWriter per target on a table w, made on
// each database first.
func walStep(t *testing.T, d time.Duration, dbs ...engine.DB) workload.Step {
	for _, db := range dbs {
		c := enginetest.Connect(t, db)
		if _, err := c.Exec(context.Background(), "CREATE TABLE w (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
			t.Fatal(err)
		}
	}
	return workload.Step{Name: "wal", Duration: d, Warmup: time.Second,
		NewWorker: func(ctx context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			c, err := db.(engine.SQL).Connect(ctx)
			return &walWriter{c: c}, err
		}}
}

// TestInternalsStreamed measures 12 s of a SQLite writer in fake time with
// a stream: the engine series go out with the other series every
// DefaultFlushEvery, each second of each series once, so a run killed
// midway keeps them; together the flushes hold the points of the
// result's series up to the last flush, and at least two flushes came
// before the step's end.
func TestInternalsStreamed(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		db := enginetest.Open(t, engine.Target{Name: "wal", Engine: "sqlite", Settings: map[string]string{"wal_autocheckpoint": "0"}})
		log := &internalsLog{points: map[int]map[string][]int{}}
		opt.Stream = log
		res, err := Measure(context.Background(), db, walStep(t, 12*time.Second, db), 1, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if log.flushes < 2 {
			t.Fatalf("%d flushes of engine series in a 12 s step, want at least 2", log.flushes)
		}
		for _, s := range res.Internals {
			got := log.points[0][s.Name]
			if len(got) == 0 || len(got) > len(s.Points) {
				t.Errorf("%s: streamed seconds %v, result has %d points", s.Name, got, len(s.Points))
				continue
			}
			for i, sec := range got {
				if sec != s.Points[i].Sec {
					t.Errorf("%s: streamed seconds %v, want the result's first %d in order", s.Name, got, len(got))
					break
				}
			}
		}
		if frames := log.points[0]["sqlite.wal_frames"]; len(frames) < 5 {
			t.Errorf("WAL frames streamed for seconds %v, want the step's first 5 at least", frames)
		}
	})
}

// TestInternalsInterleaved measures two SQLite writers interleaved in
// 50 ms turns, in fake time: each target's result has its own engine's
// series, and each engine's WAL grows only by its own writer's commits, so
// both grow.
func TestInternalsInterleaved(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		var parts []stepPart
		var dbs []engine.DB
		for _, name := range []string{"a", "b"} {
			db := enginetest.Open(t, engine.Target{Name: name, Engine: "sqlite", Settings: map[string]string{"wal_autocheckpoint": "0"}})
			dbs = append(dbs, db)
			parts = append(parts, stepPart{name: name, db: db, seed: 1})
		}
		rs, errs := measureParts(context.Background(), parts, walStep(t, 3*time.Second, dbs...), 1, 50*time.Millisecond, opt)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("target %d: %v", i, err)
			}
			var frames []store.EnginePoint
			for _, s := range rs[i][0].Internals {
				if s.Name == "sqlite.wal_frames" {
					frames = s.Points
				}
			}
			// The step lasts 2 x 3 s: about 6 seconds of each engine.
			if len(frames) < 4 || frames[len(frames)-1].Value <= frames[0].Value {
				t.Errorf("target %d: WAL frames %v, want points of most of the step's 6 s, growing", i, frames)
			}
		}
	})
}
