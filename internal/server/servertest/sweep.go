package servertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/store"
)

// SweepUnknownSetting runs `benchlab run` on a spec sweeping setting, which
// the engine's server starts with but does not have (a variable it
// removed), over values: the server is read back after the first value's
// start and the run exits 2 with an error naming the sweep's target and
// setting, before anything is measured; the first run is stored failed
// with that error, no other value runs, and no server is left running.
func SweepUnknownSetting(t *testing.T, engine, setting string, values []string) {
	getenv, _ := Env(t)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "sweep.toml")
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"sweep-unknown\"\n\n[[target]]\nname = \"m\"\nengine = %q\n[target.sweep]\nsetting = %q\nvalues = [", engine, setting)
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", v)
	}
	fmt.Fprintf(&b, "]\n\n[workload]\nsuite = \"sysbench\"\ntests = [%q]\ntable_size = 2000\nthreads = [1]\n", Tests[0])
	b.WriteString("read_time = \"1s\"\nwrite_time = \"1s\"\nwarmup = \"100ms\"\npostwrite_wait = \"0s\"\nreport_interval = \"0s\"\n")
	if err := os.WriteFile(specFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	work, db := filepath.Join(dir, "work"), filepath.Join(dir, "results.db")
	var stdout, stderr bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: getenv}, []string{"run", specFile, "--store", db, "--workdir", work})
	t.Logf("benchlab run: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	NoProcs(t, work)
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d", code, cli.ExitUsage)
	}
	want := "target m: sweep.setting: " + setting + " = " + values[0] + " did not take effect: the server has no setting " + setting
	if !strings.Contains(strings.Join(strings.Fields(stderr.String()), " "), want) {
		t.Errorf("stderr %q; want %q", stderr.String(), want)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	exps, err := st.Experiments(ctx)
	if err != nil || len(exps) != 1 {
		t.Fatalf("experiments: %v %v", exps, err)
	}
	runs, err := st.Runs(ctx, exps[0].ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v (%v): want the first value's only", runs, err)
	}
	if runs[0].Status != store.StatusFailed || !strings.Contains(runs[0].Error, want) {
		t.Errorf("run: status %s, error %q; want failed with %q", runs[0].Status, runs[0].Error, want)
	}
	res, err := st.Results(ctx, runs[0].ID, false)
	if err != nil || len(res) != 0 {
		t.Errorf("results %d (%v): want none measured", len(res), err)
	}
}
