package section_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the split this package exists for: suites build their
// sections without importing the renderer, the report finds them here
// without the suite registry, and this package imports nothing of the
// report.
func TestLayers(t *testing.T) {
	imports := func(pattern string) map[string][]string {
		out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pattern).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pattern, err)
		}
		m := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			m[f[0]] = f[1:]
		}
		return m
	}
	for pkg, imps := range imports("benchlab/internal/workload/...") {
		for _, imp := range imps {
			if imp == "benchlab/internal/report" {
				t.Errorf("%s imports the report renderer; suites give sections through package section", pkg)
			}
		}
	}
	for pkg, imps := range imports("benchlab/internal/report/...") {
		for _, imp := range imps {
			if imp == "benchlab/internal/workload" || strings.HasPrefix(imp, "benchlab/internal/workload/") {
				t.Errorf("%s imports %s; the report finds suites' sections through package section", pkg, imp)
			}
			if pkg == "benchlab/internal/report/section" && imp == "benchlab/internal/report" {
				t.Errorf("package section imports the report")
			}
		}
	}
}
