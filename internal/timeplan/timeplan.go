// Package timeplan says, from a spec alone and before anything runs, what an
// experiment will run and for how long: its runs (cells), the steps of each
// run at each thread count, the time each takes, the total and the estimated
// end. `benchlab run` prints it before it starts and uses it for the ETA of
// its live lines; `benchlab plan` prints it with the verdicts' power.
package timeplan

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"benchlab/internal/spec"
	"benchlab/internal/workload"
)

// Step is one step of a run as planned.
type Step struct {
	// Name is the step's test or action name.
	Name string
	// Action marks a load or cleanup step; Warm a warm-up test.
	Action, Warm bool
	// Threads are the thread counts a measured step runs at, in order.
	Threads []int
	// Warmup and Measured are the parts of one thread count's step.
	Warmup, Measured time.Duration
	// Bound is the longest a step that ends by operation count may last
	// (Measured is 0 then); 0 means none.
	Bound time.Duration
	// Time is the planned time of the step over all its thread counts;
	// Known says whether it is known in advance (steps that end by
	// operation count, and loads of suites that do not size them, are
	// not). Load marks a load whose time is estimated from its rows (the
	// mean over the targets of Schedule.Loads).
	Time        time.Duration
	Known, Load bool
	// Rows is what a load writes (workload.Size.Loads).
	Rows int64
}

// DefaultLoadRate is the rows per second a load is assumed to write when
// the results database holds no earlier load of the same engine, suite and
// step: sysbench's prepare of 1,000,000 rows measured 76,000 rows/s on
// SQLite, 23,000 on MariaDB 10.11 and 15,000 on PostgreSQL 15 (a 2-CPU VM
// under load); the slowest, so the plan errs long.
const DefaultLoadRate = 15_000

// maxLoad caps a load's estimate: 10 years.
const maxLoad = 10 * 365 * 24 * time.Hour

// MaxTotal caps a plan's times (a run's, all runs'), so that a plan of
// absurd sizes shows as this long, never as a sum wrapped round to a short
// or negative one; no plan that long can be meant.
const MaxTotal = maxLoad

// addCapped returns a+b for durations >= 0, at most MaxTotal.
func addCapped(a, b time.Duration) time.Duration {
	if a >= MaxTotal || b >= MaxTotal || a+b >= MaxTotal {
		return MaxTotal
	}
	return a + b
}

// LoadRate is the rows per second a load is expected to write on one
// engine, and where the figure comes from.
type LoadRate struct {
	RowsPerSec float64
	// From says where a measured rate comes from ("median of 3 earlier
	// loads in the store"); empty means DefaultLoadRate, assumed.
	From string
}

// Rates returns the expected rate of the load step on engine, and false
// when none is known (DefaultLoadRate is used then). Nil knows none.
type Rates func(engine, step string) (LoadRate, bool)

// Load is one target's estimated load in each of its runs.
type Load struct {
	Step, Target, Engine string
	Rows                 int64
	Rate                 LoadRate
	// Time is the load's estimated time in one run.
	Time time.Duration
}

// Schedule is an experiment's plan of time.
type Schedule struct {
	// Name, Suite and Preset are the spec's.
	Name, Suite, Preset string
	// Targets and Repeats make Runs = Targets × Repeats cells.
	Targets, Repeats, Runs int
	// Steps are the steps of one run, in order.
	Steps []Step
	// PerRun is the known time of one run; Unknown counts its steps whose
	// time is not known in advance.
	PerRun  time.Duration
	Unknown int
	// Loads are the estimated loads, per load step and target.
	Loads []Load
}

// Of plans a validated spec, loads at DefaultLoadRate.
func Of(s spec.Spec) (Schedule, error) { return OfWithRates(s, nil) }

