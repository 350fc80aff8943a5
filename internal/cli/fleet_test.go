package cli

import (
	"strings"
	"testing"
)

// TestQueueRefusesRunOnlyFlags checks that queue refuses, before it looks
// at the store, the flags of run that a queued experiment cannot honour
// (report files, confirmation, a profile of benchlab, live metrics).
func TestQueueRefusesRunOnlyFlags(t *testing.T) {
	for _, args := range [][]string{{"-o", "r.html"}, {"--yes"}, {"--dry-run"}, {"--metrics-addr", "127.0.0.1:9464"}, {"--keep-data"}} {
		all := append([]string{"queue", "--engine", "sqlite", "--store", "postgres://nowhere.invalid/x"}, args...)
		code, _, errOut := run(t, Env{}, all...)
		if code != ExitUsage || !strings.Contains(errOut, "not for queue") {
			t.Errorf("queue %v: exit %d, %q; want 2, not for queue", args, code, errOut)
		}
	}
	if code, _, errOut := run(t, Env{}, "queue", "--engine", "sqlite", "--host", "a", "--host-kind", "b"); code != ExitUsage || !strings.Contains(errOut, "one of them") {
		t.Errorf("queue --host --host-kind: exit %d, %q; want 2", code, errOut)
	}
	if code, _, errOut := run(t, Env{}, "worker", "--store", "postgres://nowhere.invalid/x", "--queue", "Big Box"); code != ExitUsage || !strings.Contains(errOut, "--queue") {
		t.Errorf("worker --queue 'Big Box': exit %d, %q; want 2 naming --queue", code, errOut)
	}
}
