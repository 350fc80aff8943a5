package servertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/workload"
)

// Settled runs the first two steps a sysbench test selection plans on a
// fresh server of the engine: the load, then the cleanup that settles it
// before the first measured read (so repeats do not differ by when vacuum,
// hint bits or a dirty-page flush land in the measured seconds). fresh is called after the
// load, settled after the cleanup, each with a connection, to check the
// engine's state; a plan without the cleanup fails.
func Settled(t *testing.T, eng string, fresh, settled func(t *testing.T, c engine.Conn)) {
	t.Helper()
	getenv, _ := Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "settle", Engine: eng, Getenv: getenv})
	suite, _ := workload.Lookup("sysbench")
	steps, err := suite.Plan(workload.Params{Tests: []string{"point-query"}, Tables: 2, TableSize: 20000,
		Threads: []int{1}, Seed: 5, ReadTime: 1, WriteTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 3 || steps[0].Name != "prepare" || steps[1].Name != "postload" || steps[1].Action == nil {
		var names []string
		for _, s := range steps {
			names = append(names, s.Name)
		}
		t.Fatalf("plan %v: want prepare, then the postload cleanup, then the tests", names)
	}
	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := steps[0].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	fresh(t, conn)
	if _, err := steps[1].Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	settled(t, conn)
}

// RunUnprivileged runs through the command line a one-second point-query
// experiment "plain" on a target "plain" of engine eng reached by dsn, a
// user the test made with fewer privileges than benchlab's own, then
// writes its markdown report: a postload cleanup left partly undone must
// be said in both. It returns the run's output (stdout and stderr), the
// report, and the report's lines holding mark; a run or report that fails
// fails the test.
func RunUnprivileged(t *testing.T, eng, dsn string, getenv func(string) string, mark string) (out, report string, lines []string) {
	t.Helper()
	dir := t.TempDir()
	specFile := filepath.Join(dir, "plain.toml")
	spec := fmt.Sprintf(`name = "plain"
[[target]]
name = "plain"
engine = "%s"
dsn = "%s"
[workload]
suite = "sysbench"
tests = ["point-query"]
table_size = 5000
threads = [1]
read_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
`, eng, dsn)
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "results.db")
	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: getenv}
	if code := cli.Main(env, []string{"run", specFile, "--store", store, "--workdir", filepath.Join(dir, "work")}); code != cli.ExitOK {
		t.Fatalf("benchlab run: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out = stdout.String() + stderr.String()
	md := filepath.Join(dir, "report.md")
	if code := cli.Main(env, []string{"report", "--store", store, "-o", md}); code != cli.ExitOK {
		t.Fatalf("benchlab report: exit %d\n%s", code, stderr.String())
	}
	rep, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(rep), "\n") {
		if strings.Contains(l, mark) {
			lines = append(lines, l)
		}
	}
	return out, string(rep), lines
}
