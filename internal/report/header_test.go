package report

import (
	"strings"
	"testing"

	"benchlab/internal/store"
	_ "benchlab/internal/workload/sysbench"
)

// TestHeaderDescribesSuite checks the header's workload line: a suite that
// does not describe itself gets the generic line (tpcc's own words are
// checked in its package, which imports this one).
func TestHeaderDescribesSuite(t *testing.T) {
	for suite, want := range map[string]string{
		"sysbench": "workload: suite sysbench (all tests), 1 table(s) of 1000000 rows, threads [1 4]",
	} {
		spec := "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"" + suite +
			"\"\nthreads = [1, 4]\nwrite_time = \"30s\"\nwarmup = \"5s\"\nrepeats = 3\n"
		d := &Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a"}, Spec: spec}}
		h := strings.Join(header(d), "\n")
		if !strings.Contains(h, want) {
			t.Errorf("%s: header\n%s\nlacks %q", suite, h, want)
		}
	}
}
