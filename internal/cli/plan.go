package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"benchlab/internal/analysis"
	"benchlab/internal/meter"
	"benchlab/internal/noise"
	"benchlab/internal/power"
	"benchlab/internal/report"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/timeplan"
)

func newPlanCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan [spec.toml] [flags]",
		Short: "say before running whether a spec's repeats can call a regression (cells, p floor, repeats needed)",
		Long: "Says before anything runs whether the spec's repeats can call a regression: the compared cells, alpha,\n" +
			"the correction, the smallest p-value the repeats can reach, whether a lone regression can be called and\n" +
			"the repeats needed. Takes run's flags. A [gate] with fail_on_regression that cannot fire exits with code 2.",
		Example: "  benchlab plan examples/sqlite-sync.toml\n  benchlab plan examples/sqlite-sync.toml --repeats 8",
	}
	takeRunFlags(env, cmd, func(f *runFlags) error { return runPlan(env, f) })
	return cmd
}

// runPlan prints, for a spec and the same flags as run, how many cells are
// compared and whether the repeats can call a regression; a spec whose
// [gate] cannot fire is refused with exit code 2.
func runPlan(env Env, f *runFlags) error {
	s, err := f.buildSpec()
	if err != nil {
		return err
	}
	p, err := power.Of(s)
	if err != nil {
		return err
	}
	p.Schedule = f.schedule
	if err := addPlanHistory(env, &p, s, f.store, true); err != nil {
		return err
	}
	out := newFitWriter(env.Stdout) // 120 columns
	defer out.Flush()
	if err := p.Write(out); err != nil {
		return err
	}
	if sc, err := timeplan.OfWithRates(s, storeRates(env, storePath(env, f.store), s)); err == nil {
		fmt.Fprintln(out)
		if err := sc.Write(out, time.Now()); err != nil {
			return err
		}
	}
	return p.Check()
}

// planBeforeRun prints the power lines run shows before measuring, first
// how the targets are scheduled (scheduleTargets' sentence), and refuses a
// spec whose gate cannot fire.
func planBeforeRun(env Env, s spec.Spec, storeFlag, schedule string) error {
	p, err := power.Of(s)
	if err != nil {
		return err
	}
	p.Schedule = schedule
	if err := addPlanHistory(env, &p, s, storeFlag, false); err != nil {
		return err
	}
	if err := p.Check(); err != nil {
		return err
	}
	for _, l := range p.Lines() {
		printWrapped(env.Stdout, "benchlab: %s", l)
	}
	return nil
}

// addPlanHistory reads what the store's noise history of this host lets
// the plan's repeats call (power.Plan.AddHistory): from the store --store
// names, or the default one when it exists. No store is no history, not an
// error, except for plan (strict) given a --store that does not exist.
func addPlanHistory(env Env, p *power.Plan, s spec.Spec, storeFlag string, strict bool) error {
	path := storePath(env, storeFlag)
	if !store.IsPostgres(path) {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			if strict && storeFlag != "" {
				return usagef("flag --store: no results database at %s (no noise history to plan with; drop --store to plan without one)", path)
			}
			// run's preflight says what is wrong with a store that is not
			// a file.
			return nil
		}
	}
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	printReplayed(env, st)
	ctx := context.Background()
	// A store copied or imported without its noise history learns it
	// first, as report and compare do, so plan sees the history they will.
	if err := noise.Backfill(ctx, st); err != nil {
		return err
	}
	host := meter.HostFacts().ID()
	specTOML := s.TOML()
	var baseEngine string
	var others []string
	for i, t := range s.Targets {
		if t.Name == s.Base || (s.Base == "" && i == 0) {
			baseEngine = t.Engine
		} else {
			others = append(others, t.Engine)
		}
	}
	return p.AddHistory(path, func(t int, test string, threads int) (analysis.NoisePrior, error) {
		if t >= len(others) {
			return analysis.NoisePrior{}, nil
		}
		return noise.PriorFor(ctx, st, host, specTOML, []string{baseEngine, others[t]}, test, threads)
	})
}

// specGate applies a spec's [gate] to the experiment just run: it prints
// the gate's decision and returns errRegression when it fails, with the
// regressions it found, one line each ("full: update-index @1 threads:
// x0.412").
func specGate(env Env, storeFile string, id int64, s spec.Spec) ([]string, error) {
	if !s.Gate.FailOnRegression {
		return nil, nil
	}
	d, err := loadData(env, storeFile, id)
	if err != nil {
		return nil, err
	}
	o := s.Gate.Options()
	cmps := report.Compare(d, report.VerdictOptions{Alpha: o.Alpha, MinEffect: o.MinEffect})
	fmt.Fprintln(env.Stdout)
	err = gateReport(env.Stdout, cmps, report.NotJudged(d), o)
	var found []string
	if err != nil {
		_, cells := regressions(cmps, o)
		for _, c := range cells {
			found = append(found, fmt.Sprintf("%s: %s @%d threads: x%.3f", c.Target, c.Test, c.Threads, c.Verdict.Ratio))
		}
	}
	return found, err
}
