package report

import (
	"strings"
	"testing"
	"time"

	"benchlab/internal/store"
)

// TestLoadLine checks the notes give the load's rate and its CPU and IO per
// inserted row (docs/method.md 2.2 sb.prepare.met), worked by hand: 10,000 rows in
// 2 s with 0.05 s of client CPU and 4,096,000 bytes written are 5,000 rows/s,
// 5 us and 0.4 KB per row.
func TestLoadLine(t *testing.T) {
	eff := &store.Efficiency{Seconds: 2, ServerCPU: store.NotMeasured, ClientCPU: 0.05,
		ServerReadBytes: store.NotMeasured, ServerWriteBytes: store.NotMeasured, ClientWriteBytes: 4_096_000}
	d := &Data{
		Experiment: store.Experiment{ID: 1, Name: "l", Base: "a", Targets: []string{"a"}},
		Runs:       []store.Run{{ID: 1, Target: "a", Repeat: 1, Status: "ok"}},
		Results: map[int64][]store.Result{1: {
			{RunID: 1, Seq: 1, Test: "prepare", Family: "prepare", Warm: true, Action: true, Metric: "qps", Status: "ok",
				Started: time.Now(), Seconds: 2, Events: 1, Statements: 13, Rows: 10_000, Eff: eff},
		}},
	}
	line := loadLine(d)
	for _, want := range []string{"a repeat 1: 5000 rows/s", "cpu us server n/a client 5", "KB read 0", "KB written 0.4"} {
		if !strings.Contains(line, want) {
			t.Errorf("load line %q lacks %q", line, want)
		}
	}
}
