package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/meter"
	"benchlab/internal/noise"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/stale"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// ExperimentOptions control an experiment's execution.
type ExperimentOptions struct {
	// Out receives progress and live lines.
	Out io.Writer
	// KeepData keeps each cell's data dir instead of removing it.
	KeepData bool
	// Build identifies this benchlab binary in the manifests.
	Build store.BuildInfo
	// TempWorkDir says the spec's work dir is a temporary one made for this
	// experiment, so the manifest does not record it as the user's choice.
	TempWorkDir bool
	// WaitQuiet, when positive, waits up to this long before each run for
	// the machine's CPU use to drop below meter.QuietBusyPct.
	WaitQuiet time.Duration
	// OnRun, when set, is called as run i (0-based) of n begins.
	OnRun func(i, n int)
	// Progress, when set, gives a suffix for every live line (the ETA).
	Progress func() string
	// Live, when set, receives every second's numbers of the running step
	// with its target's name (for --metrics-addr).
	Live func(target string, s LiveSample)
	// FlushEvery is how often a running step's 1-second series is written
	// to the store (0: DefaultFlushEvery).
	FlushEvery time.Duration
	// RepeatSeeds, when set, gives the seed of each repeat (1-based), as a
	// rerun reads them from the stored manifests; missing repeats get
	// spec.RepeatSeed of the experiment seed.
	RepeatSeeds map[int]uint64
	// Job, when set, is the queued job a worker runs this experiment for
	// (benchlab worker); every run's manifest records it.
	Job *store.QueueJob
	// OnExperiment, when set, is called with the experiment's ID as soon as
	// it is stored, before any run.
	OnExperiment func(id int64)
	// Part, when set, runs one part of an experiment split over a lab's
	// machines (queue --split): only the cells of its repeats, into the
	// experiment already stored under its ID. The noise model then learns
	// nothing: the part's caller has it learn once every part has run.
	Part *Part
}

// Part is one part of an experiment split over several machines.
type Part struct {
	// Experiment is the stored experiment the part's runs join.
	Experiment int64
	// Repeats are the repeats (1-based) the part runs, every target of each.
	Repeats []int
}

// ErrCellsFailed is wrapped by RunExperiment's error when some cells failed
// but the experiment went on.
var ErrCellsFailed = errors.New("some runs failed")

// RunExperiment runs every cell of a validated spec in the order of
// spec.Expand, storing each run and its results as they finish. It returns the
// experiment's ID, which is valid even when an error is returned, so partial
// results can be reported.
//
// Before each run it runs the canary probes (meter.Canary) in the work
// dir, and after it the CPU and memory probes again (meter.CanaryAfter),
// and stores their figures in the run's manifest; at the end, whatever
// the outcome, it teaches the host's noise model what the experiment's
// repeats showed (noise.Learn).
func RunExperiment(ctx context.Context, s spec.Spec, st *store.Store, opt ExperimentOptions) (int64, error) {
	id, err := runExperiment(ctx, s, st, opt)
	if id != 0 && opt.Part == nil {
		if lerr := noise.LearnStored(context.WithoutCancel(ctx), st, id); lerr != nil && err == nil {
			err = lerr
		}
	}
	return id, err
}

func runExperiment(ctx context.Context, s spec.Spec, st *store.Store, opt ExperimentOptions) (int64, error) {
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return 0, fmt.Errorf("unknown suite %q", s.Workload.Suite)
	}
	if s.Seed == 0 {
		s.Seed = rand.Uint64()>>1 | 1 // TOML integers are int64, and the seed is stored in the spec
	}
	x := &experimentRun{ctx: ctx, s: s, st: st, opt: opt, out: out, saveCtx: context.WithoutCancel(ctx)}
	if err := x.planRepeats(suite); err != nil {
		return 0, err
	}
	cleanup, err := x.prepareWorkDir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	if err := x.createExperiment(); err != nil {
		return 0, err
	}
	if s.ClientCPUs != "" {
		if err := meter.PinSelf(s.ClientCPUs); err != nil {
			return 0, fmt.Errorf("client_cpus: %w", err)
		}
	}
	x.host = meter.HostFacts()
	x.host.PerfCounters = meter.PerfCounters(ctx)
	x.cells = s.Expand()
	if opt.Part != nil {
		x.cells = slices.DeleteFunc(x.cells, func(c spec.Cell) bool { return !slices.Contains(opt.Part.Repeats, c.Repeat) })
	}
	if x.probeEvery, err = s.SpeedProbeEvery(); err != nil {
		return 0, err
	}
	var failed []string
	i := 0
	for _, group := range x.groups() {
		if ctx.Err() != nil {
			break
		}
		interrupted, f, err := x.runGroup(group, i)
		if err != nil {
			return x.exp.ID, err
		}
		i += len(group)
		failed = append(failed, f...)
		if interrupted {
			return x.exp.ID, ctx.Err()
		}
	}
	if ctx.Err() != nil {
		return x.exp.ID, ctx.Err()
	}
	if len(failed) > 0 {
		return x.exp.ID, fmt.Errorf("%w: %v", ErrCellsFailed, failed)
	}
	return x.exp.ID, nil
}