// OfWithRates plans a validated spec with the expected load rate of each
// engine (earlier loads in the results database): a load the suite sizes
// (workload.Sizer) takes its rows over the rate.
func OfWithRates(s spec.Spec, rates Rates) (Schedule, error) {
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return Schedule{}, fmt.Errorf("unknown suite %q", s.Workload.Suite)
	}
	steps, err := suite.Plan(s.Params())
	if err != nil {
		return Schedule{}, fmt.Errorf("plan the %s suite: %w", s.Workload.Suite, err)
	}
	sc := Schedule{Name: s.Name, Suite: s.Workload.Suite, Preset: s.Preset, Targets: len(s.Targets),
		Repeats: s.Workload.Repeats}
	sc.Runs = sc.Targets * sc.Repeats
	size, _ := workload.SizeOf(suite, s.Params())
	for _, st := range steps {
		p := Step{Name: st.Name, Warm: st.Warm}
		switch {
		case st.Action != nil || st.External != nil && st.Load:
			p.Action = true
			p.Time, p.Known = st.Estimate, st.Estimate > 0
		default:
			p.Threads = st.Threads
			if len(p.Threads) == 0 {
				p.Threads = s.Workload.Threads
			}
			p.Warmup, p.Measured = st.Warmup, st.Duration
			if st.Duration > 0 {
				p.Time, p.Known = time.Duration(len(p.Threads))*(st.Warmup+st.Duration), true
			} else {
				p.Bound = st.MaxDuration
			}
		}
		if rows, ok := size.Loads[st.Name]; ok && !p.Known && rows > 0 {
			passes := 1 // an action runs once; a measured load at each thread count
			if !p.Action {
				passes = len(p.Threads)
			}
			p.Load, p.Known, p.Rows = true, true, rows
			p.Time = sc.estimateLoads(s, st.Name, rows, passes, rates)
		}
		if p.Known {
			sc.PerRun = addCapped(sc.PerRun, p.Time)
		} else {
			sc.Unknown++
		}
		sc.Steps = append(sc.Steps, p)
	}
	return sc, nil
}

// estimateLoads adds each target's estimate of a load of rows (passes
// times per run) to sc.Loads and returns their mean, the load's share of
// PerRun: Runs x PerRun is then the sum over targets.
func (sc *Schedule) estimateLoads(s spec.Spec, step string, rows int64, passes int, rates Rates) time.Duration {
	var sum time.Duration
	for _, t := range s.Targets {
		r, ok := LoadRate{}, false
		if rates != nil {
			r, ok = rates(t.Engine, step)
		}
		if !ok || r.RowsPerSec <= 0 {
			r = LoadRate{RowsPerSec: DefaultLoadRate}
		}
		// Capped far beyond any plan, so that absurd sizes cannot overflow.
		d := time.Duration(min(float64(passes)*float64(rows)/r.RowsPerSec*float64(time.Second), float64(maxLoad)))
		sc.Loads = append(sc.Loads, Load{Step: step, Target: t.Name, Engine: t.Engine, Rows: rows, Rate: r, Time: d})
		sum += d
	}
	return sum / time.Duration(max(len(s.Targets), 1))
}

// Total is the known time of all runs, at most MaxTotal.
func (sc Schedule) Total() time.Duration {
	if sc.Runs <= 0 || sc.PerRun <= 0 {
		return 0
	}
	if sc.PerRun >= MaxTotal/time.Duration(sc.Runs) {
		return MaxTotal
	}
	return time.Duration(sc.Runs) * sc.PerRun
}

// Measured counts the measured steps of one run (each thread count once).
func (sc Schedule) Measured() int {
	n := 0
	for _, st := range sc.Steps {
		n += len(st.Threads)
	}
	return n
}

