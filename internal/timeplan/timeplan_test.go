package timeplan

import (
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/engine/sqlite"
	_ "benchlab/internal/workload/sysbench"

	"benchlab/internal/spec"
)

func parse(t *testing.T, src string) spec.Spec {
	t.Helper()
	s, err := spec.Parse([]byte(src), "s.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScheduleTimes checks a plan worked by hand: two targets x 3 repeats;
// the load of 150,000 rows (10 s at the assumed 15,000 rows/s),
// update-index (write, 20 s + 2 s warm-up at 1 and 4 threads), the postwrite
// cleanup (a 7 s target), point-query (10 s + 2 s at 1 and 4 threads).
func TestScheduleTimes(t *testing.T) {
	s := parse(t, `name = "x"
[[target]]
name = "a"
engine = "sqlite"
[[target]]
name = "b"
engine = "sqlite"
[workload]
tests = ["point-query", "update-index"]
table_size = 150000
threads = [1, 4]
read_time = "10s"
write_time = "20s"
warmup = "2s"
postwrite_wait = "7s"
repeats = 3
`)
	sc, err := Of(s)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Runs != 6 || sc.Measured() != 4 {
		t.Fatalf("runs %d measured %d, want 6 and 4", sc.Runs, sc.Measured())
	}
	// 10 + (20+2)*2 + 7 + (10+2)*2 = 85 s per run; the cleanup that
	// settles the load (postload, no wait of its own) is not estimated.
	if sc.PerRun != 85*time.Second || sc.Total() != 510*time.Second || sc.Unknown != 1 {
		t.Fatalf("per run %s, total %s, unknown %d; want 1m25s, 8m30s, 1", sc.PerRun, sc.Total(), sc.Unknown)
	}
	var b strings.Builder
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := sc.Write(&b, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"6 run(s) = 2 target(s) x 3 repeat(s)", "update-index", "1,4", "2s+20s", "44s",
		"postwrite", "7s", "one run: 1m25s", "all 6 run(s): 8m30s", "estimated end: 2026-01-02 03:12:35 UTC",
		"load 150k rows", "~10s", "prepare of a: ~10s at assumed 15k rows/s (no earlier prepare of sqlite in the store)",
		"prepare of b: ~10s"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan lacks %q:\n%s", w, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 120 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}

// TestLoadRates checks that a measured load rate replaces the assumed one:
// 100,000 rows at 25,000 rows/s take 4 s, and the plan says where the rate
// comes from.
func TestLoadRates(t *testing.T) {
	s := parse(t, "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\ntests = [\"point-query\"]\n"+
		"table_size = 100000\nread_time = \"10s\"\nwarmup = \"0s\"\n")
	var asked []string
	sc, err := OfWithRates(s, func(engine, step string) (LoadRate, bool) {
		asked = append(asked, engine+"/"+step)
		return LoadRate{RowsPerSec: 25000, From: "median of 3 earlier load(s) in the store"}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	if sc.PerRun != 14*time.Second || len(sc.Loads) != 1 || sc.Loads[0].Time != 4*time.Second ||
		strings.Join(asked, ",") != "sqlite/prepare" {
		t.Fatalf("per run %s, loads %+v, asked %v; want 14s and one 4 s load of sqlite/prepare", sc.PerRun, sc.Loads, asked)
	}
	var b strings.Builder
	if err := sc.Write(&b, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "prepare of a: ~4s at 25k rows/s, median of 3 earlier load(s) in the store") {
		t.Errorf("plan does not say the measured rate:\n%s", b.String())
	}
}

// TestTrackerEstimate checks the ETA: on plan at first, then stretched by
// the factor the finished runs took over their plan.
func TestTrackerEstimate(t *testing.T) {
	sc := Schedule{Runs: 4, PerRun: 10 * time.Minute}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := NewTracker(sc, t0)
	tr.StartRun(0, t0)
	done, end := tr.Estimate(t0.Add(5 * time.Minute))
	if !end.Equal(t0.Add(40*time.Minute)) || done != 0.125 {
		t.Fatalf("on plan: done %v end %v, want 0.125 and +40m", done, end)
	}
	// The first run took 15 minutes (a load): the other three are expected
	// to take 15 minutes each too.
	tr.StartRun(1, t0.Add(15*time.Minute))
	done, end = tr.Estimate(t0.Add(15 * time.Minute))
	if !end.Equal(t0.Add(60*time.Minute)) || done != 0.25 {
		t.Fatalf("stretched: done %v end %v, want 0.25 and +60m", done, end)
	}
	if l := tr.Line(t0.Add(15 * time.Minute)); !strings.Contains(l, "25% done, eta 01:00:00 (in 45m)") {
		t.Errorf("line %q", l)
	}
}

func TestDurations(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond: "300ms", 10 * time.Second: "10s", 90 * time.Second: "1m30s",
		time.Hour: "1h", 2*time.Hour + 3*time.Minute: "2h3m", 25*time.Hour + 42*time.Minute: "1d 1h42m",
	} {
		if got := Long(d); got != want {
			t.Errorf("Long(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestTotalCapped keeps a plan of absurd sizes from wrapping round: 1000
// runs of 1080 days each summed to 12485 days (the product overflowed);
// now every time past MaxTotal is MaxTotal, shown as such.
func TestTotalCapped(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		sc   Schedule
		want time.Duration
	}{
		{Schedule{Runs: 1000, PerRun: 1080 * day}, MaxTotal},
		{Schedule{Runs: 1 << 40, PerRun: time.Hour}, MaxTotal},
		{Schedule{Runs: 3, PerRun: time.Hour}, 3 * time.Hour},
		{Schedule{Runs: 0, PerRun: time.Hour}, 0},
	} {
		if got := c.sc.Total(); got != c.want {
			t.Errorf("%d runs of %s: Total %s; want %s", c.sc.Runs, c.sc.PerRun, got, c.want)
		}
	}
	if got := addCapped(MaxTotal-time.Second, time.Hour); got != MaxTotal {
		t.Errorf("addCapped past the cap: %s", got)
	}
	if got := addCapped(time.Hour, time.Minute); got != time.Hour+time.Minute {
		t.Errorf("addCapped: %s", got)
	}
	if got := Long(MaxTotal); got != "10 years or more" {
		t.Errorf("Long(MaxTotal) = %q", got)
	}
}
