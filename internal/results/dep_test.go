package results_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the read model and what is built on it in their layers:
// results reads the store and hands data on, so it imports no renderer and
// no command; history and across build tables for the renderers and are
// called by commands, never the reverse; analysis stays pure statistics.
func TestLayers(t *testing.T) {
	go_, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for pkg, banned := range map[string][]string{
		"benchlab/internal/results":  {"benchlab/internal/report", "benchlab/internal/cli", "benchlab/internal/noise"},
		"benchlab/internal/history":  {"benchlab/internal/cli"},
		"benchlab/internal/across":   {"benchlab/internal/cli", "benchlab/internal/history"},
		"benchlab/internal/analysis": {"benchlab/internal/store", "benchlab/internal/report", "benchlab/internal/results"},
	} {
		out, err := exec.Command(go_, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, b := range banned {
			for _, d := range deps {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
		}
	}
}
