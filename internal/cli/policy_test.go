package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestPolicyFlagsStored checks that --op-timeout and --max-error-rate
// reach the experiment's stored spec, so a rerun keeps the policy the run
// was judged by.
func TestPolicyFlagsStored(t *testing.T) {
	storeFile := filepath.Join(t.TempDir(), "r.db")
	code, out, stderr := run(t, Env{}, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "1000",
		"--time", "300ms", "--warmup", "0", "--report-interval", "0", "--op-timeout", "3s", "--max-error-rate", "0.25",
		"--store", storeFile)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exps, err := st.Experiments(context.Background())
	if err != nil || len(exps) != 1 {
		t.Fatalf("experiments %v, %v", exps, err)
	}
	for _, want := range []string{`op_timeout = "3s"`, "max_error_rate = 0.25"} {
		if !strings.Contains(exps[0].Spec, want) {
			t.Errorf("stored spec lacks %s:\n%s", want, exps[0].Spec)
		}
	}
}
