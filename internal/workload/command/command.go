// Package command is the suite of outside programs: fio, pgbench, a
// vendor's loader, a script, each run as a step of an experiment. benchlab
// starts the target as for any suite (a server on loopback with a fresh
// data dir, or a DSN), gives the program the target's connection facts in
// its environment, runs it in its own process group bounded in time, and
// measures it as it measures its own workers: the server's process tree,
// the program's process tree as the client side, the 1-second series, the
// repeats in interleaved order and the verdicts against the base.
//
// A step's headline comes from the program's output (Step.Parse): fio's
// JSON (IOPS), a regular expression's capture (a number the program
// prints, such as pgbench's "tps = "), or none (the elapsed seconds).
package command

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// FactValue is the fact holding a regex step's headline, the number its
// regex captured.
const FactValue = "command_value"

// IOPS is a fio step's headline: reads plus writes completed per second,
// summed over fio's jobs as fio computed each job's rate.
var IOPS = metric.Register(metric.Metric{
	Name: "iops", Unit: "IO/s", Legend: "reads plus writes completed per second (fio)",
	Direction: analysis.HigherIsBetter, Symbol: "IOPS",
	Value:  func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) },
	Series: func(c metric.Counts) float64 { return metric.PerSecond(c.Events, c.Seconds) }, SeriesUnit: "IOs",
})

// perLine is the series of the regex metrics: each interval's Events hold
// thousandths of the number its line printed.
func perLine(c metric.Counts) float64 { return float64(c.Events) / 1000 }

func value(c metric.Counts) float64 { return c.Facts[FactValue] }

// Higher is a regex step's headline when more is better: the number the
// program printed (tps, ops/s, MB/s), as printed.
var Higher = metric.Register(metric.Metric{
	Name: "command_high", Unit: "as printed", Legend: "the number the command printed (its regex's capture), higher is better",
	Direction: analysis.HigherIsBetter, Symbol: "VALUE", Value: value, Series: perLine, SeriesUnit: "as printed",
})

// Lower is a regex step's headline when less is better (a latency, a
// time), as printed.
var Lower = metric.Register(metric.Metric{
	Name: "command_low", Unit: "as printed", Legend: "the number the command printed (its regex's capture), lower is better",
	Direction: analysis.LowerIsBetter, Quantity: "value", Symbol: "VALUE", Value: value, Series: perLine, SeriesUnit: "as printed",
})

// Seconds is a parse = "none" step's headline: the seconds from the
// program's start to its exit, lower is better. There is no series.
var Seconds = metric.Register(metric.Metric{
	Name: "command_seconds", Unit: "s", Legend: "seconds from the command's start to its exit",
	Direction: analysis.LowerIsBetter, Quantity: "time", Symbol: "s",
	Value:    func(c metric.Counts) float64 { return c.Seconds / float64(max(c.Events, 1)) },
	NoSeries: true,
})

// Group is the report group of every step.
const Group = "command"

// Parse modes.
const (
	ParseFio   = "fio"
	ParseRegex = "regex"
	ParseNone  = "none"
)

// Default durations.
const (
	// DefaultGrace is how long past its time a measured program may run
	// before it gets SIGTERM.
	DefaultGrace = 10 * time.Second
	// DefaultKillAfter is how long after SIGTERM it gets SIGKILL.
	DefaultKillAfter = 5 * time.Second
	// DefaultLoadTimeout bounds a load.
	DefaultLoadTimeout = 30 * time.Minute
)

// Options are the suite's steps and limits, read from [workload.command].
type Options struct {
	// Steps run in order: loads once, measured steps at each thread count.
	Steps []Step `toml:"steps"`
	// Grace is how long a measured program may run past its step's time
	// before its process group gets SIGTERM.
	Grace workload.Duration `toml:"grace"`
	// KillAfter is how long after SIGTERM the group gets SIGKILL.
	KillAfter workload.Duration `toml:"kill_after"`
}

