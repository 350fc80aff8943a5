// Package calibrate measures how often benchlab's verdicts are wrong on
// this machine: it writes the specs of the planted experiments (targets
// identical to a base, and targets whose tests are slowed by a known
// fraction, on SQLite) and of the gate's experiment (synchronous off
// against full), and judges the stored experiments into false-alarm,
// detection and gate tables (docs/statistics.md#calibration). Running the
// experiments is the caller's (benchlab calibrate).
package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// Size is the size of a calibration and how its verdicts are judged.
type Size struct {
	Store      string    // results database of the experiments
	Rounds     int       // planted experiments
	Copies     int       // targets identical to the base in each, base included
	Effects    []float64 // planted slowdowns, fractions
	Repeats    int       // repeats of every planted experiment
	TestTime   string    // read and write time of every test
	Interleave string    // turn of the interleaved experiments ("0": one target after the other)
	GateTrials int       // synchronous off/full experiments at 5 repeats
	CTE        int       // iterations of the planted tests' loop on the base
	Alpha      float64   // verdicts' significance level
	Threshold  float64   // the gate's smallest slowdown
	Temp       bool      // Store is a temporary one of this invocation
}

// Quick is calibrate --quick: a few minutes on a quiet machine.
var Quick = Size{Rounds: 2, Copies: 3, Effects: []float64{0.10, 0.30}, Repeats: 3,
	TestTime: "600ms", GateTrials: 2, CTE: 2000, Interleave: DefaultInterleave}

// Full is calibrate's default size: 5 rounds of 5 identical
// targets (every pair an A/A comparison: 10 pairs x 5 tests x 5 rounds =
// 250 A/A cells at 3 repeats, 750 at 1) and 15 planted cells per effect at
// 3 repeats (45 at 1); the gate's 5 repeats come from 4 trials of the
// synchronous experiment (off vs full, off vs off). 180 runs in all, about
// 10 minutes on a quiet 2-CPU VM.
//
// Tests last 600 ms: on a shared VM a stall of a few tens of milliseconds
// is common, and it costs a 300 ms test several percent of its throughput,
// a run-to-run noise users' tests of seconds do not have; 600 ms is as long
// as 250 A/A cells at 3 repeats allow in about 10 minutes.
var Full = Size{Rounds: 5, Copies: 5, Effects: []float64{0.05, 0.10, 0.30}, Repeats: 3,
	TestTime: "600ms", GateTrials: 4, CTE: 2000, Interleave: DefaultInterleave}

// Sequential is calibrate --sequential: the path of a new user
// (no history yet, so the first comparison must stand on its repeats), targets one after the other judged on a fresh store, so the
// 'no history' rows are the figures of Welch's t-test over the repeats.
// 6 identical targets give 15 A/A pairs x 5 tests = 75 cells per round,
// so 3 rounds give 225 A/A cells at 3 and at 5 repeats (a false-alarm
// rate of 1% is then 2 cells), and 9 planted cells per effect; 135 runs,
// about 10 minutes on a quiet 2-CPU VM (12 at a load average of 20).
var Sequential = Size{Rounds: 3, Copies: 6, Effects: []float64{0.05, 0.10, 0.30}, Repeats: 5,
	TestTime: "600ms", GateTrials: 2, CTE: 2000, Interleave: "0"}

// DefaultInterleave is calibrate's turn: its experiments run interleaved
// (spec workload.interleave), as a user comparing targets on a shared or
// virtual machine should; --interleave 0 measures the targets one after
// the other instead. 20 ms holds about 35 of the loop tests' operations.
const DefaultInterleave = "20ms"

// GateTestTime is the duration of the gate trials' sysbench tests.
const GateTestTime = "300ms"

// interleaveLine is the [workload] line of c's turn (off: one target
// after the other, which run's default would not give).
func (c Size) interleaveLine() string {
	var d spec.Duration
	if err := d.Set(c.Interleave); err != nil || d.Duration == 0 {
		return "interleave = \"off\"\n"
	}
	return fmt.Sprintf("interleave = %q\n", d.Duration)
}

// effectTarget names the target of a planted effect: e10 for 10%.
func effectTarget(e float64) string { return fmt.Sprintf("e%g", math.Round(e*1000)/10) }

// copyTarget names the i-th copy of the base (i >= 2).
func copyTarget(i int) string { return fmt.Sprintf("aa%d", i) }

// plantedTests are the planted experiment's tests whose cost grows with the
// loop count; the others (point, update) only give A/A cells.
var plantedTests = []string{"loop-count", "loop-sum", "loop-even"}

