package spec

import (
	"bytes"
	"fmt"
	"slices"

	"benchlab/internal/workload"

	"github.com/BurntSushi/toml"
)

// This file turns a valid spec into what runs: the suite's parameters, the
// cells (target x repeat) and the stored TOML.

// Params converts the workload section to what suites plan from.
func (s Spec) Params() workload.Params {
	w := s.Workload
	wait := w.PostwriteWait.Duration.Duration
	if w.PostwriteWait.Auto {
		wait = -1
	}
	return workload.Params{
		Tests: w.Tests, Tables: w.Tables, TableSize: w.TableSize,
		ReadTime: w.ReadTime.Duration, WriteTime: w.WriteTime.Duration,
		Warmup: w.Warmup.Duration, WarmTime: w.WarmTime.Duration, PostwriteWait: wait,
		Threads: slices.Clone(w.Threads), Seed: s.Seed, Unprepared: !w.Prepared,
		Options: w.Options(), Getenv: s.Getenv,
	}
}

// RepeatSeed is the seed of repeat r (1-based) of an experiment seeded
// with seed. Every repeat draws its own data and random choices, so the
// spread over repeats includes what varies with them, not only machine
// noise (a fixed seed would understate the spread a verdict must allow
// for); every target of a repeat gets the same seed, so
// the comparison within a repeat stays paired. It is SplitMix64's mix of
// seed and r, kept positive as an int64 like the experiment seed.
func RepeatSeed(seed uint64, r int) uint64 {
	z := seed + uint64(r)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return z>>1 | 1
}

// Cell is one run of the matrix: a target and a repeat number (1-based).
type Cell struct {
	Target Target
	Repeat int
}

// Expand lists the cells in execution order. Rounds are interleaved and
// rotated across targets (A B C, then B C A, ...) so that slow drift of the
// machine spreads evenly over the targets.
func (s Spec) Expand() []Cell {
	var cells []Cell
	n := len(s.Targets)
	for r := 0; r < s.Workload.Repeats; r++ {
		for i := 0; i < n; i++ {
			cells = append(cells, Cell{Target: s.Targets[(i+r)%n], Repeat: r + 1})
		}
	}
	return cells
}

// TOML renders the completed spec, as stored with every experiment: the
// shared fields, then the suite's options as [workload.<suite>].
func (s Spec) TOML() string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(s); err != nil {
		return fmt.Sprintf("# cannot encode spec: %v\n", err)
	}
	if o := s.Workload.Options(); o != nil {
		t, err := encodeOptions(s.Workload.Suite, o)
		if err != nil {
			return fmt.Sprintf("# cannot encode the %s suite's options: %v\n", s.Workload.Suite, err)
		}
		b.WriteString("\n")
		b.WriteString(t)
	}
	return b.String()
}
