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
