package cli

import (
	"strings"
	"testing"
	"time"

	"benchlab/internal/spec"
)

// TestScheduleTargets: a spec that leaves workload.interleave unset is
// interleaved when it is free and run one target after the other when
// not, and the plan's sentence says which and why; an explicit value is
// kept.
func TestScheduleTargets(t *testing.T) {
	const sqlite2 = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n"
	pg := func(name, memory string) string {
		s := "[[target]]\nname = \"" + name + "\"\nengine = \"postgres\"\nversion = \"16.4\"\n"
		if memory != "" {
			s += "memory = \"" + memory + "\"\n"
		}
		return s
	}
	const steps = "[workload]\ntests = [\"point-query\"]\nread_time = \"1s\"\nwrite_time = \"1s\"\n"
	for _, c := range []struct {
		name, src string
		avail     int64
		turn      time.Duration
		want      string
	}{
		{"embedded", sqlite2 + steps, 8 << 30, DefaultTurn, "interleaved by default, in turns of 20ms"},
		{"explicit off", sqlite2 + steps + "interleave = \"off\"\n", 8 << 30, 0, `one after the other (workload.interleave = "off")`},
		{"explicit turn", sqlite2 + steps + "interleave = \"50ms\"\n", 8 << 30, 50 * time.Millisecond, "in turns of 50ms (workload.interleave)"},
		// Each target's profile keeps the samples of its own turns.
		{"profile", "profile_hz = 99\n" + sqlite2 + steps, 8 << 30, DefaultTurn, "interleaved by default, in turns of 20ms"},
		{"short tests", sqlite2 + "[workload]\ntests = [\"point-query\"]\nread_time = \"30ms\"\nwrite_time = \"30ms\"\n", 8 << 30, 0,
			"cannot take turns of 20ms: 20ms is more than half the shortest test time (30ms)"},
		{"rate", sqlite2 + steps + "rate = 100.0\n", 8 << 30, 0, "cannot take turns of 20ms: cannot interleave paced"},
		{"servers without a memory limit", pg("p1", "") + pg("p2", "1GB") + steps, 8 << 30, 0,
			"server target(s) p1 have no memory limit"},
		{"servers that fit", pg("p1", "1GB") + pg("p2", "1GB") + steps, 8 << 30, DefaultTurn, "interleaved by default"},
		{"one database by dsn", "[[target]]\nname = \"d1\"\nengine = \"postgres\"\ndsn = \"postgres://u@127.0.0.1:5432/x\"\n" +
			"[[target]]\nname = \"d2\"\nengine = \"postgres\"\ndsn = \"postgres://v@127.0.0.1/x\"\n" + steps, 8 << 30, 0,
			"targets d1 and d2 reach one database (postgres 127.0.0.1:5432/x) by dsn"},
		{"servers that do not fit", pg("p1", "3GB") + pg("p2", "3GB") + steps, 4 << 30, 0,
			"side by side the targets may use 6.0 GiB and 4.0 GiB is available"},
	} {
		s, err := spec.Parse([]byte("name = \"s\"\n"+c.src), c.name, "")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		line := scheduleTargets(&s, c.avail)
		if !strings.Contains(line, c.want) || s.Workload.Interleave.Duration != c.turn || s.Workload.Interleave.Unset() {
			t.Errorf("%s: turn %v (%+v), line %q; want %v and %q", c.name, s.Workload.Interleave.Duration, s.Workload.Interleave,
				line, c.turn, c.want)
		}
	}
	// One target: nothing to schedule, nothing said, nothing stored.
	s, err := spec.Parse([]byte("name = \"s\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"+steps), "one", "")
	if err != nil {
		t.Fatal(err)
	}
	if line := scheduleTargets(&s, 8<<30); line != "" || !s.Workload.Interleave.Unset() {
		t.Errorf("one target: %q %+v", line, s.Workload.Interleave)
	}
}

// TestQuickstartOneAfterTheOther: the quickstart's single repeat draws no
// verdict, so it runs its targets one after the other and keeps every
// figure.
func TestQuickstartOneAfterTheOther(t *testing.T) {
	s, err := spec.Parse([]byte(quickstartSpec), "quickstart spec", "")
	if err == nil {
		err = s.Validate()
	}
	if err != nil || !s.Workload.Interleave.Off {
		t.Errorf("quickstart spec: %v, interleave %+v; want off", err, s.Workload.Interleave)
	}
	if line := scheduleTargets(&s, 8<<30); !strings.Contains(line, "one after the other") {
		t.Errorf("quickstart's plan line %q", line)
	}
}
