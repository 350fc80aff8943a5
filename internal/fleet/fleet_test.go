package fleet

import (
	"strings"
	"testing"
	"time"
)

// TestPlacement checks the queue each placement goes to and the names a
// queue may be made of: River refuses queue names other than lower-case
// letters and digits with single separators, so a kind or host that would
// make one is refused before anything is queued.
func TestPlacement(t *testing.T) {
	for _, c := range []struct {
		p    Placement
		want string
	}{
		{Placement{}, "any"},
		{Placement{HostKind: "nvme-16c"}, "kind-nvme-16c"},
		{Placement{Host: "Bench3.lab.example"}, "host-bench3_lab_example"},
	} {
		if got := c.p.Queue(); got != c.want {
			t.Errorf("%+v: queue %q, want %q", c.p, got, c.want)
		}
		if !queueName.MatchString(c.p.Queue()) {
			t.Errorf("%+v: queue %q is not a River queue name", c.p, c.p.Queue())
		}
	}
	for _, k := range []string{"nvme-16c", "arm64", "big_box"} {
		if err := CheckKind(k); err != nil {
			t.Errorf("kind %q: %v", k, err)
		}
	}
	for _, k := range []string{"", "Big", "big box", "a--b", "-a", "a.b", string(make([]byte, 60))} {
		if err := CheckKind(k); err == nil {
			t.Errorf("kind %q accepted", k)
		}
	}
	for _, h := range []string{"bench3", "Bench3.lab.example", "vm-4803"} {
		if err := CheckHost(h); err != nil {
			t.Errorf("host %q: %v", h, err)
		}
	}
	for _, h := range []string{"", "a b", "a..b", "under_score_"} {
		if err := CheckHost(h); err == nil {
			t.Errorf("host %q accepted", h)
		}
	}
}

// TestTimeout checks a job's timeout: twice its plan and 15 minutes, never
// under an hour, unless queue's --timeout gave one.
func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		planned float64
		want    time.Duration
	}{
		{0, time.Hour},
		{600, time.Hour},
		{3600, 2*time.Hour + 15*time.Minute},
	} {
		if got := (Args{PlannedSeconds: c.planned}).Timeout(); got != c.want {
			t.Errorf("planned %.0f s: timeout %s, want %s", c.planned, got, c.want)
		}
	}
	if got := (Args{PlannedSeconds: 3600, TimeoutSeconds: 90}).Timeout(); got != 90*time.Second {
		t.Errorf("queue --timeout 90s: timeout %s, want 1m30s", got)
	}
}

// TestQueueLogLines: River's warnings and errors reach the worker's log as
// benchlab's own one-line messages; its informational lines do not.
func TestQueueLogLines(t *testing.T) {
	var b strings.Builder
	l := quietLogger(&b).With("client", "w1")
	l.Info("elected leader")
	l.Warn("job rescued", "job_id", 7)
	l.Error("fetch failed", "error", "connection refused")
	want := "benchlab worker: queue: job rescued (client=w1, job_id=7)\n" +
		"benchlab worker: queue: error: fetch failed (client=w1, error=connection refused)\n"
	if b.String() != want {
		t.Errorf("log lines:\n%s\nwant:\n%s", b.String(), want)
	}
}