// experimentRun is one experiment as RunExperiment runs it.
type experimentRun struct {
	ctx context.Context
	s   spec.Spec
	st  *store.Store
	opt ExperimentOptions
	out io.Writer
	// saveCtx stores what was measured even once ctx is cancelled.
	saveCtx context.Context
	// seeds and stepsOf are each repeat's seed, shared by its targets, and
	// the steps planned with it.
	seeds   map[int]uint64
	stepsOf map[int][]workload.Step
	workDir string
	// claim lists the data dirs this run makes in a work dir the user
	// named; nil otherwise.
	claim      *stale.Claim
	exp        store.Experiment
	host       store.Host
	cells      []spec.Cell
	probeEvery time.Duration
}

// planRepeats gives each repeat its own seed, shared by its targets, and
// the steps planned with it (the load draws its data from the seed).
func (x *experimentRun) planRepeats(suite workload.Suite) error {
	x.seeds, x.stepsOf = map[int]uint64{}, map[int][]workload.Step{}
	for r := 1; r <= x.s.Workload.Repeats; r++ {
		seed, ok := x.opt.RepeatSeeds[r]
		if !ok || seed == 0 {
			seed = spec.RepeatSeed(x.s.Seed, r)
		}
		p := x.s.Params()
		p.Seed = seed
		steps, err := suite.Plan(p)
		if err != nil {
			return err
		}
		x.seeds[r], x.stepsOf[r] = seed, steps
	}
	return nil
}

// prepareWorkDir makes the work dir (a temporary one when the spec names
// none) and returns what to do once the experiment is over.
func (x *experimentRun) prepareWorkDir() (cleanup func(), err error) {
	x.workDir = x.s.WorkDir
	switch {
	case x.workDir == "":
		if x.workDir, err = os.MkdirTemp("", "benchlab-"); err != nil {
			return nil, fmt.Errorf("work dir: %w", err)
		}
		dir := x.workDir
		return func() { os.RemoveAll(dir) }, nil
	case !x.opt.TempWorkDir && !x.opt.KeepData:
		// A work dir the user named holds other things: the data dirs of a
		// benchlab killed hard in it go (those its claim lists), and this
		// run lists its own before making them.
		if err := os.MkdirAll(x.workDir, 0o755); err != nil {
			return nil, fmt.Errorf("work dir: %w", err)
		}
		if removed, err := stale.SweepClaims(x.workDir); err != nil {
			return nil, err
		} else if len(removed) > 0 {
			fmt.Fprintf(x.out, "== removed %d data dir(s) of benchlab processes that are gone: %s\n", len(removed),
				strings.Join(removed, ", "))
		}
		if x.claim, err = stale.ClaimIn(x.workDir); err != nil {
			return nil, err
		}
		return func() { x.claim.Release() }, nil
	}
	return func() {}, nil
}