// Step is one program of [[workload.command.steps]].
type Step struct {
	// Name is the test name.
	Name string `toml:"name"`
	// Argv is the program and its arguments, run without a shell (write
	// ["sh", "-c", "..."] for one), with {threads}, {seconds}, {dir},
	// {host}, {port}, {user}, {database}, {dsn} and {seed} replaced.
	Argv []string `toml:"argv"`
	// Load runs the step once before the measured ones, unmeasured (a
	// data load, fio's layout, pgbench -i); its failure ends the run of the
	// target.
	Load bool `toml:"load"`
	// Parse is how the headline is read: "fio", "regex" or "none" (the
	// default).
	Parse string `toml:"parse"`
	// Regex (parse = "regex") finds the headline in the whole output,
	// stdout then stderr as they came: the first match's one capture
	// group, the last match when several.
	Regex string `toml:"regex"`
	// LineRegex (parse = "regex", optional) gives the 1-second series: its
	// capture in each line that matches.
	LineRegex string `toml:"line_regex"`
	// Better says whether a higher or a lower number is better ("higher",
	// the default, or "lower").
	Better string `toml:"better"`
	// Unit names what the number counts ("tps"), for the report's header.
	Unit string `toml:"unit"`
	// Seconds is the step's time ({seconds}, BENCHLAB_SECONDS); 0 means
	// workload.read_time. The program is expected to end by then.
	Seconds workload.Duration `toml:"seconds"`
	// Timeout bounds a load; 0 means 30 minutes.
	Timeout workload.Duration `toml:"timeout"`
	// Env adds variables to the program's environment.
	Env map[string]string `toml:"env"`
}

func defaults() *Options {
	return &Options{Grace: workload.Duration{Duration: DefaultGrace}, KillAfter: workload.Duration{Duration: DefaultKillAfter}}
}

// NewOptions returns no steps, a 10 s grace and SIGKILL 5 s after SIGTERM.
func (Suite) NewOptions() workload.Options { return defaults() }

func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing: the programs are the user's.
func (o *Options) Preset(string) bool { return false }

// Flags binds --command-grace and --command-kill-after; steps are
// written in the file.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.Var(&o.Grace, "command-grace", "command suite: how long a program may run past its step's time before SIGTERM")
	fs.Var(&o.KillAfter, "command-kill-after", "command suite: how long after SIGTERM a program gets SIGKILL")
}

// Suite is the command suite.
type Suite struct{}

// Name returns "command".
func (Suite) Name() string { return "command" }

// RunsOutside says the steps run in the user's programs
// (workload.OutsideRunner): rate and events are refused.
func (Suite) RunsOutside() string { return "outside programs" }

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "outside programs as steps (fio, pgbench, scripts): [[workload.command.steps]], headline from fio's JSON, a regex, or the elapsed time"
}

// Tests lists nothing: the tests are the steps a spec names.
func (Suite) Tests() []workload.Test { return nil }

func (s Step) parse() string {
	if s.Parse == "" {
		return ParseNone
	}
	return s.Parse
}

// metric is the step's headline.
func (s Step) metric() metric.Metric {
	switch s.parse() {
	case ParseFio:
		return IOPS
	case ParseRegex:
		if s.Better == "lower" {
			return Lower
		}
		return Higher
	}
	return Seconds
}

