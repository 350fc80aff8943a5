package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/fleet"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
)

// splitSpec is fleetSpec with two targets (a base and a variant of it) and
// three repeats.
const splitSpec = `name = "split"
base = "lite"
[[target]]
name = "lite"
engine = "sqlite"
[[target]]
name = "lite-off"
engine = "sqlite"
[target.settings]
synchronous = "off"
[workload]
suite = "sysbench"
tests = ["point-query"]
threads = [1]
read_time = "2s"
write_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
table_size = 1000
repeats = 3
`

// TestFleetSplit queues a spec of 2 targets x 3 repeats split by repeat and
// runs it with 3 workers of one class: the 3 jobs fill one experiment
// stored at queue time, each with both targets of its repeat, and the part
// that ends last prints the report of the whole experiment, which report
// prints as well. The first part pins the experiment to its worker's class:
// a worker of another class, with --once, takes no part and exits.
func TestFleetSplit(t *testing.T) {
	t.Parallel()
	dsn := labStore(t)
	dir := t.TempDir()
	sp := filepath.Join(dir, "split.toml")
	if err := os.WriteFile(sp, []byte(splitSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "queue", sp, "--store", dsn, "--split", "target"); code != cli.ExitUsage || !strings.Contains(errOut, "--split") {
		t.Errorf("--split target: exit %d %q; want 2 naming the flag", code, errOut)
	}
	code, out, errOut := run(t, "queue", sp, "--store", dsn, "--split", "repeat")
	if code != 0 {
		t.Fatalf("queue --split repeat: exit %d, %s", code, errOut)
	}
	var ids []int64
	for _, f := range strings.Fields(out) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("queue --split printed %q, want job IDs", out)
		}
		ids = append(ids, id)
	}
	if len(ids) != 3 {
		t.Fatalf("queue --split repeat queued %d jobs, want 3 (one per repeat)", len(ids))
	}
	tmp := t.TempDir()
	worker := func(args ...string) *exec.Cmd {
		c := childCmd([]string{"TMPDIR=" + tmp}, append([]string{"worker", "--store", dsn}, args...)...)
		c.Stdout, c.Stderr = new(bytes.Buffer), nil
		c.Stderr = c.Stdout
		return c
	}
	output := func(c *exec.Cmd) string { return c.Stdout.(*bytes.Buffer).String() }
	// The first part pins the experiment to machines of class "small".
	first := worker("--class", "small", "--max-jobs", "1")
	if err := first.Run(); err != nil {
		t.Fatalf("first worker: %v\n%s", err, output(first))
	}
	// A machine of another class takes none of the other parts.
	other := worker("--class", "big", "--once")
	if err := other.Run(); err != nil || strings.Contains(output(other), "taken by") {
		t.Errorf("a worker of class big: %v; want it to take no part of an experiment pinned to small\n%s", err, output(other))
	}
	cmds := []*exec.Cmd{first, worker("--class", "small", "--once"), worker("--class", "small", "--once")}
	for _, c := range cmds[1:] {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	reports := 0
	for i, c := range cmds {
		if i > 0 {
			if err := c.Wait(); err != nil {
				t.Errorf("worker %d: %v\n%s", i, err, output(c))
			}
		}
		reports += strings.Count(output(c), "every part has run: the report")
		t.Logf("worker %d ran %d part(s)", i, strings.Count(output(c), "taken by"))
	}
	if reports != 1 {
		t.Errorf("%d workers printed the whole experiment's report, want 1 (the last part's)", reports)
	}
	jobs := listJobs(t, dsn)
	var exp int64
	for _, id := range ids {
		j := jobs[id]
		if j.State != "completed" || j.Args.Part == nil {
			t.Fatalf("job %d: %+v; want a completed part", id, j)
		}
		if exp == 0 {
			exp = j.Args.Part.Experiment
		}
		if j.Args.Part.Experiment != exp || j.Output.Experiment != exp {
			t.Errorf("job %d: part of experiment %d, ran into %d; want all in %d", id, j.Args.Part.Experiment, j.Output.Experiment, exp)
		}
	}
	st := storetest.Open(t, dsn)
	exps, err := st.Experiments(context.Background())
	if err != nil || len(exps) != 1 {
		t.Fatalf("the store holds %d experiments (%v), want the split one alone", len(exps), err)
	}
	runs, err := st.Runs(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]bool{}
	for _, r := range runs {
		if r.Status != store.StatusOK {
			t.Errorf("run %d (%s repeat %d): %s %s", r.ID, r.Target, r.Repeat, r.Status, r.Error)
		}
		cells[fmt.Sprintf("%s/%d", r.Target, r.Repeat)] = true
	}
	if len(runs) != 6 || len(cells) != 6 {
		t.Errorf("experiment %d has %d runs over %d cells, want 6 (2 targets x 3 repeats)", exp, len(runs), len(cells))
	}
	code, rep, errOut := run(t, "report", "--store", dsn, "--experiment", strconv.FormatInt(exp, 10))
	if code != 0 || !strings.Contains(rep, "lite-off") || !strings.Contains(rep, "3 repeats") {
		t.Errorf("report of the split experiment: exit %d %s\n%s", code, errOut, rep)
	}
	checkEmpty(t, tmp)
	// A part run again by a later attempt (its first attempt's runs
	// superseded) counts once: the count stays at 3.
	q, err := fleet.Open(context.Background(), dsn, "lab")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if n, err := q.PartDone(context.Background(), exp, ids[0]); err != nil || n != 3 {
		t.Errorf("part done again: count %d (%v), want 3", n, err)
	}
}