// createExperiment stores the experiment with its spec.
func (x *experimentRun) createExperiment() error {
	s := x.s
	stored := s
	if x.opt.TempWorkDir {
		stored.WorkDir = ""
	}
	// Passwords in DSNs are never stored: a rerun of a DSN target takes its
	// password from the environment (PGPASSWORD) or a fresh spec file.
	stored.Targets = slices.Clone(s.Targets)
	for i := range stored.Targets {
		stored.Targets[i].DSN = server.RedactDSN(stored.Targets[i].DSN)
	}
	x.exp = store.Experiment{Name: s.Name, Base: s.Base, Preset: s.Preset, Spec: stored.TOML()}
	for _, t := range s.Targets {
		x.exp.Targets = append(x.exp.Targets, t.Name)
	}
	if x.opt.Part != nil {
		var err error
		if x.exp, err = x.st.Experiment(x.saveCtx, x.opt.Part.Experiment); err != nil {
			return fmt.Errorf("experiment %d of this part: %w", x.opt.Part.Experiment, err)
		}
	} else if err := x.st.CreateExperiment(x.saveCtx, &x.exp); err != nil {
		return err
	}
	if x.opt.OnExperiment != nil {
		x.opt.OnExperiment(x.exp.ID)
	}
	return nil
}

// groups are the cells that run together: an interleaved experiment runs
// each repeat's targets side by side (RunGroup); otherwise each cell is a
// group of its own.
func (x *experimentRun) groups() [][]spec.Cell {
	var groups [][]spec.Cell
	for _, c := range x.cells {
		if n := len(groups); x.s.Workload.Interleave.Duration > 0 && n > 0 && groups[n-1][0].Repeat == c.Repeat {
			groups[n-1] = append(groups[n-1], c)
		} else {
			groups = append(groups, []spec.Cell{c})
		}
	}
	return groups
}

// runGroup runs one group of cells, the first numbered first (from 0), and
// stores how each ended. It returns whether the run was interrupted and the
// cells that failed.
func (x *experimentRun) runGroup(group []spec.Cell, first int) (interrupted bool, failed []string, err error) {
	s, out := x.s, x.out
	for j, c := range group {
		i := first + j
		if x.opt.OnRun != nil {
			x.opt.OnRun(i, len(x.cells))
		}
		progress := ""
		if x.opt.Progress != nil {
			progress = x.opt.Progress()
		}
		with := ""
		if len(group) > 1 {
			with = fmt.Sprintf(", in turns of %s with %d other target(s)", s.Workload.Interleave.Duration, len(group)-1)
		}
		fmt.Fprintf(out, "== run %d/%d: target %s (%s), repeat %d of %d%s%s\n", i+1, len(x.cells), c.Target.Name,
			c.Target.Engine, c.Repeat, s.Workload.Repeats, with, progress)
	}
	if x.opt.WaitQuiet > 0 {
		waited, quiet := meter.WaitQuiet(x.ctx, meter.QuietBusyPct, x.opt.WaitQuiet)
		if !quiet {
			fmt.Fprintf(out, "== machine still busy after %s (CPU use >= %d%%); running anyway, the run is flagged\n",
				waited.Round(time.Second), meter.QuietBusyPct)
		}
	}
	canary := meter.Canary(x.ctx, x.workDir, meter.CanaryDuration)
	var probe meter.MachineProbe
	manifests, runs, runCells, err := x.startGroup(group, &canary, &probe)
	if err != nil {
		return false, nil, err
	}
	var outcomes []Outcome
	if len(group) == 1 {
		outcomes = []Outcome{RunCell(x.ctx, runCells[0], x.st)}
	} else {
		outcomes = RunGroup(x.ctx, runCells, x.st, s.Workload.Interleave.Duration)
	}
	after := probe.Snapshot("after")
	var canaryAfter *store.Canary
	if x.ctx.Err() == nil {
		a := meter.CanaryAfter(x.ctx, meter.CanaryDuration)
		canaryAfter = &a
	}
	for j, o := range outcomes {
		m, run := manifests[j], runs[j]
		m.MachineLoad = append(m.MachineLoad, after)
		m.CanaryAfter = canaryAfter
		m.Ended, m.Status = time.Now().UTC(), o.Status
		m.Engine.Version, m.Engine.Build, m.Engine.Settings = o.Info.Version, o.Info.Build, o.Info.Settings
		m.Engine.SettingUnits = o.Info.SettingUnits
		m.Engine.Client, m.Notes = o.Info.Client, append(o.Info.Notes, o.Notes...)
		run.Status, run.Ended, run.Version, run.Manifest = o.Status, m.Ended, o.Info.Version, m.JSON()
		if o.Err != nil {
			run.Error = o.Err.Error()
		}
		if err := x.st.FinishRun(x.saveCtx, &run); err != nil {
			return false, failed, err
		}
		switch o.Status {
		case store.StatusInterrupted:
			fmt.Fprintf(out, "== run %d interrupted; results measured so far are stored\n", first+j+1)
			interrupted = true
		case store.StatusFailed:
			fmt.Fprintf(out, "== run %d failed: %v\n", first+j+1, o.Err)
			failed = append(failed, fmt.Sprintf("%s repeat %d", group[j].Target.Name, group[j].Repeat))
		}
	}
	// A target refused as the spec's fault (a swept setting the server
	// does not have) ends the experiment: the other values would be
	// refused the same way.
	for _, o := range outcomes {
		if o.Status == store.StatusFailed && spec.IsInvalid(o.Err) {
			return interrupted, failed, o.Err
		}
	}
	return interrupted, failed, nil
}

