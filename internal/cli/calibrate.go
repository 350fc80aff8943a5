package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/metrics"
	"benchlab/internal/noise"
	"benchlab/internal/report"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// calibration is the size of a `benchlab calibrate` run.
type calibration struct {
	store      string
	rounds     int // planted experiments
	copies     int // targets identical to the base in each, base included
	effects    []float64
	repeats    int     // repeats of every planted experiment
	testTime   string  // read and write time of every test
	interleave string  // turn of the interleaved experiments ("0": one target after the other)
	gateTrials int     // synchronous off/full experiments at 5 repeats
	cte        int     // iterations of the planted tests' loop on the base
	alpha      float64 // verdicts' significance level
	threshold  float64 // the gate's smallest slowdown
	temp       bool    // store is a temporary one of this invocation
}

// quickCalibration is calibrate --quick: a few minutes on a quiet machine.
var quickCalibration = calibration{rounds: 2, copies: 3, effects: []float64{0.10, 0.30}, repeats: 3,
	testTime: "600ms", gateTrials: 2, cte: 2000, interleave: defaultInterleave}

// fullCalibration is calibrate's default size: 5 rounds of 5 identical
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
var fullCalibration = calibration{rounds: 5, copies: 5, effects: []float64{0.05, 0.10, 0.30}, repeats: 3,
	testTime: "600ms", gateTrials: 4, cte: 2000, interleave: defaultInterleave}

// sequentialCalibration is calibrate --sequential: the path of a new user
// (issue 40), targets one after the other judged on a fresh store, so the
// 'no history' rows are the figures of Welch's t-test over the repeats.
// 6 identical targets give 15 A/A pairs x 5 tests = 75 cells per round,
// so 3 rounds give 225 A/A cells at 3 and at 5 repeats (a false-alarm
// rate of 1% is then 2 cells), and 9 planted cells per effect; 135 runs,
// about 10 minutes on a quiet 2-CPU VM (12 at a load average of 20).
var sequentialCalibration = calibration{rounds: 3, copies: 6, effects: []float64{0.05, 0.10, 0.30}, repeats: 5,
	testTime: "600ms", gateTrials: 2, cte: 2000, interleave: "0"}

// defaultInterleave is calibrate's turn: its experiments run interleaved
// (spec workload.interleave), as a user comparing targets on a shared or
// virtual machine should; --interleave 0 measures the targets one after
// the other instead. 20 ms holds about 35 of the loop tests' operations.
const defaultInterleave = "20ms"

// gateTestTime is the duration of the gate trials' sysbench tests.
const gateTestTime = "300ms"

// calibrate's results go to a fresh store in a temporary directory unless
// --store names one: the figures then measure the history of this
// invocation alone, not of earlier calibrations under other conditions (a
// store of loaded-machine runs made every later figure worse).

