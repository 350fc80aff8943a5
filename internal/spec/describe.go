package spec

import (
	"fmt"

	"benchlab/internal/workload"
)

// Describe is the workload's line for a report's header: the suite's own
// words when it describes itself (workload.Describer), else the fields
// every suite shares. It lives with the spec, which knows the suites, so
// the report reads it without looking a suite up.
func (s Spec) Describe() string {
	w := s.Workload
	if suite, ok := workload.Lookup(w.Suite); ok {
		if d, ok := suite.(workload.Describer); ok {
			return d.Describe(s.Params())
		}
	}
	return fmt.Sprintf("suite %s (%s), %d table(s) of %d rows, threads %v, read %s, write %s, warm-up %s",
		w.Suite, workload.TestsLabel(s.Params()), w.Tables, w.TableSize, w.Threads, w.ReadTime.Duration,
		w.WriteTime.Duration, w.Warmup.Duration)
}

// PresetOverrides lists the shared sizes in which s departs from the named
// preset's, each as "table_size 1000000 (preset: 10000)": the file set
// them after the preset (a file's values win over the preset's). Empty
// when s is as the preset makes it, or no preset was applied.
func (s Spec) PresetOverrides(preset string) []string {
	if preset == "" {
		return nil
	}
	p := Default()
	if err := ApplyPreset(&p, preset); err != nil {
		return nil
	}
	w, pw := s.Workload, p.Workload
	var out []string
	if w.TableSize != pw.TableSize {
		out = append(out, fmt.Sprintf("table_size %d (preset: %d)", w.TableSize, pw.TableSize))
	}
	for _, d := range []struct {
		name      string
		got, want Duration
	}{{"read_time", w.ReadTime, pw.ReadTime}, {"write_time", w.WriteTime, pw.WriteTime}, {"warmup", w.Warmup, pw.Warmup}} {
		if d.got != d.want {
			out = append(out, fmt.Sprintf("%s %s (preset: %s)", d.name, d.got.Duration, d.want.Duration))
		}
	}
	return out
}