// startGroup stores a run for each cell of group, with its manifest so far
// (canary the probe run before it), and makes the cells to run.
func (x *experimentRun) startGroup(group []spec.Cell, canary *store.Canary, probe *meter.MachineProbe) (
	[]store.Manifest, []store.Run, []Cell, error) {
	s, opt, out := x.s, x.opt, x.out
	manifests := make([]store.Manifest, len(group))
	runs := make([]store.Run, len(group))
	runCells := make([]Cell, len(group))
	for j, c := range group {
		m := store.Manifest{Benchlab: opt.Build, Experiment: s.Name, Spec: x.exp.Spec, Preset: s.Preset, PID: os.Getpid(),
			Repeat: c.Repeat, Seed: s.Seed, RepeatSeed: x.seeds[c.Repeat], Host: x.host, Canary: canary, Started: time.Now().UTC(),
			Job: opt.Job}
		m.Target.Name, m.Target.Engine, m.Target.Settings = c.Target.Name, c.Target.Engine, c.Target.TargetSettings()
		m.Target.Client = c.Target.Client
		m.DataDir = filepath.Join(x.workDir, fmt.Sprintf("%s-r%d", c.Target.Name, c.Repeat))
		if x.claim != nil {
			if err := x.claim.Add(filepath.Base(m.DataDir)); err != nil {
				return nil, nil, nil, err
			}
		}
		m.MachineLoad = append(m.MachineLoad, probe.Snapshot("before"))
		run := store.Run{ExperimentID: x.exp.ID, Target: c.Target.Name, Engine: c.Target.Engine, Repeat: c.Repeat,
			Started: m.Started, Manifest: m.JSON()}
		if opt.Job != nil {
			run.Job, run.Lease = opt.Job.ID, opt.Job.Lease
		}
		if err := x.st.CreateRun(x.saveCtx, &run); err != nil {
			return nil, nil, nil, err
		}
		driver, _ := engine.Lookup(c.Target.Engine)
		manifests[j], runs[j] = m, run
		runCells[j] = Cell{
			Target: c.Target.EngineTarget(s.Getenv),
			Driver: driver, Steps: x.stepsOf[c.Repeat], Threads: s.Workload.Threads, DataDir: m.DataDir, Keep: opt.KeepData,
			Seed: x.seeds[c.Repeat], RunID: run.ID, Log: out, Swept: c.Target.Swept,
			Options: Options{Out: out, ReportInterval: s.Workload.ReportInterval.Duration, Progress: opt.Progress,
				Rate: s.Workload.Rate, Events: s.Workload.Events, Percentile: s.Workload.Percentile, Live: liveOf(opt.Live, c.Target.Name),
				FlushEvery: opt.FlushEvery, ProfileHz: s.ProfileHz, SpeedProbeEvery: x.probeEvery,
				MaxErrorRate: cmp.Or(s.Workload.MaxErrorRate, spec.DefaultMaxErrorRate),
				OpTimeout:    cmp.Or(s.Workload.OpTimeout.Duration, spec.DefaultOpTimeout)},
		}
	}
	return manifests, runs, runCells, nil
}

// liveOf binds a cell's target name to the experiment's Live callback.
func liveOf(f func(string, LiveSample), target string) func(LiveSample) {
	if f == nil {
		return nil
	}
	return func(s LiveSample) { f(target, s) }
}
