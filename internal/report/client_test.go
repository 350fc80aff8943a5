package report

import (
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestTargetLineNamesClient: the header's target line names the client path
// a server target's workers used, and says nothing of one for a target
// whose manifest has none (an embedded engine, an older run).
func TestTargetLineNamesClient(t *testing.T) {
	run := store.Run{Target: "pg", Engine: "postgres", Version: "15.14"}
	var m store.Manifest
	if line := targetLine(run, m); strings.Contains(line, "client") {
		t.Errorf("no client in the manifest: %q", line)
	}
	m.Engine.Client = "driver"
	if line := targetLine(run, m); !strings.HasPrefix(line, "target pg: postgres 15.14; client driver") {
		t.Errorf("client driver: %q", line)
	}
}