// tests are the steps as tests, for workload.tests.
func (o *Options) tests() []workload.Test {
	var out []workload.Test
	for _, s := range o.Steps {
		out = append(out, workload.Test{Name: s.Name, Family: s.Name, Group: Group})
	}
	return out
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._+=-]+$`)

// Check validates every step before anything runs: names, argv (the
// program must be found on the PATH of benchlab's environment), the parse
// mode and its regexes, the durations.
func (Suite) Check(p workload.Params) error {
	o := opts(p)
	if len(o.Steps) == 0 {
		return workload.Bad("command.steps", nil, "no steps; want at least one [[workload.command.steps]] with a name and an argv")
	}
	if o.Grace.Duration < 0 {
		return workload.Bad("command.grace", o.Grace, "%s is negative; want a duration >= 0", o.Grace)
	}
	if o.KillAfter.Duration <= 0 {
		return workload.Bad("command.kill_after", o.KillAfter, "%s is not allowed; want a duration > 0", o.KillAfter)
	}
	path := ""
	if p.Getenv != nil {
		path = p.Getenv("PATH")
	}
	seen := map[string]bool{}
	measured := 0
	for i, s := range o.Steps {
		f := fmt.Sprintf("command.steps[%d].", i)
		switch {
		case s.Name == "":
			return workload.Bad(f+"name", s.Name, "empty; want the step's test name")
		case !nameRE.MatchString(s.Name):
			return workload.Bad(f+"name", s.Name, "%q has characters other than letters, digits and . _ + = -", s.Name)
		case seen[s.Name]:
			return workload.Bad(f+"name", s.Name, "%q names two steps; names must be unique", s.Name)
		}
		seen[s.Name] = true
		if len(s.Argv) == 0 || strings.TrimSpace(s.Argv[0]) == "" {
			return workload.Bad(f+"argv", s.Argv, "empty; want the program and its arguments, e.g. [\"fio\", \"--name=r\", ...]")
		}
		if _, err := lookPath(s.Argv[0], path); err != nil {
			return workload.Bad(f+"argv", s.Argv, "%v; want a program on PATH or a path to one", err)
		}
		if !s.Load {
			measured++
		}
		switch s.parse() {
		case ParseFio:
			for _, a := range s.Argv[1:] {
				if strings.HasPrefix(a, "--output-format=") && !strings.Contains(strings.TrimPrefix(a, "--output-format="), "json") {
					return workload.Bad(f+"argv", s.Argv, "%s: parse = \"fio\" reads fio's JSON; remove it (benchlab adds --output-format=json)", a)
				}
				if a == "--output" || strings.HasPrefix(a, "--output=") {
					return workload.Bad(f+"argv", s.Argv, "%s: parse = \"fio\" reads fio's stdout; remove it", a)
				}
			}
		case ParseRegex:
			if s.Regex == "" {
				return workload.Bad(f+"regex", s.Regex, "empty; parse = \"regex\" wants a regular expression with one capture group for the headline, e.g. 'tps = ([0-9.]+)'")
			}
		case ParseNone:
		default:
			return workload.Bad(f+"parse", s.Parse, "unknown parse mode %q; want fio, regex or none", s.Parse)
		}
		if s.parse() != ParseRegex {
			for _, x := range []struct{ key, v string }{{"regex", s.Regex}, {"line_regex", s.LineRegex}, {"better", s.Better}} {
				if x.v != "" {
					return workload.Bad(f+x.key, x.v, "is for parse = \"regex\"; this step's parse is %q", s.parse())
				}
			}
		}
		for _, x := range []struct{ key, v string }{{"regex", s.Regex}, {"line_regex", s.LineRegex}} {
			if x.v == "" {
				continue
			}
			re, err := regexp.Compile(x.v)
			if err != nil {
				return workload.Bad(f+x.key, x.v, "does not compile: %v", err)
			}
			if re.NumSubexp() != 1 {
				return workload.Bad(f+x.key, x.v, "has %d capture groups; want exactly one, around the number", re.NumSubexp())
			}
		}
		if s.Better != "" && s.Better != "higher" && s.Better != "lower" {
			return workload.Bad(f+"better", s.Better, "%q; want higher or lower", s.Better)
		}
		if s.Seconds.Duration < 0 {
			return workload.Bad(f+"seconds", s.Seconds, "%s is negative; want a duration >= 0 (0: workload.read_time)", s.Seconds)
		}
		if s.Timeout.Duration < 0 {
			return workload.Bad(f+"timeout", s.Timeout, "%s is negative; want a duration >= 0 (0: 30m)", s.Timeout)
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return workload.Bad(f+"env", k, "%q is not a variable name", k)
			}
		}
	}
	if measured == 0 {
		return workload.Bad("command.steps", nil, "every step is a load; want at least one measured step (load = false)")
	}
	_, err := workload.SelectTests(p.Tests, o.tests())
	return err
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	o := opts(p)
	var parts []string
	for _, s := range o.Steps {
		d := s.Name + " (" + s.parse()
		if s.Load {
			d = s.Name + " (load"
		} else if s.parse() == ParseRegex {
			d += ", " + cmpWord(s)
		}
		parts = append(parts, d+")")
	}
	return fmt.Sprintf("commands: %s; threads %v, %s each", strings.Join(parts, ", "), p.Threads, p.ReadTime)
}

// cmpWord says what a regex step's number is and which way is better.
func cmpWord(s Step) string {
	u := s.Unit
	if u == "" {
		u = "value"
	}
	if s.Better == "lower" {
		return u + ", lower is better"
	}
	return u + ", higher is better"
}

// Plan returns the steps in order: every load, as an action, and the
// selected measured steps (workload.tests), each at every thread count.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	o := opts(p)
	sel, _ := workload.SelectTests(p.Tests, o.tests())
	var steps []workload.Step
	for _, cs := range o.Steps {
		if sel != nil && !sel[cs.Name] && !cs.Load {
			continue // loads run whatever is selected: the measured steps need their data
		}
		secs := cs.Seconds.Duration
		if secs == 0 {
			secs = p.ReadTime
		}
		r := &runner{step: cs, secs: secs, getenv: p.Getenv, grace: o.Grace.Duration, kill: o.KillAfter.Duration}
		st := workload.Step{Name: cs.Name, Family: cs.Name, Group: Group, Metric: cs.metric(), External: r.run}
		if cs.Load {
			st.Load, st.Warm = true, true
		} else {
			st.Duration = secs
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// parseNumber reads a captured number ("1,234.5" and "1234.5" alike).
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}
