package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/calibrate"
	"benchlab/internal/metrics"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
)

// calibrate's results go to a fresh store in a temporary directory unless
// --store names one: the figures then measure the history of this
// invocation alone, not of earlier calibrations under other conditions (a
// store of loaded-machine runs made every later figure worse).

func newCalibrateCmd(env Env) *cobra.Command {
	var quick, sequential, rejudge bool
	var effects string
	c := calibrate.Full
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
				size, name := calibrate.Quick, "--quick"
				if sequential {
					size, name = calibrate.Sequential, "--sequential"
				}
				fs := cmd.Flags()
				for _, flag := range []string{"rounds", "copies", "repeats", "time", "gate-trials", "cte", "effects", "interleave"} {
					if fs.Changed(flag) {
						return usagef("flag --%s: not with %s, which sets the size; drop %s to choose sizes", flag, name, name)
					}
				}
				size.Store, size.Alpha, size.Threshold = c.Store, c.Alpha, c.Threshold
				if rejudge {
					return rejudgeCalibration(env, size, cmd.Flags())
				}
				return runCalibrate(env, size)
			} else if effects != "" {
				var err error
				if size.Effects, err = parseEffects(effects); err != nil {
					return err
				}
			}
			size.Store, size.Alpha, size.Threshold = c.Store, c.Alpha, c.Threshold
			if rejudge {
				return rejudgeCalibration(env, size, cmd.Flags())
			}
			return runCalibrate(env, size)
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Store, "store", "", "results database for calibrate's experiments, kept; earlier experiments in it count as history "+
		"(default: a fresh temporary one, removed at the end, so the figures rest on this invocation's history alone)")
	fs.BoolVar(&rejudge, "rejudge", false, "run nothing: judge again the calibrate experiments already in --store "+
		"(after an upgrade of benchlab, to see what its verdicts make of the same runs); their sizes are read from the store")
	fs.BoolVar(&quick, "quick", false, "the quick size: 2 rounds of 5 targets, 3 repeats, 10% and 30%, 2 gate trials (about 4 minutes)")
	fs.BoolVar(&sequential, "sequential", false, "a new user's path: targets one after the other, 3 rounds of 6 identical targets and "+
		"5%, 10%, 30%, 5 repeats (225 A/A cells at 3 and 5 repeats), 2 gate trials (about 10 minutes); the 'no history' rows "+
		"are a fresh store's verdicts")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "planted experiments (each gives A/A cells and planted cells)")
	fs.IntVar(&c.Copies, "copies", c.Copies, "identical targets in each planted experiment, the base included (every pair is an A/A comparison: copies*(copies-1)/2 per test)")
	fs.IntVar(&c.Repeats, "repeats", c.Repeats, "repeats of each planted experiment; verdicts are measured at 1, 3 and 5 repeats up to this")
	fs.StringVar(&c.TestTime, "time", c.TestTime, "duration of every planted experiment's test (read and write time; the gate trials' tests take "+calibrate.GateTestTime+")")
	fs.StringVar(&c.Interleave, "interleave", c.Interleave, "turn of the interleaved experiments (workload.interleave); 0 runs "+
		"each repeat's targets one after the other")
	fs.IntVar(&c.GateTrials, "gate-trials", c.GateTrials, "synchronous=off vs full (and off vs off) experiments at 5 repeats for the gate")
	fs.IntVar(&c.CTE, "cte", c.CTE, "loop iterations of the planted tests on the base")
	fs.StringVar(&effects, "effects", "", "planted slowdowns, comma-separated fractions (default 0.05,0.1,0.3)")
	fs.Float64Var(&c.Alpha, "alpha", analysis.DefaultAlpha, "significance level of the verdicts")
	fs.Float64Var(&c.Threshold, "threshold", 0.05, "the gate's smallest slowdown that fails (0.05 = 5%)")
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