// PlantedSpec is one planted experiment: the base, copies-1 identical
// targets and one target per effect, on a custom workload of 5 tests.
func (c Size) PlantedSpec() string {
	var b strings.Builder
	target := func(name string, loops int) {
		fmt.Fprintf(&b, "[[target]]\nname = %q\nengine = \"sqlite\"\n[target.settings]\nbusy_timeout = \"%d\"\n\n", name, loops)
	}
	fmt.Fprintf(&b, "name = \"calibrate-planted\"\nbase = \"base\"\n\n")
	target("base", c.CTE)
	for i := 2; i <= c.Copies; i++ {
		target(copyTarget(i), c.CTE)
	}
	for _, e := range c.Effects {
		target(effectTarget(e), int(math.Round(float64(c.CTE)/(1-e))))
	}
	loop := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < (SELECT timeout FROM pragma_busy_timeout)) "
	fmt.Fprintf(&b, `[workload]
suite = "custom"
threads = [1]
read_time = %[1]q
write_time = %[1]q
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
repeats = %[2]d
%[6]s
[workload.custom]
setup = ["CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)"]
tables = ["t"]

[workload.custom.load]
sql = "INSERT INTO t (id, v) VALUES (?, ?)"
rows = 10000
args = ["seq(1)", "uniform(0, 1000)"]

[[workload.custom.test]]
name = "loop-count"
statements = [%[3]q]

[[workload.custom.test]]
name = "loop-sum"
statements = [%[4]q]

[[workload.custom.test]]
name = "loop-even"
statements = [%[5]q]

[[workload.custom.test]]
name = "point"
statements = ["SELECT v FROM t WHERE id = ?"]
args = ["uniform(1, 10000)"]

[[workload.custom.test]]
name = "update"
write = true
statements = ["UPDATE t SET v = v + 1 WHERE id = ?"]
args = ["uniform(1, 10000)"]
`, c.TestTime, c.Repeats, loop+"SELECT count(*) FROM c", loop+"SELECT sum(x) FROM c", loop+"SELECT count(*) FROM c WHERE x % 2 = 0",
		c.interleaveLine())
	return b.String()
}

// SyncSpec is the gate's experiment (docs/statistics.md#calibration): SQLite synchronous=off
// (base) against full, plus a second off target for the A/A gate, on five
// sysbench tests at 5 repeats.
func (c Size) SyncSpec() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"calibrate-sync\"\nbase = \"off\"\n\n")
	for _, t := range [][2]string{{"off", "off"}, {"full", "full"}, {"off2", "off"}} {
		fmt.Fprintf(&b, "[[target]]\nname = %q\nengine = \"sqlite\"\n[target.settings]\nsynchronous = %q\n\n", t[0], t[1])
	}
	fmt.Fprintf(&b, `[workload]
suite = "sysbench"
tests = ["point-query", "read-only-count", "update-index", "write-only", "insert"]
table_size = 10000
threads = [1]
read_time = %[1]q
write_time = %[1]q
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
repeats = 5
%s`, GateTestTime, c.interleaveLine())
	return b.String()
}

// Stored finds the calibrate experiments in c.Store, oldest first: the
// planted experiments and the gate trials, by their spec names. It returns
// c with the sizes the planted ones ran with (copies, effects, repeats, read
// from the first one's targets and runs); no planted experiment is no error.
func Stored(ctx context.Context, c Size) (Size, []int64, []int64, error) {
	st, err := store.Open(c.Store)
	if err != nil {
		return c, nil, nil, err
	}
	exps, err := st.Experiments(ctx)
	if err != nil {
		st.Close()
		return c, nil, nil, err
	}
	var planted, syncs []int64
	for _, e := range slices.Backward(exps) {
		switch e.Name {
		case "calibrate-planted":
			planted = append(planted, e.ID)
		case "calibrate-sync":
			syncs = append(syncs, e.ID)
		}
	}
	if len(planted) == 0 {
		st.Close()
		return c, nil, syncs, nil
	}
	d, err := report.Load(ctx, st, planted[0], true)
	st.Close()
	if err != nil {
		return c, nil, nil, err
	}
	c.Copies, c.Effects, c.Repeats = 1, nil, 0
	for _, t := range d.Experiment.Targets {
		if strings.HasPrefix(t, "aa") {
			c.Copies++
		} else if pct, err := strconv.ParseFloat(strings.TrimPrefix(t, "e"), 64); err == nil && t != "base" {
			c.Effects = append(c.Effects, pct/100)
		}
	}
	for _, r := range d.Runs {
		c.Repeats = max(c.Repeats, r.Repeat)
	}
	return c, planted, syncs, nil
}

// LoadLine describes the machine's load now.
func LoadLine() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return fmt.Sprintf("load average %s %s %s", f[0], f[1], f[2])
}

// EffectList is the effects as percentages, "5%, 10%".
func EffectList(es []float64) string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%g%%", e*100))
	}
	return strings.Join(s, ", ")
}
