package insertbench

import (
	"context"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/workload"
)

// TestPacingUnderStall runs qr500 on SQLite while another connection holds
// the database's write lock for 2.5 s (BEGIN IMMEDIATE), a real stall of the
// inserter and deleter. With the default pacing, the original client's
// limiter, the time lost to the stall is not made up: the step delivers less
// than 95% of its target insert rate and misses the SLA. With pacing "even"
// the inserter catches up after the lock is released and meets it.
func TestPacingUnderStall(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		pacing string
		met    bool
	}{{"", false}, {"even", true}} {
		db := enginetest.Open(t, engine.Target{Name: "s", Engine: "sqlite"})
		p := params()
		o := opts(p)
		o.Clients, o.Rows, o.Pacing = 1, 2000, c.pacing
		o.QueryTime = workload.Duration{Duration: 5 * time.Second}
		steps, err := Suite{}.Plan(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps[:3] { // setup, l.i0, l.x
			runStep(t, ctx, db, st, p)
		}
		st := queryStep(p, "qr500", false, 500)
		if got := st.Roles[1].Pacing; got != workload.Pacings[pacingName(p)] {
			t.Fatalf("pacing %q planned as %d", c.pacing, got)
		}
		locker, err := db.(engine.SQL).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := make(chan error, 1)
		go func() {
			time.Sleep(800 * time.Millisecond)
			if _, err := locker.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
				held <- err
				return
			}
			time.Sleep(2500 * time.Millisecond)
			_, err := locker.Exec(ctx, "COMMIT")
			held <- err
		}()
		rs := runStep(t, ctx, db, st, p)
		if err := <-held; err != nil {
			t.Fatalf("holding the write lock: %v", err)
		}
		locker.Close()
		ins := roleOf(rs, "insert")
		share := ins.Throughput() / ins.Role.TargetRate
		t.Logf("pacing %q: %d rows in %.2f s, %.2f of the target rate", pacingName(p), ins.Rows, ins.Seconds, share)
		if ins.Rows != st.Roles[1].Ops*rpcBig {
			t.Errorf("pacing %q: inserted %d rows, want %d", pacingName(p), ins.Rows, st.Roles[1].Ops*rpcBig)
		}
		if met := share >= SLA; met != c.met {
			t.Errorf("pacing %q: delivered %.2f of the target rate under a 2.5 s stall; SLA met %v, want %v",
				pacingName(p), share, met, c.met)
		}
		if ins.Latency.Max < 2*time.Second {
			t.Errorf("pacing %q: insert latency max %s, want the stall in it", pacingName(p), ins.Latency.Max)
		}
	}
}
