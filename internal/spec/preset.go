package spec

import (
	"maps"
	"slices"
	"strings"
	"time"

	"benchlab/internal/workload"
)

// This file is the named presets a spec or run --preset starts from.

// Presets are the shared named sizes between a quick look and the faithful
// defaults; suites add their own (workload.Presetter, see AllPresets).
var Presets = map[string]string{
	"smoke":    "a quick check that everything runs: 10k rows, 1 s tests; not for conclusions",
	"credible": "a run worth reading: 1M rows, 60 s tests, 10 s warm-ups, 30 s postwrite wait",
}

// AllPresets returns the shared presets and every suite's own, by name.
func AllPresets() map[string]string {
	out := maps.Clone(Presets)
	for _, n := range workload.Names() {
		s, _ := workload.Lookup(n)
		if p, ok := s.(workload.Presetter); ok {
			maps.Copy(out, p.Presets())
		}
	}
	return out
}

// PresetNames lists the presets: the shared ones, smallest first, then the
// suites' own by name.
func PresetNames() []string {
	names := []string{"smoke", "credible"}
	for _, n := range slices.Sorted(maps.Keys(AllPresets())) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// ApplyPreset overwrites s's workload sizes, shared and every suite's, with
// the named preset.
func ApplyPreset(s *Spec, name string) error {
	w := &s.Workload
	switch name {
	case "":
	case "smoke":
		w.TableSize = 10_000
		w.ReadTime, w.WriteTime = Duration{Duration: time.Second}, Duration{Duration: time.Second}
		w.Warmup, w.WarmTime = Duration{Duration: 300 * time.Millisecond}, Duration{Duration: time.Second}
		w.PostwriteWait = AutoDuration{}
	case "credible":
		w.TableSize = 1_000_000
		w.ReadTime, w.WriteTime = Duration{Duration: 60 * time.Second}, Duration{Duration: 60 * time.Second}
		w.Warmup, w.WarmTime = Duration{Duration: 10 * time.Second}, Duration{Duration: 10 * time.Second}
		w.PostwriteWait = AutoDuration{Duration: Duration{Duration: 30 * time.Second}}
	default:
		if _, ok := AllPresets()[name]; !ok {
			return errf("preset", "unknown preset %q; want %s (or none for the faithful defaults)", name,
				strings.Join(PresetNames(), ", "))
		}
	}
	if name != "" {
		w.Options() // the suite's options exist even when built without Default
		for _, o := range w.options {
			o.Preset(name)
		}
	}
	s.Preset = name
	return nil
}
