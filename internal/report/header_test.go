package report

import (
	"strings"
	"testing"

	"benchlab/internal/store"
	_ "benchlab/internal/workload/sysbench"
	_ "benchlab/internal/workload/tpcc"
)

// TestHeaderDescribesSuite checks the header's workload line: a suite that
// describes itself (tpcc) gets its own words, others the generic line.
func TestHeaderDescribesSuite(t *testing.T) {
	for suite, want := range map[string]string{
		"tpcc":     "workload: TPC-C, 2 warehouse(s), terminals [1 4], 30s measured each after a 5s warm-up, no think time, repeats 3",
		"sysbench": "workload: suite sysbench (all tests), 1 table(s) of 1000000 rows, threads [1 4]",
	} {
		spec := "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"" + suite +
			"\"\nwarehouses = 2\nthreads = [1, 4]\nwrite_time = \"30s\"\nwarmup = \"5s\"\nrepeats = 3\n"
		d := &Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a"}, Spec: spec}}
		h := strings.Join(header(d), "\n")
		if !strings.Contains(h, want) {
			t.Errorf("%s: header\n%s\nlacks %q", suite, h, want)
		}
	}
}