// checkCalibration checks calibrate's flags.
func checkCalibration(c calibrate.Size) error {
	switch {
	case c.Rounds < 1 || c.Rounds > 1000:
		return usagef("flag --rounds: %d is not allowed; want 1 to 1000", c.Rounds)
	case c.Copies < 2 || c.Copies > 20:
		return usagef("flag --copies: %d is not allowed; want 2 to 20 (the base and at least one copy)", c.Copies)
	case c.Repeats < 1 || c.Repeats > 20:
		return usagef("flag --repeats: %d is not allowed; want 1 to 20", c.Repeats)
	case c.GateTrials < 0 || c.GateTrials > 100:
		return usagef("flag --gate-trials: %d is not allowed; want 0 to 100", c.GateTrials)
	case c.CTE < 100 || c.CTE > 10_000_000:
		return usagef("flag --cte: %d is not allowed; want 100 to 10000000", c.CTE)
	case !(c.Alpha > 0 && c.Alpha < 1):
		return usagef("flag --alpha: %v is not allowed; want a number between 0 and 1", c.Alpha)
	case !(c.Threshold > 0 && c.Threshold < 1):
		return usagef("flag --threshold: %v is not allowed; want a number between 0 and 1", c.Threshold)
	}
	if _, err := parseSeconds("time", c.TestTime); err != nil {
		return err
	}
	if _, err := parseSeconds("interleave", c.Interleave); err != nil {
		return err
	}
	return nil
}

// calibrateRun runs one experiment of calibrate quietly and returns its ID.
func calibrateRun(env Env, c calibrate.Size, src, what string) (int64, error) {
	s, err := spec.Parse([]byte(src), what, "")
	if err != nil {
		return 0, fmt.Errorf("calibrate: %s spec: %w", what, err)
	}
	quiet := env
	quiet.Stdout = io.Discard
	return execute(quiet, s, c.Store, runner.ExperimentOptions{}, planCheck{yes: true})
}

func runCalibrate(env Env, c calibrate.Size) error {
	if err := checkCalibration(c); err != nil {
		return err
	}
	if c.Store == "" {
		dir, err := os.MkdirTemp("", "benchlab-calibrate-")
		if err != nil {
			return fmt.Errorf("calibrate: temporary store: %w", err)
		}
		defer os.RemoveAll(dir)
		c.Store, c.Temp = filepath.Join(dir, "calibrate.db"), true
	}
	start := time.Now()
	w := env.Stdout
	host := metrics.HostFacts()
	fmt.Fprintf(w, "calibrate: %d planted experiments (base + %d identical targets + effects %s, %d repeats, tests of %s), "+
		"%d gate trials; store %s; host %s\n", c.Rounds, c.Copies-1, calibrate.EffectList(c.Effects), c.Repeats, c.TestTime,
		c.GateTrials, c.Store, host.ID())
	fmt.Fprintf(w, "conditions at start: %s\n", calibrate.LoadLine())
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
	planted, err := series(c.Rounds, c.PlantedSpec(), "planted", "planted experiment")
	if err != nil {
		return err
	}
	syncs, err := series(c.GateTrials, c.SyncSpec(), "sync", "gate trial")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "conditions at end: %s; %s in all\n\n", calibrate.LoadLine(), time.Since(start).Round(time.Second))
	return c.Evaluate(w, planted, syncs)
}

// rejudgeCalibration judges the calibrate experiments stored in c.Store
// without running anything, with the sizes they ran with
// (calibrate.Stored).
func rejudgeCalibration(env Env, c calibrate.Size, fs *pflag.FlagSet) error {
	for _, name := range []string{"quick", "rounds", "copies", "repeats", "time", "gate-trials", "cte", "effects"} {
		if fs.Changed(name) {
			return usagef("flag --%s: not with --rejudge, which judges the stored experiments as they ran", name)
		}
	}
	if c.Store == "" {
		return usagef("flag --rejudge: needs --store naming a results database that holds calibrate experiments")
	}
	if _, err := os.Stat(c.Store); err != nil {
		return usagef("flag --store: %s: %v; want an existing results database", c.Store, err)
	}
	c, planted, syncs, err := calibrate.Stored(context.Background(), c)
	if err != nil {
		return err
	}
	if len(planted) == 0 {
		return usagef("flag --store: %s holds no calibrate-planted experiment to judge", c.Store)
	}
	fmt.Fprintf(env.Stdout, "calibrate --rejudge: %d planted experiments (base + %d identical targets + effects %s, %d repeats), "+
		"%d gate trials, as stored in %s\n\n", len(planted), c.Copies-1, calibrate.EffectList(c.Effects), c.Repeats, len(syncs), c.Store)
	return c.Evaluate(env.Stdout, planted, syncs)
}
