package spec_test

import (
	"path/filepath"
	"testing"

	_ "benchlab/internal/all" // every engine and suite the examples name
	"benchlab/internal/spec"
)

// TestExamplesValidate loads every spec in examples/: each must pass the
// same validation `benchlab run` applies, so the examples the docs point to run.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.toml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		if _, err := spec.Load(f, ""); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
