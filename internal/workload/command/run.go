package command

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/fio"
	"benchlab/internal/workload"
)

// runner runs one step's program (workload.External).
type runner struct {
	step   Step
	secs   time.Duration
	getenv func(string) string
	grace  time.Duration
	kill   time.Duration
}

// passed are the variables of benchlab's environment a program gets; the
// rest of it (a user's PG* or MYSQL_* variables above all) stays out.
var passed = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM"}

// ScratchDir is the directory under the cell's data dir that every step of
// a cell shares for its files (fio's), {dir} and BENCHLAB_SCRATCH_DIR.
const ScratchDir = "scratch"

// facts are what a program is told about its step and target.
type facts struct {
	addr     engine.Address
	threads  int
	secs     int
	seed     uint64
	dataDir  string
	scratch  string
	stepName string
}

// env is the program's environment: a few of benchlab's own variables
// (passed), the engine's client variables, benchlab's, then the step's.
func (r *runner) env(f facts) []string {
	var env []string
	if r.getenv != nil {
		for _, k := range passed {
			if v := r.getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	env = append(env, f.addr.Env...)
	env = append(env,
		"BENCHLAB_STEP="+f.stepName,
		"BENCHLAB_DSN="+f.addr.DSN,
		"BENCHLAB_HOST="+f.addr.Host,
		"BENCHLAB_PORT="+portString(f.addr.Port),
		"BENCHLAB_DATA_DIR="+f.dataDir,
		"BENCHLAB_SCRATCH_DIR="+f.scratch,
		"BENCHLAB_THREADS="+strconv.Itoa(f.threads),
		"BENCHLAB_SECONDS="+strconv.Itoa(f.secs),
		"BENCHLAB_SEED="+strconv.FormatUint(f.seed, 10),
	)
	for _, k := range slices.Sorted(maps.Keys(r.step.Env)) {
		env = append(env, k+"="+r.step.Env[k])
	}
	return env
}

func portString(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// argv replaces the placeholders in the step's arguments.
func (r *runner) argv(f facts) []string {
	rep := strings.NewReplacer("{threads}", strconv.Itoa(f.threads), "{seconds}", strconv.Itoa(f.secs),
		"{dir}", f.scratch, "{host}", f.addr.Host, "{port}", portString(f.addr.Port), "{user}", f.addr.User,
		"{database}", f.addr.Database, "{dsn}", f.addr.DSN, "{seed}", strconv.FormatUint(f.seed, 10))
	out := make([]string, len(r.step.Argv))
	for i, a := range r.step.Argv {
		out[i] = rep.Replace(a)
	}
	if r.step.parse() == ParseFio {
		if !hasFlag(out, "--output-format") {
			out = append(out, "--output-format=json")
		}
		if !hasFlag(out, "--status-interval") {
			out = append(out, "--status-interval=1")
		}
	}
	return out
}

func hasFlag(argv []string, flag string) bool {
	for _, a := range argv[1:] {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// run runs the program once and reads its result.
func (r *runner) run(ctx context.Context, db engine.DB, x *workload.ExternalRun) (workload.ExternalResult, error) {
	f := facts{threads: x.Threads, secs: int(math.Ceil(r.secs.Seconds())), seed: x.Seed, dataDir: x.Dir,
		stepName: r.step.Name}
	if a, ok := db.(engine.Addresser); ok {
		f.addr = a.Address()
	}
	if x.Dir != "" {
		f.scratch = filepath.Join(x.Dir, ScratchDir)
		if err := os.MkdirAll(f.scratch, 0o755); err != nil {
			return workload.ExternalResult{}, fmt.Errorf("%s: scratch dir: %w", r.step.Name, err)
		}
	}
	argv := r.argv(f)
	lim := limits{term: r.secs + r.grace, kill: r.kill}
	if r.step.Load {
		lim.term = DefaultLoadTimeout
		if r.step.Timeout.Duration > 0 {
			lim.term = r.step.Timeout.Duration
		}
	}
	var lines lineSeries
	var onLine func(string)
	if r.step.parse() == ParseRegex && r.step.LineRegex != "" {
		lines.re = regexp.MustCompile(r.step.LineRegex)
		lines.start = time.Now()
		onLine = lines.add
	}
	if x.Log != nil {
		fmt.Fprintf(x.Log, "%s: %s\n", r.step.Name, strings.Join(argv, " "))
	}
	out, err := runProgram(ctx, argv, r.env(f), f.scratch, lim, x.Started, x.Exited, onLine)
	if err != nil {
		return r.soFar(out, &lines), fmt.Errorf("%s: %w", r.step.Name, err)
	}
	if r.step.Load {
		return workload.ExternalResult{Seconds: out.elapsed.Seconds(), Ops: 1}, nil
	}
	var res workload.ExternalResult
	switch r.step.parse() {
	case ParseFio:
		res, err = fioResult(out.stdout)
	case ParseRegex:
		res, err = r.regexResult(out)
		res.Intervals = lines.intervals()
	default:
		// One operation: the run, whose latency is its time.
		d := out.elapsed
		res = workload.ExternalResult{Seconds: d.Seconds(), Ops: 1, Mean: d, P50: d, P95: d, P99: d, P999: d, Max: d}
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w%s", r.step.Name, err, out.tail())
	}
	return res, nil
}

// soFar is what a program that failed, or was stopped at its limit or by
// an interrupt, had measured: its time, and the series its output gave
// until then (a regex step's progress lines; fio's status reports, and its
// IOs in the last of them). The step fails; these are kept with it.
func (r *runner) soFar(out outcome, lines *lineSeries) workload.ExternalResult {
	res := workload.ExternalResult{Seconds: out.elapsed.Seconds()}
	if r.step.Load {
		return res
	}
	switch r.step.parse() {
	case ParseFio:
		if reports, err := fio.Parse(out.stdout); err == nil {
			res.Ops = reports[len(reports)-1].Totals().IOs()
			for i, iv := range fio.Series(reports) {
				res.Intervals = append(res.Intervals, workload.ExternalInterval{Sec: i, Seconds: iv.Seconds, Events: iv.IOs})
			}
		}
	case ParseRegex:
		res.Intervals = lines.intervals()
	}
	return res
}

// regexResult reads the headline: the regex's capture in its last match
// over the whole output. Operations, for the per-operation figures: the
// number times the seconds when it is a rate (higher is better), one run
// of the program otherwise.
func (r *runner) regexResult(out outcome) (workload.ExternalResult, error) {
	re := regexp.MustCompile(r.step.Regex)
	ms := re.FindAllSubmatch(out.combined, -1)
	if len(ms) == 0 {
		return workload.ExternalResult{}, fmt.Errorf("regex %q matched nothing in the output (%d bytes)", r.step.Regex, len(out.combined))
	}
	v, err := parseNumber(string(ms[len(ms)-1][1]))
	if err != nil {
		return workload.ExternalResult{}, fmt.Errorf("regex %q: %w", r.step.Regex, err)
	}
	secs := out.elapsed.Seconds()
	res := workload.ExternalResult{Seconds: secs, Ops: 1, Facts: map[string]float64{FactValue: v}}
	if r.step.Better != "lower" {
		res.Ops = max(1, int64(math.Round(v*secs)))
	}
	return res, nil
}

// lineSeries collects a regex step's per-line numbers as they come.
type lineSeries struct {
	re    *regexp.Regexp
	start time.Time
	mu    sync.Mutex
	last  time.Duration
	ivs   []workload.ExternalInterval
}

func (l *lineSeries) add(line string) {
	m := l.re.FindStringSubmatch(line)
	if m == nil {
		return
	}
	v, err := parseNumber(m[1])
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Since(l.start)
	l.ivs = append(l.ivs, workload.ExternalInterval{Sec: len(l.ivs), Seconds: (at - l.last).Seconds(),
		Events: int64(math.Round(v * 1000))})
	l.last = at
}

func (l *lineSeries) intervals() []workload.ExternalInterval {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ivs
}

// fioResult reads fio's JSON: the final report's IOs and IOPS (reads plus
// writes), completion latency and bandwidth; the status reports before it
// (--status-interval) give the series.
func fioResult(stdout []byte) (workload.ExternalResult, error) {
	reports, err := fio.Parse(stdout)
	if err != nil {
		return workload.ExternalResult{}, err
	}
	final := reports[len(reports)-1].Totals()
	if final.Errors > 0 {
		return workload.ExternalResult{}, fmt.Errorf("fio: %d jobs ended with an error", final.Errors)
	}
	if final.IOs() == 0 {
		return workload.ExternalResult{}, fmt.Errorf("fio: no reads or writes completed")
	}
	res := workload.ExternalResult{Ops: final.IOs(), Seconds: float64(final.RuntimeMS) / 1000,
		Mean: final.ClatMean, P50: final.ClatP50, P95: final.ClatP95, P99: final.ClatP99, P999: final.ClatP999, Max: final.Max,
		Facts: map[string]float64{
			"fio_read_iops": final.ReadIOPS, "fio_write_iops": final.WriteIOPS,
			"fio_read_bytes_per_s": final.ReadBW, "fio_write_bytes_per_s": final.WriteBW,
			"fio_runtime_s": float64(final.RuntimeMS) / 1000,
		}}
	if iops := final.IOPS(); iops > 0 {
		// The headline is fio's own rate: the seconds are the IOs over it
		// (the jobs' runtimes, which differ by milliseconds).
		res.Seconds = float64(res.Ops) / iops
	}
	for i, iv := range fio.Series(reports) {
		res.Intervals = append(res.Intervals, workload.ExternalInterval{Sec: i, Seconds: iv.Seconds, Events: iv.IOs})
	}
	return res, nil
}