// Write prints the plan within 120 columns: one line per step, then one
// run's time, all runs' time and the estimated end from now.
func (sc Schedule) Write(w io.Writer, now time.Time) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "Plan: %d run(s) = %d target(s) x %d repeat(s), suite %s, preset %s; each run: %d step(s), %d measured\n",
		sc.Runs, sc.Targets, sc.Repeats, sc.Suite, orNone(sc.Preset), len(sc.Steps), sc.Measured())
	fmt.Fprintf(b, "  %-40s %-14s %-22s %10s\n", "step", "threads", "each: warm-up+measured", "time")
	for _, st := range sc.Steps {
		name := st.Name
		if st.Warm && !st.Action {
			name += " (warm-up)"
		}
		threads, each, tm := "", "", Short(st.Time)
		switch {
		case st.Load:
			threads = joinInts(st.Threads)
			each, tm = fmt.Sprintf("load %s rows", Count(st.Rows)), "~"+tm
		case st.Action && st.Known:
			each = "wait target"
		case st.Action:
			each, tm = "action", "?"
		case st.Known:
			threads = joinInts(st.Threads)
			each = Short(st.Warmup) + "+" + Short(st.Measured)
		default:
			threads = joinInts(st.Threads)
			each, tm = "by count", "?"
			if st.Bound > 0 {
				each = "by count, <= " + Short(st.Bound)
			}
		}
		fmt.Fprintf(b, "  %-40s %-14s %-22s %10s\n", clip(name, 40), clip(threads, 14), each, tm)
	}
	for _, l := range sc.Loads {
		from := fmt.Sprintf("assumed %s rows/s (no earlier %s of %s in the store)", Count(int64(DefaultLoadRate)), l.Step, l.Engine)
		if l.Rate.From != "" {
			from = fmt.Sprintf("%s rows/s, %s", Count(int64(l.Rate.RowsPerSec)), l.Rate.From)
		}
		fmt.Fprintf(b, "  %s of %s: ~%s at %s\n", l.Step, clip(l.Target, 24), Short(l.Time), from)
	}
	unknown := ""
	if sc.Unknown > 0 {
		unknown = fmt.Sprintf(" + %d step(s) not estimated (cleanups, count-bound steps)", sc.Unknown)
	}
	fmt.Fprintf(b, "  one run: %s%s\n", Long(sc.PerRun), unknown)
	fmt.Fprintf(b, "  all %d run(s): %s%s\n", sc.Runs, Long(sc.Total()), unknown)
	end := now.Add(sc.Total())
	fmt.Fprintf(b, "  estimated end: %s (in %s)", end.Format("2006-01-02 15:04:05 MST"), Long(sc.Total()))
	if sc.Unknown > 0 {
		fmt.Fprint(b, ", later by the steps not estimated")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Count formats a count compactly: 950, 12k, 1.5M.
func Count(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1_000_000:
		return trimPoint(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return trimPoint(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	}
	return fmt.Sprint(n)
}

func trimPoint(s string) string { return strings.TrimSuffix(s, ".0") }

// Short formats a step's duration compactly: 300ms, 10s, 15m, 1h30m.
func Short(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return trimZero(d.Round(100 * time.Millisecond).String())
	}
	return trimZero(d.Round(time.Second).String())
}

// Long formats a total: 1h2m3s, 25h0m0s as "1d 1h0m".
func Long(d time.Duration) string {
	if d >= MaxTotal {
		return "10 years or more"
	}
	if d >= 24*time.Hour {
		days := d / (24 * time.Hour)
		return fmt.Sprintf("%dd %s", days, trimZero((d - days*24*time.Hour).Round(time.Minute).String()))
	}
	return Short(d)
}

// trimZero drops zero trailing units: 1h0m0s -> 1h, 2m0s -> 2m.
func trimZero(s string) string {
	for _, z := range []string{"0s", "0m"} {
		if strings.HasSuffix(s, z) && len(s) > len(z) && !strings.HasSuffix(s, "ms") {
			p := s[:len(s)-len(z)]
			if last := p[len(p)-1]; last >= 'a' && last <= 'z' {
				s = p
			}
		}
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Tracker follows a running experiment against its schedule to say how far
// it is and when it should end. Its methods may be called from any
// goroutine.
type Tracker struct {
	mu        sync.Mutex
	sc        Schedule
	start     time.Time
	runStart  time.Time
	runsBegun int
}

// NewTracker starts tracking sc from start.
func NewTracker(sc Schedule, start time.Time) *Tracker {
	return &Tracker{sc: sc, start: start, runStart: start}
}

// StartRun records that run i (0-based) begins at now.
func (t *Tracker) StartRun(i int, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runsBegun, t.runStart = i+1, now
}

// Estimate returns the share done (0-1) and the estimated end at now. Runs
// that took longer than planned (loads are not planned) stretch the
// estimate of the runs left by the same factor.
func (t *Tracker) Estimate(now time.Time) (done float64, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	per := float64(t.sc.PerRun)
	finished := max(t.runsBegun-1, 0)
	factor := 1.0
	if finished > 0 && per > 0 {
		factor = max(float64(t.runStart.Sub(t.start))/(float64(finished)*per), 1)
	}
	perRun := time.Duration(per * factor)
	remaining := max(perRun-now.Sub(t.runStart), 0) + time.Duration(max(t.sc.Runs-finished-1, 0))*perRun
	elapsed := now.Sub(t.start)
	if elapsed+remaining > 0 {
		done = float64(elapsed) / float64(elapsed+remaining)
	}
	return min(done, 1), now.Add(remaining)
}

// Line is the progress suffix of a live line: " | 12% done, eta 09:12:30
// (in 1h2m)".
func (t *Tracker) Line(now time.Time) string {
	done, end := t.Estimate(now)
	return fmt.Sprintf(" | %.0f%% done, eta %s (in %s)", done*100, end.Format("15:04:05"), Long(end.Sub(now).Round(time.Second)))
}