func newCalibrateCmd(env Env) *cobra.Command {
	var quick, sequential, rejudge bool
	var effects string
	c := fullCalibration
	cmd := &cobra.Command{
		Use:   "calibrate [--quick] [flags]",
		Short: "measure the verdicts' false-alarm and detection rates here (A/A and planted regressions on SQLite)",
		Long: "Runs A/A experiments and planted regressions on the embedded SQLite engine and prints the measured\n" +
			"false-alarm rate over the A/A cells, the detection rate per effect size and repeat count, and how often\n" +
			"the gate (compare --fail-on-regression) fires on synchronous=off vs full and on A/A at 5 repeats.\n" +
			"Planted experiment: targets identical to the base (A/A) and targets whose planted tests loop 1/(1-e)\n" +
			"times longer (busy_timeout carries the loop count; it has no other effect with one thread).",
		Args: noArgs,
		RunE: body(func(cmd *cobra.Command, _ []string) error {
			size := c
			if quick && sequential {
				return usagef("flag --sequential: not with --quick; each sets the size")
			}
			if quick || sequential {
				size, name := quickCalibration, "--quick"
				if sequential {
					size, name = sequentialCalibration, "--sequential"
				}
				fs := cmd.Flags()
				for _, flag := range []string{"rounds", "copies", "repeats", "time", "gate-trials", "cte", "effects", "interleave"} {
					if fs.Changed(flag) {
						return usagef("flag --%s: not with %s, which sets the size; drop %s to choose sizes", flag, name, name)
					}
				}
				size.store, size.alpha, size.threshold = c.store, c.alpha, c.threshold
				if rejudge {
					return rejudgeCalibration(env, size, cmd.Flags())
				}
				return runCalibrate(env, size)
			} else if effects != "" {
				var err error
				if size.effects, err = parseEffects(effects); err != nil {
					return err
				}
			}
			size.store, size.alpha, size.threshold = c.store, c.alpha, c.threshold
			if rejudge {
				return rejudgeCalibration(env, size, cmd.Flags())
			}
			return runCalibrate(env, size)
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&c.store, "store", "", "results database for calibrate's experiments, kept; earlier experiments in it count as history "+
		"(default: a fresh temporary one, removed at the end, so the figures rest on this invocation's history alone)")
	fs.BoolVar(&rejudge, "rejudge", false, "run nothing: judge again the calibrate experiments already in --store "+
		"(after an upgrade of benchlab, to see what its verdicts make of the same runs); their sizes are read from the store")
	fs.BoolVar(&quick, "quick", false, "the quick size: 2 rounds of 5 targets, 3 repeats, 10% and 30%, 2 gate trials (about 4 minutes)")
	fs.BoolVar(&sequential, "sequential", false, "a new user's path: targets one after the other, 3 rounds of 6 identical targets and "+
		"5%, 10%, 30%, 5 repeats (225 A/A cells at 3 and 5 repeats), 2 gate trials (about 10 minutes); the 'no history' rows "+
		"are a fresh store's verdicts")
	fs.IntVar(&c.rounds, "rounds", c.rounds, "planted experiments (each gives A/A cells and planted cells)")
	fs.IntVar(&c.copies, "copies", c.copies, "identical targets in each planted experiment, the base included (every pair is an A/A comparison: copies*(copies-1)/2 per test)")
	fs.IntVar(&c.repeats, "repeats", c.repeats, "repeats of each planted experiment; verdicts are measured at 1, 3 and 5 repeats up to this")
	fs.StringVar(&c.testTime, "time", c.testTime, "duration of every planted experiment's test (read and write time; the gate trials' tests take "+gateTestTime+")")
	fs.StringVar(&c.interleave, "interleave", c.interleave, "turn of the interleaved experiments (workload.interleave); 0 runs "+
		"each repeat's targets one after the other")
	fs.IntVar(&c.gateTrials, "gate-trials", c.gateTrials, "synchronous=off vs full (and off vs off) experiments at 5 repeats for the gate")
	fs.IntVar(&c.cte, "cte", c.cte, "loop iterations of the planted tests on the base")
	fs.StringVar(&effects, "effects", "", "planted slowdowns, comma-separated fractions (default 0.05,0.1,0.3)")
	fs.Float64Var(&c.alpha, "alpha", analysis.DefaultAlpha, "significance level of the verdicts")
	fs.Float64Var(&c.threshold, "threshold", 0.05, "the gate's smallest slowdown that fails (0.05 = 5%)")
	return cmd
}

// parseEffects reads --effects: fractions in (0, 0.9].
func parseEffects(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0 && v <= 0.9) {
			return nil, usagef("flag --effects: %q is not allowed; want fractions between 0 and 0.9, like 0.05,0.1,0.3", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func (c calibration) check() error {
	switch {
	case c.rounds < 1 || c.rounds > 1000:
		return usagef("flag --rounds: %d is not allowed; want 1 to 1000", c.rounds)
	case c.copies < 2 || c.copies > 20:
		return usagef("flag --copies: %d is not allowed; want 2 to 20 (the base and at least one copy)", c.copies)
	case c.repeats < 1 || c.repeats > 20:
		return usagef("flag --repeats: %d is not allowed; want 1 to 20", c.repeats)
	case c.gateTrials < 0 || c.gateTrials > 100:
		return usagef("flag --gate-trials: %d is not allowed; want 0 to 100", c.gateTrials)
	case c.cte < 100 || c.cte > 10_000_000:
		return usagef("flag --cte: %d is not allowed; want 100 to 10000000", c.cte)
	case !(c.alpha > 0 && c.alpha < 1):
		return usagef("flag --alpha: %v is not allowed; want a number between 0 and 1", c.alpha)
	case !(c.threshold > 0 && c.threshold < 1):
		return usagef("flag --threshold: %v is not allowed; want a number between 0 and 1", c.threshold)
	}
	if _, err := parseSeconds("time", c.testTime); err != nil {
		return err
	}
	if _, err := parseSeconds("interleave", c.interleave); err != nil {
		return err
	}
	return nil
}

// interleaveLine is the [workload] line of c's turn (off: one target
// after the other, which run's default would not give).
func (c calibration) interleaveLine() string {
	d, err := parseSeconds("interleave", c.interleave)
	if err != nil || d.Duration == 0 {
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

// plantedSpec is one planted experiment: the base, copies-1 identical
// targets and one target per effect, on a custom workload of 5 tests.
func (c calibration) plantedSpec() string {
	var b strings.Builder
	target := func(name string, loops int) {
		fmt.Fprintf(&b, "[[target]]\nname = %q\nengine = \"sqlite\"\n[target.settings]\nbusy_timeout = \"%d\"\n\n", name, loops)
	}
	fmt.Fprintf(&b, "name = \"calibrate-planted\"\nbase = \"base\"\n\n")
	target("base", c.cte)
	for i := 2; i <= c.copies; i++ {
		target(copyTarget(i), c.cte)
	}
	for _, e := range c.effects {
		target(effectTarget(e), int(math.Round(float64(c.cte)/(1-e))))
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
`, c.testTime, c.repeats, loop+"SELECT count(*) FROM c", loop+"SELECT sum(x) FROM c", loop+"SELECT count(*) FROM c WHERE x % 2 = 0",
		c.interleaveLine())
	return b.String()
}

// syncSpec is the gate's experiment of issue 15: SQLite synchronous=off
// (base) against full, plus a second off target for the A/A gate, on five
// sysbench tests at 5 repeats.
func (c calibration) syncSpec() string {
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
%s`, gateTestTime, c.interleaveLine())
	return b.String()
}

// calibrateRun runs one experiment of calibrate quietly and returns its ID.
func calibrateRun(env Env, c calibration, src, what string) (int64, error) {
	s, err := spec.Parse([]byte(src), what, "")
	if err != nil {
		return 0, fmt.Errorf("calibrate: %s spec: %w", what, err)
	}
	quiet := env
	quiet.Stdout = io.Discard
	return execute(quiet, s, c.store, runner.ExperimentOptions{}, planCheck{yes: true})
}

// tally counts cells and hits.
type tally struct{ cells, hits int }

func (t *tally) add(hit bool) {
	t.cells++
	if hit {
		t.hits++
	}
}

func (t tally) String() string {
	if t.cells == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", t.hits, t.cells, 100*float64(t.hits)/float64(t.cells))
}

// subset is d restricted to some targets (the first is the base) and to
// the repeats lo to hi; without history (withNoise false) the verdicts rest
// on the repeats alone.
func subset(d *report.Data, targets []string, lo, hi int, withNoise bool) *report.Data {
	out := *d
	out.Experiment.Base = targets[0]
	out.Experiment.Targets = targets
	out.Runs = nil
	for _, r := range d.Runs {
		if r.Repeat >= lo && r.Repeat <= hi && slices.Contains(targets, r.Target) {
			out.Runs = append(out.Runs, r)
		}
	}
	if !withNoise {
		out.Noise = nil
	}
	return &out
}

// pairs lists every pair of the identical targets, each an A/A comparison
// as a user makes one: the first of the pair is its base, and its tests
// are the family the correction runs over.
func pairs(copies []string) [][]string {
	var out [][]string
	for i := range copies {
		for j := i + 1; j < len(copies); j++ {
			out = append(out, []string{copies[i], copies[j]})
		}
	}
	return out
}

// windows are the disjoint groups of n consecutive repeats of an
// experiment of c.repeats: each is one comparison at n repeats, so an
// experiment of 3 repeats gives three single-run comparisons (repeat 1, 2
// and 3 on their own) and one of 3 repeats.
func (c calibration) windows(n int) [][2]int {
	var out [][2]int
	for lo := 1; lo+n-1 <= c.repeats; lo += n {
		out = append(out, [2]int{lo, lo + n - 1})
	}
	return out
}

// repeatCounts are the repeat counts verdicts are measured at.
func (c calibration) repeatCounts() []int {
	var out []int
	for _, n := range []int{1, 3, 5} {
		if n <= c.repeats {
			out = append(out, n)
		}
	}
	if !slices.Contains(out, c.repeats) {
		out = append(out, c.repeats)
	}
	return out
}

func runCalibrate(env Env, c calibration) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.store == "" {
		dir, err := os.MkdirTemp("", "benchlab-calibrate-")
		if err != nil {
			return fmt.Errorf("calibrate: temporary store: %w", err)
		}
		defer os.RemoveAll(dir)
		c.store, c.temp = filepath.Join(dir, "calibrate.db"), true
	}
	start := time.Now()
	w := env.Stdout
	host := metrics.HostFacts()
	fmt.Fprintf(w, "calibrate: %d planted experiments (base + %d identical targets + effects %s, %d repeats, tests of %s), "+
		"%d gate trials; store %s; host %s\n", c.rounds, c.copies-1, effectList(c.effects), c.repeats, c.testTime,
		c.gateTrials, c.store, host.ID())
	fmt.Fprintf(w, "conditions at start: %s\n", loadLine())
	// series runs n experiments of one spec and returns their ids.
	series := func(n int, src, what, label string) ([]int64, error) {
		var ids []int64
		for i := range n {
			t0 := time.Now()
			id, err := calibrateRun(env, c, src, what)
			if err != nil {
				return ids, fmt.Errorf("calibrate: %s %d: %w", label, i+1, err)
			}
			ids = append(ids, id)
			fmt.Fprintf(w, "  %s %d/%d: id %d, %s\n", label, i+1, n, id, time.Since(t0).Round(time.Second))
		}
		return ids, nil
	}
	planted, err := series(c.rounds, c.plantedSpec(), "planted", "planted experiment")
	if err != nil {
		return err
	}
	syncs, err := series(c.gateTrials, c.syncSpec(), "sync", "gate trial")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "conditions at end: %s; %s in all\n\n", loadLine(), time.Since(start).Round(time.Second))
	return c.evaluate(w, planted, syncs)
}

// rejudgeCalibration judges the calibrate experiments stored in c.store
// without running anything: the planted experiments and gate trials are
// found by their spec names, and the sizes (copies, effects, repeats) are
// read from the first planted experiment's targets and runs.
func rejudgeCalibration(env Env, c calibration, fs *pflag.FlagSet) error {
	for _, name := range []string{"quick", "rounds", "copies", "repeats", "time", "gate-trials", "cte", "effects"} {
		if fs.Changed(name) {
			return usagef("flag --%s: not with --rejudge, which judges the stored experiments as they ran", name)
		}
	}
	if c.store == "" {
		return usagef("flag --rejudge: needs --store naming a results database that holds calibrate experiments")
	}
	if _, err := os.Stat(c.store); err != nil {
		return usagef("flag --store: %s: %v; want an existing results database", c.store, err)
	}
	ctx := context.Background()
	st, err := store.Open(c.store)
	if err != nil {
		return err
	}
	exps, err := st.Experiments(ctx)
	if err != nil {
		st.Close()
		return err
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
		return usagef("flag --store: %s holds no calibrate-planted experiment to judge", c.store)
	}
	d, err := report.Load(ctx, st, planted[0], true)
	st.Close()
	if err != nil {
		return err
	}
	c.copies, c.effects, c.repeats = 1, nil, 0
	for _, t := range d.Experiment.Targets {
		if strings.HasPrefix(t, "aa") {
			c.copies++
		} else if pct, err := strconv.ParseFloat(strings.TrimPrefix(t, "e"), 64); err == nil && t != "base" {
			c.effects = append(c.effects, pct/100)
		}
	}
	for _, r := range d.Runs {
		c.repeats = max(c.repeats, r.Repeat)
	}
	fmt.Fprintf(env.Stdout, "calibrate --rejudge: %d planted experiments (base + %d identical targets + effects %s, %d repeats), "+
		"%d gate trials, as stored in %s\n\n", len(planted), c.copies-1, effectList(c.effects), c.repeats, len(syncs), c.store)
	return c.evaluate(env.Stdout, planted, syncs)
}

// loadLine describes the machine's load now.
func loadLine() string {
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

func effectList(es []float64) string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%g%%", e*100))
	}
	return strings.Join(s, ", ")
}

// evaluate judges the stored experiments and prints the tables.
func (c calibration) evaluate(w io.Writer, planted, syncs []int64) error {
	ctx := context.Background()
	st, err := store.Open(c.store)
	if err != nil {
		return err
	}
	defer st.Close()
	vopt := report.VerdictOptions{Alpha: c.alpha}
	modes := []struct {
		name      string
		withNoise bool
	}{{"no history", false}, {"noise prior", true}}
	type rowKey struct {
		mode    string
		repeats int
	}
	aa := map[rowKey]*tally{}
	basis := map[rowKey]map[string]int{}
	detect := map[rowKey]map[float64]*tally{}
	ratios := map[float64][]float64{}
	gateAA := map[int]*tally{}
	var slowCanaries, runs, slowHost int
	var disturbed report.Disturbance // loop and A/A results on a busy machine or slow CPUs
	var memWalks [2][]float64        // 32 MiB walks before and after the runs
	copies := []string{"base"}
	for i := 2; i <= c.copies; i++ {
		copies = append(copies, copyTarget(i))
	}
	for _, id := range planted {
		d, err := report.Load(ctx, st, id, true)
		if err != nil {
			return err
		}
		ds := report.Disturbances(d)
		disturbed.Results += ds.Results
		disturbed.Busy += ds.Busy
		disturbed.SlowCPU += ds.SlowCPU
		for _, r := range d.Runs {
			runs++
			if _, slow := d.Noise.Canaries.Check(r); slow {
				slowCanaries++
			}
			if d.Noise.HostSlow(r) != "" {
				slowHost++
			}
			m := store.ParseManifest(r.Manifest)
			for i, c := range []*store.Canary{m.Canary, m.CanaryAfter} {
				if c != nil && c.MemLoadsPerSec > 0 {
					memWalks[i] = append(memWalks[i], c.MemLoadsPerSec)
				}
			}
		}
		for _, m := range modes {
			for _, n := range c.repeatCounts() {
				k := rowKey{m.name, n}
				if aa[k] == nil {
					aa[k], basis[k], detect[k] = &tally{}, map[string]int{}, map[float64]*tally{}
				}
				for _, w := range c.windows(n) {
					for _, pair := range pairs(copies) {
						for _, cmp := range report.Compare(subset(d, pair, w[0], w[1], m.withNoise), vopt) {
							o := cmp.Verdict.Outcome
							aa[k].add(o == analysis.Slower || o == analysis.Faster)
							basis[k][cmp.Noise.Short()]++
						}
					}
					for _, e := range c.effects {
						if detect[k][e] == nil {
							detect[k][e] = &tally{}
						}
						for _, cmp := range report.Compare(subset(d, []string{"base", effectTarget(e)}, w[0], w[1], m.withNoise), vopt) {
							if !slices.Contains(plantedTests, cmp.Test) {
								continue
							}
							detect[k][e].add(cmp.Verdict.Outcome == analysis.Slower)
							if m.withNoise && n == c.repeats {
								ratios[e] = append(ratios[e], cmp.Verdict.Ratio)
							}
						}
					}
				}
			}
		}
		if c.repeats >= 5 {
			for _, cp := range copies[1:] {
				for _, m := range modes {
					if gateAA[boolIndex(m.withNoise)] == nil {
						gateAA[boolIndex(m.withNoise)] = &tally{}
					}
					found := gateFailures(report.Compare(subset(d, []string{"base", cp}, 1, 5, m.withNoise), vopt), c.alpha, c.threshold)
					gateAA[boolIndex(m.withNoise)].add(len(found) == 0)
				}
			}
		}
	}

	fmt.Fprintf(w, "A/A false alarms: cells where one of two identical targets was called slower or faster than the other "+
		"(every pair, alpha %g, minimum effect %g%%)\n", c.alpha, analysis.DefaultMinEffect*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "evidence\trepeats\tfalse alarms\tverdicts rest on\t")
	for _, m := range modes {
		for _, n := range c.repeatCounts() {
			k := rowKey{m.name, n}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", m.name, n, aa[k], basisText(basis[k]))
		}
	}
	tw.Flush()

	fmt.Fprintf(w, "\nPlanted regressions: cells of the %d loop tests called slower (detection rate)\n", len(plantedTests))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "evidence\trepeats\t")
	for _, e := range c.effects {
		fmt.Fprintf(tw, "%g%% (measured x%.3f %s)\t", e*100, analysis.Median(ratios[e]), spread(ratios[e]))
	}
	fmt.Fprintln(tw)
	for _, m := range modes {
		for _, n := range c.repeatCounts() {
			fmt.Fprintf(tw, "%s\t%d\t", m.name, n)
			for _, e := range c.effects {
				fmt.Fprintf(tw, "%s\t", detect[rowKey{m.name, n}][e])
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()

	fmt.Fprintf(w, "\nGate (compare --fail-on-regression: Holm over the cells at alpha %g, slowdown >= %g%%)\n", c.alpha, c.threshold*100)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "experiment\tevidence\texit as expected\t")
	for _, m := range modes {
		fires, quiet := &tally{}, &tally{}
		for _, id := range syncs {
			d, err := report.Load(ctx, st, id, true)
			if err != nil {
				return err
			}
			fires.add(len(gateFailures(report.Compare(subset(d, []string{"off", "full"}, 1, 5, m.withNoise), vopt), c.alpha, c.threshold)) > 0)
			quiet.add(len(gateFailures(report.Compare(subset(d, []string{"off", "off2"}, 1, 5, m.withNoise), vopt), c.alpha, c.threshold)) == 0)
		}
		fmt.Fprintf(tw, "synchronous off vs full, 5 repeats (exit 3)\t%s\t%s\t\n", m.name, fires)
		fmt.Fprintf(tw, "A/A off vs off, 5 repeats (exit 0)\t%s\t%s\t\n", m.name, quiet)
		if g := gateAA[boolIndex(m.withNoise)]; g != nil {
			fmt.Fprintf(tw, "A/A planted experiments, 5 repeats (exit 0)\t%s\t%s\t\n", m.name, g)
		}
	}
	tw.Flush()
	history := "the store's other experiments (" + c.store + ")"
	if c.temp {
		history = "this invocation's other experiments (a temporary store)"
	}
	fmt.Fprintf(w, "\nnotes: 'no history' judges each experiment on its own repeats (what a fresh store gives); "+
		"'noise prior' adds the host's history from %s. At 1 repeat each repeat of an experiment is a comparison of its own. "+
		"A/A pairs of one experiment share their targets' runs, so their false alarms are not independent. "+
		"%d of %d runs had a canary slower than the host's median by the flag thresholds.\n",
		history, slowCanaries, runs)
	if len(memWalks[0]) > 0 {
		fmt.Fprintf(w, "notes: memory canary (32 MiB walk, Mloads/s): before the runs median %.2f %s, after %.2f %s; "+
			"%d of %d runs ran on a slow host by their memory canaries (set aside when slower than their side's others; "+
			"a side with one and fewer than 3 runs left is not called the worse).\n",
			analysis.Median(memWalks[0])/1e6, spreadMillions(memWalks[0]), analysis.Median(memWalks[1])/1e6, spreadMillions(memWalks[1]), slowHost, runs)
	}
	if disturbed.Results > 0 {
		fmt.Fprintf(w, "notes: measured during the runs: %d of %d test results ran on a busy machine (other processes used "+
			"more than %d%% of all CPU and the step's threads waited for a CPU at least %.0f%% of their running time), %d on "+
			"slow CPUs (speed probes below x%.2f of the cell's median); verdicts set these aside when they came out worse "+
			"than their side's undisturbed runs (with 1 repeat per target a cell has too few runs for a speed median).\n",
			disturbed.Busy, disturbed.Results, noise.BusyForeignPct, 100*noise.BusyWaitShare, disturbed.SlowCPU, noise.SlowCPUFactor)
	}
	if total := aa[rowKey{"noise prior", c.repeats}]; total != nil && total.cells < 200 {
		fmt.Fprintf(w, "notes: %d A/A cells per row, fewer than 200: use more --rounds or --copies for a rate to rely on\n", total.cells)
	}
	return nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func basisText(m map[string]int) string {
	var parts []string
	for _, k := range []string{"prior", "prior-1", "prior,1run", "rep+within", "rep-t", "rep-welch", "repeats"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// spreadMillions is the range of canary rates in millions, "[lo-hi]".
func spreadMillions(xs []float64) string {
	if len(xs) == 0 {
		return "[-]"
	}
	return fmt.Sprintf("[%.2f-%.2f]", slices.Min(xs)/1e6, slices.Max(xs)/1e6)
}

// spread is the range of the cells' measured ratios, "[lo-hi]".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "[-]"
	}
	return fmt.Sprintf("[%.3f-%.3f]", slices.Min(xs), slices.Max(xs))
}
