// Package history follows each cell of an experiment run again and again
// (a nightly spec, a lab's queued jobs, rerun) as a series over time: one
// point per experiment, in order of creation. It finds where the series
// shifted and judges its newest point against the points before it
// (analysis.JudgeHistory), with the host's noise history where the store
// holds one. It reads the results model (package results) and writes
// nothing.
package history

import (
	"context"
	"fmt"
	"math"
	"slices"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/noise"
	"benchlab/internal/results"
	"benchlab/internal/store"
)

// Options tune Build.
type Options struct {
	// Verdict are the newest point's verdict settings (alpha, minimum
	// effect); their Correction is applied over the cells.
	Verdict analysis.CompareOptions
	// Change tunes the change-point search (Otava's defaults).
	Change analysis.ChangeOptions
	// Effect is the step the history should be able to find (the gate's
	// threshold), for the points-needed figure.
	Effect float64
	// ByVersion makes a point of each engine version instead of each
	// experiment: every run of one version, in the order the versions
	// first ran.
	ByVersion bool
}

// Point is one experiment of a cell's series (or one engine version's
// runs, Options.ByVersion).
type Point struct {
	// Experiment is the point's experiment (by version: the newest that ran
	// the version).
	Experiment *results.Experiment
	// Versions are the engine versions its runs report, once each.
	Versions []string
	// Runs are the cell's measured results of the experiment, one per run,
	// without those that stalled.
	Runs []store.Result
	// Stalled counts the point's runs that completed no operation
	// (store.Result.Stalled): no rate of the engine, so they are no part of
	// the point's value, its change points or its verdict. A point whose
	// runs all stalled has no value; the series carries its neighbour's
	// over it, so it makes no change point.
	Stalled int
}

// AllStalled says every run of the point completed no operation.
func (p Point) AllStalled() bool { return p.Stalled > 0 && len(p.Runs) == 0 }

// Series is one cell's history: one target's test at a thread count.
type Series struct {
	Target string
	Cell   results.Cell
	Metric metric.Metric
	Points []Point
	// Judged is what analysis.JudgeHistory found, the newest verdict
	// decided again over all the series (Options.Verdict.Correction).
	Judged analysis.History
	// NotJudged says the newest point's runs all stalled: its verdict is
	// unknown and left out of the correction and of a gate, which reports it
	// as not judged.
	NotJudged bool
}

// Newest is the newest point.
func (s Series) Newest() Point { return s.Points[len(s.Points)-1] }

// Build makes a series of every (target, cell) of set with its points in
// the order of their experiments, and judges each. st supplies the noise
// history (read only).
func Build(ctx context.Context, st *store.Store, set *results.Set, opt Options) ([]Series, error) {
	type key struct {
		target string
		cell   results.Cell
	}
	var order []key
	byKey := map[key]*Series{}
	for _, e := range set.Experiments {
		for _, r := range e.Runs {
			for _, res := range r.Results {
				k := key{r.Target, results.Cell{Suite: e.Suite, Test: res.Test, Threads: res.Threads}}
				s := byKey[k]
				if s == nil {
					s = &Series{Target: r.Target, Cell: k.cell, Metric: metric.Of(res.Metric)}
					byKey[k] = s
					order = append(order, k)
				}
				v := r.Engine + " " + r.Version
				i := len(s.Points) - 1
				if opt.ByVersion {
					i = slices.IndexFunc(s.Points, func(p Point) bool { return p.Versions[0] == v })
				} else if i >= 0 && s.Points[i].Experiment != e {
					i = -1
				}
				if i < 0 {
					s.Points = append(s.Points, Point{Experiment: e, Versions: []string{v}})
					i = len(s.Points) - 1
				}
				p := &s.Points[i]
				p.Experiment = e
				if res.Stalled() {
					p.Stalled++
				} else {
					p.Runs = append(p.Runs, res)
				}
				if !slices.Contains(p.Versions, v) {
					p.Versions = append(p.Versions, v)
				}
			}
		}
	}
	runs := map[int64]store.Run{}
	for _, r := range set.Runs() {
		runs[r.ID] = r.Run
	}
	models := map[int64]*noise.Model{}
	var out []Series
	var vs []analysis.Verdict
	var judged []int // the series with a newest point to judge
	for _, k := range order {
		s := byKey[k]
		newest := s.Newest().Experiment
		m, ok := models[newest.ID]
		if !ok {
			var nruns []store.Run
			res := map[int64][]store.Result{}
			for _, r := range newest.Runs {
				nruns = append(nruns, r.Run)
				res[r.ID] = r.Results
			}
			var err error
			if m, err = noise.Load(ctx, st, newest.Experiment, nruns, res); err != nil {
				return nil, fmt.Errorf("read the noise history of experiment %d: %w", newest.ID, err)
			}
			models[newest.ID] = m
		}
		engine := ""
		for _, r := range newest.Runs {
			if r.Target == s.Target {
				engine = r.Engine // the series' own target's, not the experiment's first
				break
			}
		}
		s.Judged = analysis.JudgeHistory(pointRuns(s, m, runs), s.Metric.Direction, m.Prior([]string{engine}, k.cell.Test, k.cell.Threads),
			analysis.HistoryOptions{Noise: analysis.NoiseOptions{CompareOptions: opt.Verdict}, Change: opt.Change, Effect: opt.Effect})
		switch {
		case len(s.Points) > 1 && s.Newest().AllStalled():
			s.NotJudged = true
			nan := math.NaN()
			s.Judged.Newest = analysis.Verdict{Outcome: analysis.Unknown, Ratio: nan, RatioLo: nan, RatioHi: nan, P: nan,
				PAdjusted: nan, MedianBase: nan, MedianOther: nan, Direction: s.Metric.Direction,
				Evidence: analysis.Evidence(fmt.Sprintf("not judged: every run of the newest point (%d) completed no operation (stalled)",
					s.Newest().Stalled))}
		case len(s.Points) > 1:
			judged = append(judged, len(out))
			vs = append(vs, s.Judged.Newest)
		}
		out = append(out, *s)
	}
	for i, v := range analysis.CorrectVerdicts(vs, opt.Verdict) {
		out[judged[i]].Judged.Newest = v
	}
	return out, nil
}

// pointRuns is each point's runs as the verdict sees them: throughput
// and within-run variance, a run on a slow host (its canaries) or on a
// disturbed machine flagged, as compare flags them.
func pointRuns(s *Series, m *noise.Model, runs map[int64]store.Run) [][]analysis.Run {
	var all [][]store.Result
	for _, p := range s.Points {
		all = append(all, p.Runs)
	}
	speed := noise.SpeedMedian(all...)
	out := make([][]analysis.Run, len(s.Points))
	for i, p := range s.Points {
		for _, res := range p.Runs {
			a := noise.RunOf(res)
			a.HostSlow = m.HostSlow(runs[res.RunID])
			a.Disturbed = noise.Disturbed(res, speed)
			out[i] = append(out[i], a)
		}
	}
	return out
}
