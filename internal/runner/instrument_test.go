package runner

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/meter"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// callLog is an instrument that records the calls the step's loop makes,
// adds a mark to every second's load and a fact to the headline result.
type callLog struct {
	calls       []string
	samples     [][2]time.Time
	markedAfter int // samples before mark
	end         *stepEnd
}

func (l *callLog) mark() { l.calls, l.markedAfter = append(l.calls, "mark"), len(l.samples) }

func (l *callLog) sample(from, to time.Time, load *store.IntervalLoad) {
	l.calls = append(l.calls, "sample")
	l.samples = append(l.samples, [2]time.Time{from, to})
	load.CPUSpeed = 42
}

func (l *callLog) finish(e *stepEnd) {
	l.calls, l.end = append(l.calls, "finish"), e
	e.heads[0].Facts["call_log"] = float64(len(l.samples))
}

func (l *callLog) close() { l.calls = append(l.calls, "close") }

func (l *callLog) stream(Stream) { l.calls = append(l.calls, "stream") }

// TestInstrumentCalls runs a step of 1.5 s of warm-up and 3 s measured in
// fake time with one instrument and checks the life the instrument
// interface promises: samples of consecutive seconds from the step's start
// to its end, one mark right after the second that ends the warm-up,
// finish once with the measured part's start and end, then close; what it
// added to a second's load and to the headline result is kept.
func TestInstrumentCalls(t *testing.T) {
	fake(t, func(t *testing.T, opt Options) {
		st := workload.Step{Name: "calls", Warmup: 1500 * time.Millisecond, Duration: 3 * time.Second,
			Roles: []workload.Role{sleeperRole("r", 0, 0, 0, time.Millisecond, workload.PaceEven)}}
		log := &callLog{}
		s := newStepRun(context.Background(), []stepPart{{}}, st, 1, opt)
		if err := s.prepare(); err != nil {
			t.Fatal(err)
		}
		s.beginStreams()
		s.open(stepWindow(s.st, s.roles, time.Now()))
		win := s.win
		ins := instruments{log}
		s.use(ins)
		s.run(ins, func(clock meter.Clock, c *crew) func() {
			startWorkers(s.stepCtx, s.runs, clock, s.win, s.stop, false, c)
			return func() {}
		}, func(_ *roleRun, end time.Time) time.Duration { return end.Sub(win.measureFrom) })
		s.close()

		if n := len(log.calls); n < 4 || log.calls[n-2] != "finish" || log.calls[n-1] != "close" {
			t.Fatalf("calls %v: want samples and a mark, then finish, then close", log.calls)
		}
		marks := 0
		for _, c := range log.calls {
			if c == "mark" {
				marks++
			}
		}
		if marks != 1 || log.markedAfter == 0 || !log.samples[log.markedAfter-1][1].Equal(win.measureFrom) {
			t.Errorf("calls %v, samples %v: want one mark, right after the sample ending at %v",
				log.calls, log.samples, win.measureFrom)
		}
		if !log.samples[0][0].Equal(win.start) {
			t.Errorf("first sample from %v, want the step's start %v", log.samples[0][0], win.start)
		}
		for i := 1; i < len(log.samples); i++ {
			if !log.samples[i][0].Equal(log.samples[i-1][1]) {
				t.Errorf("sample %d from %v, want the previous one's end %v", i, log.samples[i][0], log.samples[i-1][1])
			}
		}
		if e := log.end; !e.measureFrom.Equal(win.measureFrom) || !e.end.Equal(win.deadline) || len(e.heads) != 1 {
			t.Errorf("finish got measured part %v to %v with %d heads, want %v to %v with 1",
				e.measureFrom, e.end, len(e.heads), win.measureFrom, win.deadline)
		}
		res := s.resultsOf[0][0]
		if got := res.Facts["call_log"]; got != float64(len(log.samples)) {
			t.Errorf("fact call_log = %v, want %d", got, len(log.samples))
		}
		loaded := 0
		for _, iv := range res.Intervals {
			if iv.Load != nil && iv.Load.CPUSpeed == 42 {
				loaded++
			}
		}
		if loaded < 3 {
			t.Errorf("intervals %+v: want the instrument's load in each measured second", res.Intervals)
		}
	})
}
