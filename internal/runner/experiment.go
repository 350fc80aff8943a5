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
	"benchlab/internal/metrics"
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
	// the machine's CPU use to drop below metrics.QuietBusyPct.
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
// Before each run it runs the canary probes (metrics.Canary) in the work
// dir, and after it the CPU and memory probes again (metrics.CanaryAfter),
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
	// Each repeat has its own seed, shared by its targets, and the steps
	// planned with it (the load draws its data from the seed).
	seeds := map[int]uint64{}
	stepsOf := map[int][]workload.Step{}
	for r := 1; r <= s.Workload.Repeats; r++ {
		seed, ok := opt.RepeatSeeds[r]
		if !ok || seed == 0 {
			seed = spec.RepeatSeed(s.Seed, r)
		}
		p := s.Params()
		p.Seed = seed
		steps, err := suite.Plan(p)
		if err != nil {
			return 0, err
		}
		seeds[r], stepsOf[r] = seed, steps
	}
	var err error
	workDir := s.WorkDir
	var claim *stale.Claim
	switch {
	case workDir == "":
		if workDir, err = os.MkdirTemp("", "benchlab-"); err != nil {
			return 0, fmt.Errorf("work dir: %w", err)
		}
		defer os.RemoveAll(workDir)
	case !opt.TempWorkDir && !opt.KeepData:
		// A work dir the user named holds other things: the data dirs of a
		// benchlab killed hard in it go (those its claim lists), and this
		// run lists its own before making them.
		if err := os.MkdirAll(workDir, 0o755); err != nil {
			return 0, fmt.Errorf("work dir: %w", err)
		}
		if removed, err := stale.SweepClaims(workDir); err != nil {
			return 0, err
		} else if len(removed) > 0 {
			fmt.Fprintf(out, "== removed %d data dir(s) of benchlab processes that are gone: %s\n", len(removed),
				strings.Join(removed, ", "))
		}
		if claim, err = stale.ClaimIn(workDir); err != nil {
			return 0, err
		}
		defer claim.Release()
	}
	saveCtx := context.WithoutCancel(ctx)
	stored := s
	if opt.TempWorkDir {
		stored.WorkDir = ""
	}
	// Passwords in DSNs are never stored: a rerun of a DSN target takes its
	// password from the environment (PGPASSWORD) or a fresh spec file.
	stored.Targets = slices.Clone(s.Targets)
	for i := range stored.Targets {
		stored.Targets[i].DSN = server.RedactDSN(stored.Targets[i].DSN)
	}
	exp := store.Experiment{Name: s.Name, Base: s.Base, Preset: s.Preset, Spec: stored.TOML()}
	for _, t := range s.Targets {
		exp.Targets = append(exp.Targets, t.Name)
	}
	if opt.Part != nil {
		if exp, err = st.Experiment(saveCtx, opt.Part.Experiment); err != nil {
			return 0, fmt.Errorf("experiment %d of this part: %w", opt.Part.Experiment, err)
		}
	} else if err := st.CreateExperiment(saveCtx, &exp); err != nil {
		return 0, err
	}
	if opt.OnExperiment != nil {
		opt.OnExperiment(exp.ID)
	}
	if s.ClientCPUs != "" {
		if err := metrics.PinSelf(s.ClientCPUs); err != nil {
			return 0, fmt.Errorf("client_cpus: %w", err)
		}
	}
	host := metrics.HostFacts()
	host.PerfCounters = metrics.PerfCounters(ctx)
	cells := s.Expand()
	if opt.Part != nil {
		cells = slices.DeleteFunc(cells, func(c spec.Cell) bool { return !slices.Contains(opt.Part.Repeats, c.Repeat) })
	}
	// An interleaved experiment runs each repeat's targets side by side
	// (RunGroup); otherwise each cell is a group of its own.
	probeEvery, err := s.SpeedProbeEvery()
	if err != nil {
		return 0, err
	}
	var groups [][]spec.Cell
	for _, c := range cells {
		if n := len(groups); s.Workload.Interleave.Duration > 0 && n > 0 && groups[n-1][0].Repeat == c.Repeat {
			groups[n-1] = append(groups[n-1], c)
		} else {
			groups = append(groups, []spec.Cell{c})
		}
	}
	var failed []string
	i := 0
	for _, group := range groups {
		if ctx.Err() != nil {
			break
		}
		first := i
		for _, c := range group {
			if opt.OnRun != nil {
				opt.OnRun(i, len(cells))
			}
			progress := ""
			if opt.Progress != nil {
				progress = opt.Progress()
			}
			with := ""
			if len(group) > 1 {
				with = fmt.Sprintf(", in turns of %s with %d other target(s)", s.Workload.Interleave.Duration, len(group)-1)
			}
			fmt.Fprintf(out, "== run %d/%d: target %s (%s), repeat %d of %d%s%s\n", i+1, len(cells), c.Target.Name,
				c.Target.Engine, c.Repeat, s.Workload.Repeats, with, progress)
			i++
		}
		if opt.WaitQuiet > 0 {
			waited, quiet := metrics.WaitQuiet(ctx, metrics.QuietBusyPct, opt.WaitQuiet)
			if !quiet {
				fmt.Fprintf(out, "== machine still busy after %s (CPU use >= %d%%); running anyway, the run is flagged\n",
					waited.Round(time.Second), metrics.QuietBusyPct)
			}
		}
		canary := metrics.Canary(ctx, workDir, metrics.CanaryDuration)
		var probe metrics.MachineProbe
		manifests := make([]store.Manifest, len(group))
		runs := make([]store.Run, len(group))
		runCells := make([]Cell, len(group))
		for j, c := range group {
			m := store.Manifest{Benchlab: opt.Build, Experiment: s.Name, Spec: exp.Spec, Preset: s.Preset, PID: os.Getpid(),
				Repeat: c.Repeat, Seed: s.Seed, RepeatSeed: seeds[c.Repeat], Host: host, Canary: &canary, Started: time.Now().UTC(),
				Job: opt.Job}
			m.Target.Name, m.Target.Engine, m.Target.Settings = c.Target.Name, c.Target.Engine, c.Target.TargetSettings()
			m.DataDir = filepath.Join(workDir, fmt.Sprintf("%s-r%d", c.Target.Name, c.Repeat))
			if claim != nil {
				if err := claim.Add(filepath.Base(m.DataDir)); err != nil {
					return exp.ID, err
				}
			}
			m.MachineLoad = append(m.MachineLoad, probe.Snapshot("before"))
			run := store.Run{ExperimentID: exp.ID, Target: c.Target.Name, Engine: c.Target.Engine, Repeat: c.Repeat,
				Started: m.Started, Manifest: m.JSON()}
			if err := st.CreateRun(saveCtx, &run); err != nil {
				return exp.ID, err
			}
			driver, _ := engine.Lookup(c.Target.Engine)
			manifests[j], runs[j] = m, run
			runCells[j] = Cell{
				Target: c.Target.EngineTarget(s.Getenv),
				Driver: driver, Steps: stepsOf[c.Repeat], Threads: s.Workload.Threads, DataDir: m.DataDir, Keep: opt.KeepData,
				Seed: seeds[c.Repeat], RunID: run.ID, Log: out,
				Options: Options{Out: out, ReportInterval: s.Workload.ReportInterval.Duration, Progress: opt.Progress,
					Rate: s.Workload.Rate, Events: s.Workload.Events, Percentile: s.Workload.Percentile, Live: liveOf(opt.Live, c.Target.Name),
					FlushEvery: opt.FlushEvery, ProfileHz: s.ProfileHz, SpeedProbeEvery: probeEvery,
					MaxErrorRate: cmp.Or(s.Workload.MaxErrorRate, spec.DefaultMaxErrorRate),
					OpTimeout:    cmp.Or(s.Workload.OpTimeout.Duration, spec.DefaultOpTimeout)},
			}
		}
		var outcomes []Outcome
		if len(group) == 1 {
			outcomes = []Outcome{RunCell(ctx, runCells[0], st)}
		} else {
			outcomes = RunGroup(ctx, runCells, st, s.Workload.Interleave.Duration)
		}
		after := probe.Snapshot("after")
		var canaryAfter *store.Canary
		if ctx.Err() == nil {
			a := metrics.CanaryAfter(ctx, metrics.CanaryDuration)
			canaryAfter = &a
		}
		interrupted := false
		for j, o := range outcomes {
			m, run := manifests[j], runs[j]
			m.MachineLoad = append(m.MachineLoad, after)
			m.CanaryAfter = canaryAfter
			m.Ended, m.Status = time.Now().UTC(), o.Status
			m.Engine.Version, m.Engine.Build, m.Engine.Settings = o.Info.Version, o.Info.Build, o.Info.Settings
			m.Notes = o.Notes
			run.Status, run.Ended, run.Version, run.Manifest = o.Status, m.Ended, o.Info.Version, m.JSON()
			if o.Err != nil {
				run.Error = o.Err.Error()
			}
			if err := st.FinishRun(saveCtx, &run); err != nil {
				return exp.ID, err
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
		if interrupted {
			return exp.ID, ctx.Err()
		}
	}
	if ctx.Err() != nil {
		return exp.ID, ctx.Err()
	}
	if len(failed) > 0 {
		return exp.ID, fmt.Errorf("%w: %v", ErrCellsFailed, failed)
	}
	return exp.ID, nil
}

// liveOf binds a cell's target name to the experiment's Live callback.
func liveOf(f func(string, LiveSample), target string) func(LiveSample) {
	if f == nil {
		return nil
	}
	return func(s LiveSample) { f(target, s) }
}
