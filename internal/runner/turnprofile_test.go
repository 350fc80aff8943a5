package runner

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/profile"
	"benchlab/internal/workload"
)

// napper is a worker whose every operation sleeps 200 us: almost no CPU.
type napper struct{}

func (napper) Op(context.Context) (workload.Tally, error) {
	time.Sleep(200 * time.Microsecond)
	return workload.Tally{Statements: 1}, nil
}

func (napper) Close() error { return nil }

// TestInterleavedProfile profiles two in-process targets that take turns,
// one spinning and one sleeping: both recordings sample benchlab's one
// process over the whole step, so only keeping each target's own turns
// makes the spinner's profile hold far more samples than the sleeper's
// (a ratio that holds at any speed: whatever CPU the spinner gets in its
// turns it uses; a whole-step profile would give both the same). The
// test binary's own symbols do not resolve in perf here, so the workers
// are told apart by their CPU, not by name.
func TestInterleavedProfile(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	ctx := context.Background()
	parts := sqliteParts(t, "spin", "nap")
	workers := map[engine.DB]workload.Worker{parts[0].db: spinner{}, parts[1].db: napper{}}
	st := workload.Step{Name: "spin", Warmup: 200 * time.Millisecond, Duration: 1500 * time.Millisecond,
		NewWorker: func(_ context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			return workers[db], nil
		}}
	rs, errs := measureParts(ctx, parts, st, 1, 20*time.Millisecond, Options{SpeedProbeEvery: -1, ProfileHz: 499})
	var samples [2]int64
	for i, err := range errs {
		if err != nil {
			t.Fatalf("target %d: %v", i, err)
		}
		r := rs[i][0]
		p := r.Profile
		if p == nil || (p.Samples == 0 && p.Note == "") {
			t.Fatalf("%s: no profile and no reason: %+v", parts[i].name, p)
		}
		if st, err := profile.Parse(p.Folded); err != nil || st.Samples() != p.Samples {
			t.Errorf("%s: folded stacks hold %d samples (%v), the profile says %d", parts[i].name, st.Samples(), err, p.Samples)
		}
		samples[i] = p.Samples
		t.Logf("%s: %d events in %.3f s of turns, %d samples at %d Hz", parts[i].name, r.Events, r.Seconds, p.Samples, p.Hz)
	}
	if samples[0] == 0 || samples[0] < 5*samples[1] {
		t.Errorf("samples: spinner %d, sleeper %d; want the spinner's over 5 times the sleeper's", samples[0], samples[1])
	}
	if kids := perfChildren(t); len(kids) > 0 {
		t.Errorf("perf processes left: %v", kids)
	}
}
